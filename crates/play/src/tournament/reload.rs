//! Hot reload: watch a tournament's script files and publish each new valid generation.
//!
//! Events are debounced, access events ignored (arena's own reads would otherwise trigger reloads
//! in a loop) and content hashes compared, so one save gives at most one reload. A candidate that
//! fails to load or validate is reported with `file:line` and the previous generation stays in
//! force; the tournament never stops for a bad save. Running games are not affected either way:
//! each keeps the generation it started with.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::{Arc, mpsc},
    thread,
    time::Duration,
};

use notify_debouncer_full::{
    DebounceEventResult, new_debouncer,
    notify::{EventKind, RecursiveMode},
};
use tokio::sync::watch;

use super::rules::{Rules, ScriptHost};
use crate::script::CheckErrors;

/// How long the file system must be quiet before a change is acted on.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Watches script files until dropped.
pub struct ScriptWatcher {
    stop: mpsc::Sender<Message>,
    thread: Option<thread::JoinHandle<()>>,
}

enum Message {
    Changed(Vec<PathBuf>),
    Stop,
}

impl Drop for ScriptWatcher {
    fn drop(&mut self) {
        let _ = self.stop.send(Message::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts watching the files of `initial` and returns the channel new generations (loaded by
/// `host`) arrive on.
///
/// # Errors
/// When the operating system refuses to watch the script folders.
pub fn watch(
    host: Arc<dyn ScriptHost>,
    initial: Arc<dyn Rules>,
) -> Result<(watch::Receiver<Arc<dyn Rules>>, ScriptWatcher), notify_debouncer_full::notify::Error>
{
    let (publish, generations) = watch::channel(initial.clone());
    let (tx, rx) = mpsc::channel::<Message>();
    let events = tx.clone();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        let Ok(batch) = result else { return };
        let paths: Vec<PathBuf> = batch
            .iter()
            .filter(|e| !matches!(e.kind, EventKind::Access(_)))
            .flat_map(|e| e.paths.iter().cloned())
            .filter(|p| p.extension().is_some_and(|x| x == "lua"))
            .collect();
        if !paths.is_empty() {
            let _ = events.send(Message::Changed(paths));
        }
    })?;
    let mut watched = BTreeSet::new();
    for dir in folders(initial.as_ref()) {
        debouncer.watch(&dir, RecursiveMode::NonRecursive)?;
        watched.insert(dir);
    }
    let thread = thread::Builder::new()
        .name("script-watcher".into())
        .spawn(move || {
            let mut current = initial;
            while let Ok(Message::Changed(paths)) = rx.recv() {
                // Coalesce whatever else arrived meanwhile into this reload.
                let mut changed: BTreeSet<PathBuf> = paths.into_iter().collect();
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Message::Changed(more) => changed.extend(more),
                        Message::Stop => return,
                    }
                }
                if let Some(next) = reload(host.as_ref(), current.as_ref(), &changed) {
                    for dir in folders(next.as_ref()) {
                        if watched.insert(dir.clone())
                            && let Err(e) = debouncer.watch(&dir, RecursiveMode::NonRecursive)
                        {
                            tracing::warn!("cannot watch `{}` for changes: {e}", dir.display());
                        }
                    }
                    current = next.clone();
                    publish.send_replace(next);
                }
            }
        })
        .expect("the script watcher thread starts");
    Ok((
        generations,
        ScriptWatcher {
            stop: tx,
            thread: Some(thread),
        },
    ))
}

/// Builds the candidate generation after `changed` files were saved; `None` keeps `current`.
fn reload(
    host: &dyn ScriptHost,
    current: &dyn Rules,
    changed: &BTreeSet<PathBuf>,
) -> Option<Arc<dyn Rules>> {
    let names = changed
        .iter()
        .map(|p| shown(p, current.script_dir()))
        .collect::<Vec<_>>()
        .join(", ");
    match host.load(current.entry(), current.number() + 1) {
        Ok(next) if next.hash() == current.hash() => None,
        Ok(next) => match current.spec().fixed_parts_changed(next.spec()) {
            Some(what) => {
                tracing::error!(
                    "reload rejected, keeping script generation {}: {what} cannot change while the tournament runs (stop and start it again to change it)",
                    current.number()
                );
                None
            }
            None => {
                tracing::info!(
                    "scripts reloaded: generation {} ({}) after changes to {names}; games that start from now on use it",
                    next.number(),
                    next.hash()
                );
                if next.spec().settings.format == "experiment" {
                    // See `ArmStatus::set_aside`: one arm's evidence is one version of the scripts.
                    tracing::warn!(
                        "experiment: the scripts changed, so every arm still playing starts its evidence anew under generation {}; its earlier pairs are set aside (arms already decided keep their verdicts)",
                        next.number()
                    );
                }
                Some(next)
            }
        },
        Err(CheckErrors(errors)) => {
            for e in &errors {
                tracing::error!(
                    "reload rejected, keeping script generation {}: {e}",
                    current.number()
                );
            }
            None
        }
    }
}

/// A changed file as the user names it: relative to the script's folder, as `file:line`
/// messages name it, rather than the watcher's absolute path.
fn shown(path: &Path, script_dir: &Path) -> String {
    let tidy = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    let dir = script_dir
        .canonicalize()
        .unwrap_or_else(|_| tidy(script_dir));
    let path = tidy(path);
    path.strip_prefix(&dir)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// The folders holding a generation's files on disk, plus the entry's own folder.
fn folders(generation: &dyn Rules) -> BTreeSet<PathBuf> {
    let mut dirs: BTreeSet<PathBuf> = generation
        .watched()
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d
            }
        })
        .collect();
    dirs.insert(generation.script_dir().to_path_buf());
    dirs.retain(|d| d.is_dir());
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_files_are_named_from_the_script_folder() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let file = dir.join(".").join("prompts/coach.lua");
        assert_eq!(shown(&file, &dir), "prompts/coach.lua");
        assert_eq!(
            shown(Path::new("/elsewhere/x.lua"), &dir),
            "/elsewhere/x.lua"
        );
    }
}
