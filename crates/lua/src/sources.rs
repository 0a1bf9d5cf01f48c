//! Where Lua modules come from: the user's script folder, then the built-in `scripts/`.
//!
//! Every file a script generation reads is recorded with its exact content. A game's Lua state is
//! later built from those recorded sources (not from disk), so a game keeps the rules it started
//! with while files change, and a resumed game can rebuild them from the store.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

use sha2::{Digest, Sha256};

use super::ScriptError;

// `EMBEDDED`: every built-in script, listed by build.rs.
include!(concat!(env!("OUT_DIR"), "/embedded_scripts.rs"));

/// The display prefix of built-in scripts in error messages and in the store.
const BUILTIN_PREFIX: &str = "scripts/";

/// The exact text of every file a generation read, keyed by display path (`tournaments/x.lua`,
/// `scripts/modes/blitz.lua`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceSet {
    /// Display path to content.
    pub files: BTreeMap<String, String>,
}

impl SourceSet {
    /// A content hash over all files and their paths: the identity of a generation.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        for (path, content) in &self.files {
            hasher.update(path.as_bytes());
            hasher.update([0]);
            hasher.update(content.as_bytes());
            hasher.update([0]);
        }
        hasher
            .finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// A module found by the resolver.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedModule {
    /// The path shown in error messages (`@path` chunk name).
    pub display: String,
    /// The source text.
    pub content: String,
    /// The module's compiled form, shared by every state of a generation, when it came from the
    /// generation's pinned sources (which never change): see [`Resolver::compiled`].
    pub compiled: Option<CompiledModules>,
}

/// Lua bytecode of pinned modules by display path, compiled once per generation and loaded by
/// each of its states: parsing the modes' and formats' sources again for every state was 11 %
/// of arena's instructions in a sweep of 256 games of 20 plies (a game builds two states). The
/// bytecode is made in this process from the same text, never read from a script or a file,
/// and keeps its debug information, so errors name the same `file:line`.
#[derive(Debug, Clone, Default)]
pub(crate) struct CompiledModules(Arc<Mutex<BTreeMap<String, Arc<[u8]>>>>);

impl CompiledModules {
    /// The bytecode of `display`, if compiled already.
    pub fn get(&self, display: &str) -> Option<Arc<[u8]>> {
        self.0
            .lock()
            .expect("compiled modules lock poisoned")
            .get(display)
            .cloned()
    }

    /// The display paths compiled so far.
    #[cfg(test)]
    pub fn names(&self) -> Vec<String> {
        let modules = self.0.lock().expect("compiled modules lock poisoned");
        modules.keys().cloned().collect()
    }

    /// Keeps the bytecode of `display`.
    pub fn insert(&self, display: &str, bytecode: Vec<u8>) {
        self.0
            .lock()
            .expect("compiled modules lock poisoned")
            .insert(display.to_string(), bytecode.into());
    }
}

/// Finds modules for `require`, recording what it read.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    script_dir: PathBuf,
    pinned: Option<Arc<SourceSet>>,
    /// What was read, or `None` for a resolver that keeps nothing ([`Resolver::unrecorded`]).
    read: Option<Arc<Mutex<BTreeMap<String, String>>>>,
    disk_paths: Arc<Mutex<BTreeMap<String, PathBuf>>>,
    /// Bytecode of the pinned modules, when the states of a generation share it.
    compiled: Option<CompiledModules>,
    /// Modules replaced for one player's states (see [`Resolver::replacing`]).
    replaced: Arc<Replacements>,
}

/// The modules one player has replaced: the name as a mode requires it to the module standing
/// in for it (`prompts.blitz` to `prompts.think`), and which of them were required so far.
#[derive(Debug, Default)]
struct Replacements {
    map: BTreeMap<String, String>,
    used: Mutex<std::collections::BTreeSet<String>>,
}

impl Resolver {
    /// A resolver that reads from disk: the user's folder first, then the built-ins.
    pub(crate) fn from_disk(script_dir: &Path) -> Self {
        Resolver {
            script_dir: script_dir.to_path_buf(),
            pinned: None,
            read: Some(Arc::default()),
            disk_paths: Arc::default(),
            compiled: None,
            replaced: Arc::default(),
        }
    }

