//! `arena check`: load a script without playing and report every problem.

use std::path::PathBuf;

use arena::lua::{EvalScripts, Generation};

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
            format!(
                "{}: ok (evaluation: {} task(s), {} player(s))",
                script.display(),
                e.spec.tasks.len(),
                e.spec.players.len()
            )
        })
    } else {
        Generation::load(script, 1).map(|g| {
            format!(
                "{}: ok ({} players, format {}, scripts {})",
                script.display(),
                g.spec.players.len(),
                g.format_module,
                g.hash
            )
        })
    };
    match result {
        Ok(summary) => {
            println!("{summary}");
            0
        }
        Err(errors) => {
            eprintln!("{errors}");
            2
        }
    }
}
