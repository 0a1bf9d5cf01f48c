//! Sets `ARENA_GIT_COMMIT` for the export manifests (see `embed_git_commit`). Here rather than in
//! the binary's crate: a new commit then rebuilds only this crate and the binary.

use std::path::Path;

fn main() {
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