    /// A resolver that answers from a recorded source set, falling back to disk for modules the
    /// set lacks (a module first required lazily, inside a hook).
    pub fn pinned(script_dir: &Path, sources: Arc<SourceSet>) -> Self {
        Resolver {
            pinned: Some(sources),
            ..Resolver::from_disk(script_dir)
        }
    }

    /// This resolver, keeping no record of what it reads: for the Lua states of games and
    /// formats, built from a generation whose sources are recorded already. Nothing reads such a
    /// state's record, and it held a copy of every module's text per state (18 KB per running
    /// game at 256 games, heaptrack).
    pub(crate) fn unrecorded(self) -> Self {
        Resolver { read: None, ..self }
    }

    /// This resolver, sharing the bytecode of its pinned modules through `compiled`.
    pub fn compiled(self, compiled: CompiledModules) -> Self {
        Resolver {
            compiled: Some(compiled),
            ..self
        }
    }

    /// This resolver, standing `map`'s modules in for the ones a mode requires: a player's
    /// `prompt` and `modules` (name as required to the replacing module, both dotted). A state
    /// built with it gives `require(name)` the replacement, except inside the replacement itself,
    /// which gets the module it replaces (so that it can build on the built-in words).
    pub fn replacing(self, map: BTreeMap<String, String>) -> Self {
        Resolver {
            replaced: Arc::new(Replacements {
                map,
                used: Mutex::default(),
            }),
            ..self
        }
    }

    /// The module standing in for `module`, if this resolver replaces it.
    pub fn replacement(&self, module: &str) -> Option<&str> {
        self.replaced.map.get(module).map(String::as_str)
    }

    /// Notes that the replacement of `module` was required.
    pub(super) fn mark_replaced(&self, module: &str) {
        self.replaced
            .used
            .lock()
            .expect("resolver lock poisoned")
            .insert(module.to_string());
    }

    /// The replaced modules no state of this resolver has required so far: names no mode asked
    /// for, most likely misspelt.
    pub(crate) fn unused_replacements(&self) -> Vec<String> {
        let used = self.replaced.used.lock().expect("resolver lock poisoned");
        self.replaced
            .map
            .keys()
            .filter(|k| !used.contains(*k))
            .cloned()
            .collect()
    }

    /// Reads the entry script itself.
    ///
    /// # Errors
    /// When the file is missing or unreadable.
    pub fn entry(&self, path: &Path) -> Result<ResolvedModule, ScriptError> {
        let display = display_path(path);
        if let Some(content) = self.pinned.as_ref().and_then(|p| p.files.get(&display)) {
            return Ok(self.record(display, content.clone(), None));
        }
        let content = std::fs::read_to_string(path)
            .map_err(|e| ScriptError::bare(format!("cannot read script `{display}`: {e}")))?;
        Ok(self.record(display, content, Some(path.to_path_buf())))
    }

    /// Whether `module` can be found, without recording it.
    pub fn exists(&self, module: &str) -> bool {
        if check_name(module).is_err() {
            return false;
        }
        self.candidates(module).iter().any(|c| {
            self.pinned
                .as_ref()
                .is_some_and(|p| p.files.contains_key(&c.display))
                || c.disk.as_ref().is_some_and(|d| d.is_file())
                || c.embedded.is_some()
        })
    }

