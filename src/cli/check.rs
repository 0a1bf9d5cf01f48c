//! `arena check`: load a script without playing and report every problem.

use std::path::{Path, PathBuf};

use arena::{
    lua::{EvalScripts, Generation, Unloaded, UnloadedEval},
    spec::{KeyRoute, PlayerSpec, TournamentSpec},
    tournament::{preflight, rules::script_dir},
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The tournament script.
    script: PathBuf,
    /// Also ask each model endpoint once for its list of models, and check that every player's
    /// model is on it.
    #[arg(long)]
    online: bool,
    /// Also check that every model player of an evaluation script can send its calls through
    /// a batch API (`arena eval --batch`); games are always played one call at a time.
    #[arg(long)]
    batch: bool,
}

pub(super) async fn run(args: &Args) -> u8 {
    let script = &args.script;
    // An evaluation script (`arena.evaluation{}`) is checked as one; anything else as a tournament.
    let is_evaluation = std::fs::read_to_string(script)
        .map(|text| text.contains("arena.evaluation"))
        .unwrap_or(false);
    let result: Result<_, arena::script::CheckErrors> = if is_evaluation {
        match EvalScripts::load_for_check(script) {
            Ok(e) => {
                let at = e.spec.defined_at.get("").cloned().unwrap_or_default();
                let mut problems = Vec::new();
                if args.batch {
                    for p in arena::eval::batch::check_players(&e.spec.players) {
                        problems.push(format!("{at}: {p}"));
                    }
                }
                problems.extend(
                    data_set_problems(&e.spec.tasks, e.spec.settings.seed, &at, script).await,
                );
                if !problems.is_empty() {
                    for p in problems {
                        eprintln!("{p}");
                    }
                    return 2;
                }
                let summary = format!(
                    "{}: ok (evaluation: {} task(s), {} player(s))",
                    script.display(),
                    e.spec.tasks.len(),
                    e.spec.players.len()
                );
                Ok((summary, routes(&e.spec.players, &e.spec.defined_at)))
            }
            Err(unloaded) => {
                // The data sets of the tasks that did read are opened all the same, so that
                // every problem shows in one run.
                let UnloadedEval {
                    errors,
                    tasks,
                    seed,
                    at,
                } = *unloaded;
                let mut lines: Vec<(String, u32, String)> = errors
                    .0
                    .iter()
                    .map(|e| {
                        let (file, line) = split_at(e.location.as_deref().unwrap_or(""));
                        (file, line, e.to_string())
                    })
                    .collect();
                for p in data_set_problems(&tasks, seed, &at, script).await {
                    let (file, line) = split_at(p.split(": ").next().unwrap_or(""));
                    lines.push((file, line, p));
                }
                print_sorted(lines);
                return 2;
            }
        }
    } else if args.batch {
        eprintln!(
            "{}: --batch applies to evaluation scripts (`arena eval --batch`); games are played one call at a time",
            script.display()
        );
        return 2;
    } else {
        match Generation::load_for_check(script) {
            Ok(g) => {
                // What the script names is opened as a run would open it.
                let findings = preflight_findings(&g.spec, script, args.online).await;
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
                    let mut lines = located(findings, |p, path| g.field_at(p, path));
                    lines.sort();
                    print_sorted(lines);
                    return 2;
                }
            }
            Err(unloaded) => {
                // The files and engines of what did read are tried all the same, so that every
                // problem shows in one run.
                let Unloaded { errors, partial } = *unloaded;
                let mut lines: Vec<(String, u32, String)> = errors
                    .0
                    .iter()
                    .map(|e| {
                        let (file, line) = split_at(e.location.as_deref().unwrap_or(""));
                        (file, line, e.to_string())
                    })
                    .collect();
                if let Some(partial) = partial {
                    let findings = preflight_findings(&partial.spec, script, args.online).await;
                    lines.extend(located(findings, |p, path| partial.field_at(p, path)));
                }
                print_sorted(lines);
                return 2;
            }
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

/// The problems of opening the data sets `tasks` read, each as `{at}: task ...: message`. The
/// data sets are opened and parsed as a run would; a built set is not built here (that takes
/// an engine and time).
async fn data_set_problems(
    tasks: &[arena::eval::spec::TaskSpec],
    seed: u64,
    at: &str,
    script: &Path,
) -> Vec<String> {
    let mut problems = Vec::new();
    for task in tasks.iter().filter(|t| t.data.is_some()) {
        // A data folder from an unset variable only warns, as an unset key does: scripts
        // are often checked on a machine without the data, and `arena run` needs it.
        let data = task.data.as_deref().unwrap_or_default();
        if let Some(var) = data
            .strip_prefix('$')
            .and_then(|rest| rest.split('/').next())
            && std::env::var_os(var).is_none()
        {
            eprintln!(
                "warning: {at}: task `{}` reads `{data}`, and `{var}` is not set here; `arena run` needs it",
                task.label()
            );
            continue;
        }
        if let Err(err) = arena::eval::items::load(task, script_dir(script), seed).await {
            let err = err.to_string();
            problems.push(if err.starts_with("task `") {
                format!("{at}: {err}")
            } else {
                format!("{at}: task `{}`: {err}", task.label())
            });
        }
    }
    problems
}

/// The problems of opening what `spec` names: its files, its engines and, `online`, its
/// endpoints.
async fn preflight_findings(
    spec: &TournamentSpec,
    script: &Path,
    online: bool,
) -> Vec<preflight::Finding> {
    let mut findings = preflight::files(spec, script_dir(script));
    findings.extend(preflight::engines(spec).await);
    if online {
        findings.extend(preflight::endpoints(spec).await);
    }
    findings
}

/// `file` and line of a `file:line` location (line 0 when there is none).
fn split_at(at: &str) -> (String, u32) {
    let (file, line) = at.rsplit_once(':').unwrap_or((at, "0"));
    (file.to_string(), line.parse().unwrap_or(0))
}

/// Each finding as `(file, line, message)`, at the line `field_at` gives its field.
fn located(
    findings: Vec<preflight::Finding>,
    field_at: impl Fn(Option<&str>, &[String]) -> String,
) -> Vec<(String, u32, String)> {
    findings
        .into_iter()
        .map(|f| {
            let at = field_at(f.player.as_deref(), &f.path);
            let prefix = f
                .player
                .map(|p| format!("player `{p}`: "))
                .unwrap_or_default();
            let (file, line) = split_at(&at);
            (file, line, format!("{at}: {prefix}{}", f.message))
        })
        .collect()
}

/// Prints problems in file and line order (a stable sort: problems of one line keep the order
/// they were found in).
fn print_sorted(mut lines: Vec<(String, u32, String)>) {
    lines.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (_, _, message) in lines {
        eprintln!("{message}");
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
