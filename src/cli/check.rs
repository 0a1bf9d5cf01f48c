//! `arena check`: load a script without playing and report every problem.

use std::path::PathBuf;

use arena::{
    lua::{EvalScripts, Generation},
    tournament::spec::{KeyRoute, PlayerSpec},
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The tournament script.
    script: PathBuf,
}

pub(super) fn run(args: &Args) -> u8 {
    let script = &args.script;
    // An evaluation script (`arena.evaluation{}`) is checked as one; anything else as a tournament.
    let is_evaluation = std::fs::read_to_string(script)
        .map(|text| text.contains("arena.evaluation"))
        .unwrap_or(false);
    let result = if is_evaluation {
        EvalScripts::load(script).map(|e| {
            let summary = format!(
                "{}: ok (evaluation: {} task(s), {} player(s))",
                script.display(),
                e.spec.tasks.len(),
                e.spec.players.len()
            );
            (summary, routes(&e.spec.players, &e.spec.defined_at))
        })
    } else {
        Generation::load(script, 1).map(|g| {
            let summary = format!(
                "{}: ok ({} players, format {}, scripts {})",
                script.display(),
                g.spec.players.len(),
                g.format_module,
                g.hash
            );
            (summary, routes(&g.spec.players, &g.spec.defined_at))
        })
    };
    match result {
        Ok((summary, routes)) => {
            println!("{summary}");
            // Where each key would go, so that a script cannot send a secret somewhere unseen. An
            // unset key only warns: scripts are often checked on a machine without the keys, and
            // `arena run` refuses to start without them anyway.
            for (at, route) in routes {
                println!("  {route}");
                if !route.is_set() {
                    eprintln!(
                        "warning: {at}: `{}` is not set here; `arena run` refuses to start without it",
                        route.variable
                    );
                }
            }
            0
        }
        Err(errors) => {
            eprintln!("{errors}");
            2
        }
    }
}

/// Every key route of `players`, with the `file:line` of its player.
fn routes(
    players: &[PlayerSpec],
    defined_at: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, KeyRoute)> {
    players
        .iter()
        .flat_map(|p| {
            let at = defined_at.get(p.name()).cloned().unwrap_or_default();
            p.key_routes().into_iter().map(move |r| (at.clone(), r))
        })
        .collect()
}