    /// Finds `module` (dotted name, `modes.blitz`).
    ///
    /// # Errors
    /// A name that would leave the script's folder and the built-ins (an absolute path, `..`),
    /// a file found through a link that leads out of them, no candidate file (the message lists
    /// where it looked), or an unreadable one.
    pub fn resolve(&self, module: &str) -> Result<ResolvedModule, ScriptError> {
        check_name(module)?;
        let candidates = self.candidates(module);
        for c in &candidates {
            if let Some(content) = self.pinned.as_ref().and_then(|p| p.files.get(&c.display)) {
                let mut module = self.record(c.display.clone(), content.clone(), c.disk.clone());
                module.compiled = self.compiled.clone();
                return Ok(module);
            }
        }
        for c in &candidates {
            if let Some(disk) = &c.disk
                && disk.is_file()
            {
                c.check_inside(module)?;
                let content = std::fs::read_to_string(disk).map_err(|e| {
                    ScriptError::bare(format!("cannot read module `{}`: {e}", c.display))
                })?;
                return Ok(self.record(c.display.clone(), content, Some(disk.clone())));
            }
            if let Some(text) = c.embedded {
                return Ok(self.record(c.display.clone(), text.to_string(), None));
            }
        }
        let tried: Vec<&str> = candidates.iter().map(|c| c.display.as_str()).collect();
        let (folder, _) = module.rsplit_once('.').unwrap_or(("", module));
        let known: Vec<String> = self
            .modules_in(folder)
            .into_iter()
            .map(|m| {
                if folder.is_empty() {
                    m
                } else {
                    format!("{folder}.{m}")
                }
            })
            .collect();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let hint = super::strict::did_you_mean(module, &known)
            .map(|m| format!("; did you mean `{m}`?"))
            .unwrap_or_default();
        Err(ScriptError::bare(format!(
            "module `{module}` not found (looked for {}){hint}",
            tried.join(", ")
        )))
    }

    /// The modules directly in `folder` (dotted, `""` for the script's own folder), from the
    /// script's folder and the built-ins, by name without the folder: what a misspelt module name
    /// may have meant.
    pub(crate) fn modules_in(&self, folder: &str) -> Vec<String> {
        let rel = folder.replace('.', "/");
        let mut names = std::collections::BTreeSet::new();
        let mut from_dir = |dir: PathBuf| {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if let Some(stem) = name.strip_suffix(".lua") {
                        names.insert(stem.to_string());
                    }
                }
            }
        };
        from_dir(self.script_dir.join(&rel));
        if let Some(dir) = builtin_dir() {
            from_dir(dir.join(&rel));
        }
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        for (name, _) in EMBEDDED {
            if let Some(stem) = name
                .strip_prefix(&prefix)
                .and_then(|n| n.strip_suffix(".lua"))
                && !stem.contains('/')
            {
                names.insert(stem.to_string());
            }
        }
        if let Some(pinned) = &self.pinned {
            for path in pinned.files.keys() {
                let path = path.strip_prefix(BUILTIN_PREFIX).unwrap_or(path);
                if let Some(stem) = path
                    .rsplit_once('/')
                    .filter(|(dir, _)| dir.ends_with(&rel) && !rel.is_empty())
                    .and_then(|(_, n)| n.strip_suffix(".lua"))
                {
                    names.insert(stem.to_string());
                }
            }
        }
        names.into_iter().collect()
    }

    /// Everything read so far (nothing for an [`unrecorded`](Resolver::unrecorded) resolver).
    pub fn sources(&self) -> SourceSet {
        SourceSet {
            files: self.read.as_ref().map_or_else(BTreeMap::new, |read| {
                read.lock().expect("resolver lock poisoned").clone()
            }),
        }
    }

    /// The files on disk behind what was read: what a watcher must watch.
    pub(crate) fn disk_paths(&self) -> Vec<PathBuf> {
        self.disk_paths
            .lock()
            .expect("resolver lock poisoned")
            .values()
            .cloned()
            .collect()
    }

    fn record(&self, display: String, content: String, disk: Option<PathBuf>) -> ResolvedModule {
        let Some(read) = &self.read else {
            return ResolvedModule {
                display,
                content,
                compiled: None,
            };
        };
        read.lock()
            .expect("resolver lock poisoned")
            .insert(display.clone(), content.clone());
        if let Some(disk) = disk {
            self.disk_paths
                .lock()
                .expect("resolver lock poisoned")
                .insert(display.clone(), disk);
        }
        ResolvedModule {
            display,
            content,
            compiled: None,
        }
    }

    fn candidates(&self, module: &str) -> Vec<Candidate> {
        let rel = module.replace('.', "/");
        let mut out = Vec::new();
        for file in [format!("{rel}.lua"), format!("{rel}/init.lua")] {
            let disk = self.script_dir.join(&file);
            out.push(Candidate {
                display: display_path(&disk),
                disk: Some(disk),
                root: Some(self.script_dir.clone()),
                embedded: None,
            });
        }
        let file = format!("{rel}.lua");
        out.push(Candidate {
            display: format!("{BUILTIN_PREFIX}{file}"),
            disk: builtin_dir().map(|dir| dir.join(&file)),
            root: builtin_dir(),
            embedded: EMBEDDED
                .iter()
                .find(|(name, _)| *name == file)
                .map(|(_, text)| *text),
        });
        out
    }
}

