//! Embeds every built-in Lua script under `scripts/` (except the `types/` stubs) into the binary,
//! so that a release build needs no files beside it. The list is generated rather than written by
//! hand, so a new script cannot be forgotten.

use std::{
    env, fs,
    path::{Path, PathBuf},
};

fn main() {
    // The scripts sit at the repository's top (users read them there, and errors name them
    // `scripts/...`); build scripts run in this crate's folder.
    println!("cargo:rerun-if-changed=../../scripts");
    let root = Path::new("../../scripts");
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
            "    ({relative:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../../scripts/{relative}\"))),\n"
        ));
    }
    out.push_str("];\n");
    let target =
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_scripts.rs");
    fs::write(target, out).expect("OUT_DIR is writable");
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
