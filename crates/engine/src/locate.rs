//! Finding an engine binary.
//!
//! Debian installs engines in `/usr/games`, which is not on root's `PATH`, so a bare name is looked up in
//! `PATH` first and then there.

use std::{
    env,
    path::{Path, PathBuf},
};

use super::EngineError;

/// Where distributions put chess engines even when it is not on `PATH`.
const EXTRA_DIRS: &[&str] = &["/usr/games"];

/// Resolves an engine command to an executable file.
///
/// A command containing `/` is used as is; any other is searched in `PATH`, then in `/usr/games`.
///
/// # Errors
///
/// [`EngineError::NotFound`] listing every path tried, with a hint on how to install an engine.
pub fn locate(command: &str) -> Result<PathBuf, EngineError> {
    let not_found = |searched| EngineError::NotFound {
        command: command.to_owned(),
        searched,
    };
    if command.is_empty() {
        return Err(not_found(Vec::new()));
    }
    if command.contains('/') {
        let path = PathBuf::from(command);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(not_found(vec![path]))
        };
    }
    let path_var = env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = env::split_paths(&path_var)
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    dirs.extend(EXTRA_DIRS.iter().map(PathBuf::from));
    let mut searched = Vec::new();
    for dir in dirs {
        let candidate = dir.join(command);
        if searched.contains(&candidate) {
            continue;
        }
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        searched.push(candidate);
    }
    Err(not_found(searched))
}

/// The installed command closest to `command`, when `command` is not found and looks like a
/// misspelling of one (`stockfsh` for `stockfish`): the executables of `PATH` and `/usr/games`
/// are compared by name.
pub fn did_you_mean(command: &str) -> Option<String> {
    if command.is_empty() || command.contains('/') {
        return None;
    }
    let path_var = env::var_os("PATH").unwrap_or_default();
    let mut names = Vec::new();
    for dir in env::split_paths(&path_var).chain(EXTRA_DIRS.iter().map(PathBuf::from)) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_executable(&entry.path()) && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    crate::script::did_you_mean(command, &known).map(str::to_string)
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// For tests: the engine `command` as [`locate`] finds it, or `None` after
/// [`crate::test_parts::missing`] (a printed skip, or a failure under `ARENA_REQUIRE_ALL=1`).
#[cfg(any(test, feature = "test-support"))]
pub fn for_test(test: &str, command: &str) -> Option<PathBuf> {
    match locate(command) {
        Ok(path) => Some(path),
        Err(_) => {
            crate::test_parts::missing(
                test,
                &format!("the engine `{command}`"),
                &format!("apt-get install {command}; scripts/prerequisites.sh --tests does"),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binary_lists_searched_paths_and_install_hint() {
        let err = locate("no-such-engine-xyz").expect_err("the engine does not exist");
        let EngineError::NotFound { command, searched } = &err else {
            panic!("unexpected error {err:?}")
        };
        assert_eq!(command, "no-such-engine-xyz");
        assert!(searched.contains(&PathBuf::from("/usr/games/no-such-engine-xyz")));
        let message = err.to_string();
        assert!(
            message.contains("`no-such-engine-xyz` not found"),
            "{message}"
        );
        assert!(
            message.contains("/usr/games/no-such-engine-xyz"),
            "{message}"
        );
        assert!(message.contains("apt-get install stockfish"), "{message}");
    }

    #[test]
    fn explicit_paths_must_exist_and_be_executable() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("engine");
        std::fs::write(&file, "#!/bin/sh\n").expect("write file");
        let path = file.to_str().expect("utf-8 temp path");
        let err = locate(path).expect_err("not executable yet");
        assert!(
            matches!(&err, EngineError::NotFound { searched, .. } if searched == std::slice::from_ref(&file))
        );
        assert!(locate(&format!("{path}-missing")).is_err());

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            assert_eq!(locate(path).expect("now executable"), file);
        }
    }

    #[test]
    fn finds_stockfish_in_usr_games_without_path() {
        if !Path::new("/usr/games/stockfish").exists() {
            crate::test_parts::missing(
                "finds_stockfish_in_usr_games_without_path",
                "/usr/games/stockfish",
                "apt-get install stockfish",
            );
            return;
        }
        // Whatever PATH holds, /usr/games is searched last, so a bare name resolves.
        let found = locate("stockfish").expect("stockfish is installed");
        assert!(found.ends_with("stockfish"), "{}", found.display());
    }

    #[test]
    fn finds_binaries_on_path() {
        let found = locate("sh").expect("every unix has sh on PATH");
        assert!(
            found.is_absolute() || found.starts_with("."),
            "{}",
            found.display()
        );
    }
}
