//! `arena check`: load a script without playing and report every problem.

use std::path::PathBuf;

use arena::{
    lua::{EvalScripts, Generation},
    tournament::{
        preflight,
        rules::script_dir,
        spec::{KeyRoute, PlayerSpec},
    },
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The tournament script.
    script: PathBuf,
    /// Also ask each model endpoint once for its list of models, and check that every player's
    /// model is on it.
    #[arg(long)]
    online: bool,
}

pub(super) async fn run(args: &Args) -> u8 {
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
        match Generation::load(script, 1) {
            Ok(g) => {
                // What the script names is opened as a run would open it.
                let mut findings = preflight::files(&g.spec, script_dir(script));
                findings.extend(preflight::engines(&g.spec).await);
                if args.online {
                    findings.extend(preflight::endpoints(&g.spec).await);
                }
                if findings.is_empty() {
                    let summary = format!(
                        "{}: ok ({} players, format {}, scripts {})",
                        script.display(),
                        g.spec.players.len(),
                        g.format_module,
                        g.hash
                    );
                    Ok((summary, routes(&g.spec.players, &g.spec.defined_at)))
                } else {
                    let mut lines: Vec<(String, u32, String)> = findings
                        .into_iter()
                        .map(|f| {
                            let at = g.field_at(f.player.as_deref(), &f.path);
                            let prefix = f
                                .player
                                .map(|p| format!("player `{p}`: "))
                                .unwrap_or_default();
                            let (file, line) = at.rsplit_once(':').unwrap_or((&at, "0"));
                            let line = line.parse().unwrap_or(0);
                            (
                                file.to_string(),
                                line,
                                format!("{at}: {prefix}{}", f.message),
                            )
                        })
                        .collect();
                    lines.sort();
                    for (_, _, message) in lines {
                        eprintln!("{message}");
                    }
                    return 2;
                }
            }
            Err(e) => Err(e),
        }
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