struct Candidate {
    display: String,
    disk: Option<PathBuf>,
    /// The folder `disk` must stay inside.
    root: Option<PathBuf>,
    embedded: Option<&'static str>,
}

impl Candidate {
    /// Refuses a file that a symbolic link places outside its folder.
    fn check_inside(&self, module: &str) -> Result<(), ScriptError> {
        let (Some(disk), Some(root)) = (&self.disk, &self.root) else {
            return Ok(());
        };
        let inside = match (disk.canonicalize(), root.canonicalize()) {
            (Ok(file), Ok(root)) => file.starts_with(root),
            _ => false,
        };
        if inside {
            Ok(())
        } else {
            Err(ScriptError::bare(format!(
                "module `{module}`: `{}` leads outside the script's folder (a symbolic link?); only the script's folder and the built-ins may be required",
                self.display
            )))
        }
    }
}

/// A module name is dotted (`modes.blitz`, or `modes/blitz`): no absolute path, no `..`, no
/// empty part, so that `require` cannot climb out of the script's folder or the built-ins.
fn check_name(module: &str) -> Result<(), ScriptError> {
    let rel = module.replace('.', "/");
    let bad =
        rel.is_empty() || rel.split('/').any(str::is_empty) || rel.contains(['\\', ':', '\0']);
    if bad {
        return Err(ScriptError::bare(format!(
            "module `{module}` is refused: require takes a module name such as `modes.blitz`, found in the script's folder or the built-ins; absolute paths and `..` are not allowed"
        )));
    }
    Ok(())
}

/// A module as a script names it in `prompt =` or `modules = {...}`, as `require` names it: a
/// file path (`prompts/think.lua`) loses its `.lua` and takes dots for slashes (`prompts.think`);
/// a dotted name stays as it is.
pub(crate) fn module_name(written: &str) -> String {
    let trimmed = written.strip_prefix("./").unwrap_or(written);
    let trimmed = trimmed.strip_suffix(".lua").unwrap_or(trimmed);
    trimmed.replace('/', ".")
}

/// Whether the chunk named `source` (`@path`, as a module is loaded) is the file of `module`:
/// what tells a replacement requiring the module it replaces.
pub(super) fn is_file_of(source: &str, module: &str) -> bool {
    let path = source.strip_prefix('@').unwrap_or(source);
    let rel = module.replace('.', "/");
    [format!("{rel}.lua"), format!("{rel}/init.lua")]
        .iter()
        .any(|file| path == file || path.ends_with(&format!("/{file}")))
}

/// The text of the built-in script at `rel` (`modes/blitz.lua`), as `require` would find it:
/// from the source tree in debug builds, else the copy embedded in the binary.
pub fn builtin_source(rel: &str) -> Option<String> {
    if let Some(dir) = builtin_dir()
        && let Ok(text) = std::fs::read_to_string(dir.join(rel))
    {
        return Some(text);
    }
    EMBEDDED
        .iter()
        .find(|(name, _)| *name == rel)
        .map(|(_, text)| (*text).to_string())
}

/// In debug builds the built-ins are read from the source tree, so that they can be edited (and hot
/// reloaded) without recompiling; release builds use the embedded copies only.
fn builtin_dir() -> Option<PathBuf> {
    // ARENA_BUILTIN_FROM_BINARY makes a debug build behave like a release build, so tests can
    // check that everything a script needs is embedded.
    if cfg!(debug_assertions) && std::env::var_os("ARENA_BUILTIN_FROM_BINARY").is_none() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts");
        dir.is_dir().then_some(dir)
    } else {
        None
    }
}

