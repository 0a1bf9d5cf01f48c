//! Embeds every built-in Lua script under `scripts/` (except the `types/` stubs) into the binary,
//! so that a release build needs no files beside it. The list is generated rather than written by
//! hand, so a new script cannot be forgotten.

use std::{
    env, fs,
    path::{Path, PathBuf},
};

fn main() {
    println!("cargo:rerun-if-changed=scripts");
    let root = Path::new("scripts");
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    let mut out = String::from(
        "/// The built-in scripts compiled into the binary, by path relative to `scripts/`.\n\
         const EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for file in &files {
        let relative = file
            .strip_prefix(root)
            .expect("collected under scripts/")
            .to_string_lossy()
            .replace('\\', "/");
        out.push_str(&format!(
            "    ({relative:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/scripts/{relative}\"))),\n"
        ));
    }
    out.push_str("];\n");
    let target =
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_scripts.rs");
    fs::write(target, out).expect("OUT_DIR is writable");
    embed_git_commit();
}

/// Sets `ARENA_GIT_COMMIT` to `git rev-parse HEAD` when the build runs in a git checkout (the
/// export manifests name it), and asks to be rerun when HEAD or the branch it points at moves.
/// Without git (a crate tarball) the variable stays unset and manifests say `null`.
fn embed_git_commit() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    println!("cargo:rustc-env=ARENA_GIT_COMMIT={commit}");
    // Only files that exist: a missing one (a packed ref) would rerun this script every build.
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch]));
    }
    for path in watched.into_iter().flatten() {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a readable folder entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "types") {
                continue; // editor stubs, never loaded
            }
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "lua") {
            files.push(path);
        }
    }
}