/// A path as users wrote it, with `./` dropped and `/` separators.
fn display_path(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").unwrap_or(&text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_modules_shadow_builtins_and_are_recorded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("modes")).unwrap();
        std::fs::write(dir.path().join("modes/blitz.lua"), "return 'mine'").unwrap();
        let resolver = Resolver::from_disk(dir.path());
        let m = resolver.resolve("modes.blitz").unwrap();
        assert_eq!(m.content, "return 'mine'");
        let f = resolver.resolve("formats.round_robin").unwrap();
        assert_eq!(f.display, "scripts/formats/round_robin.lua");
        assert_eq!(resolver.sources().files.len(), 2);
        assert_eq!(resolver.disk_paths().len(), 2);
    }

    #[test]
    fn an_unrecorded_resolver_finds_the_same_modules_and_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("modes")).unwrap();
        std::fs::write(dir.path().join("modes/blitz.lua"), "return 'mine'").unwrap();
        let recorded = Resolver::from_disk(dir.path());
        recorded.resolve("modes.blitz").unwrap();
        // A game's resolver: pinned to the recorded set, a lazily required module from disk.
        let pinned = Resolver::pinned(dir.path(), Arc::new(recorded.sources())).unrecorded();
        std::fs::write(dir.path().join("modes/blitz.lua"), "return 'changed'").unwrap();
        assert_eq!(
            pinned.resolve("modes.blitz").unwrap().content,
            "return 'mine'"
        );
        let f = pinned.resolve("formats.round_robin").unwrap();
        assert_eq!(f.display, "scripts/formats/round_robin.lua");
        assert!(pinned.sources().files.is_empty());
        assert!(pinned.disk_paths().is_empty());
    }

    #[test]
    fn missing_modules_list_where_they_were_looked_for() {
        let resolver = Resolver::from_disk(Path::new("tournaments"));
        let err = resolver.resolve("modes.nope").unwrap_err().to_string();
        assert!(err.contains("tournaments/modes/nope.lua"), "{err}");
        assert!(err.contains("scripts/modes/nope.lua"), "{err}");
        assert!(!resolver.exists("modes.nope"));
        assert!(resolver.exists("modes.blitz"));
    }

    #[test]
    fn require_stays_inside_the_script_folder_and_the_builtins() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("tour");
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(root.path().join("secret.lua"), "return 'outside'").unwrap();
        std::fs::write(dir.join("lib/ok.lua"), "return 'inside'").unwrap();
        let resolver = Resolver::from_disk(&dir);
        assert_eq!(
            resolver.resolve("lib.ok").unwrap().content,
            "return 'inside'"
        );
        assert_eq!(
            resolver.resolve("lib/ok").unwrap().content,
            "return 'inside'"
        );
        let absolute = root.path().join("secret").to_string_lossy().into_owned();
        for name in [
            absolute.as_str(),
            "../secret",
            "..secret",
            "lib..ok",
            "lib/../../secret",
            "/etc/passwd",
            "",
        ] {
            let err = resolver.resolve(name).unwrap_err().to_string();
            assert!(
                err.contains(&format!("module `{name}` is refused")),
                "{name}: {err}"
            );
            assert!(!resolver.exists(name), "{name}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.path().join("secret.lua"), dir.join("link.lua"))
                .unwrap();
            let err = resolver.resolve("link").unwrap_err().to_string();
            assert!(err.contains("leads outside the script's folder"), "{err}");
        }
        assert!(
            resolver
                .sources()
                .files
                .values()
                .all(|c| c != "return 'outside'")
        );
    }

    #[test]
    fn pinned_sources_win_over_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.lua"), "return 'disk'").unwrap();
        let mut set = SourceSet::default();
        set.files.insert(
            display_path(&dir.path().join("m.lua")),
            "return 'pinned'".into(),
        );
        let resolver = Resolver::pinned(dir.path(), Arc::new(set.clone()));
        assert_eq!(resolver.resolve("m").unwrap().content, "return 'pinned'");
        assert_eq!(set.hash().len(), 16);
    }
}
