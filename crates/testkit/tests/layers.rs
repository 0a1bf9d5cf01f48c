//! The crates are the layers (ARCHITECTURE.md, "Layers and the direction of their arrows"): this
//! test fails when a crate depends on one it may not use, so the arrows are kept by the build
//! rather than by discipline. It reads the workspace through `cargo metadata`.

use std::{collections::BTreeMap, process::Command};

/// Each workspace crate and the workspace crates its normal dependencies may name. Dev-only
/// dependencies (tests) may also name any crate listed before the crate itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("arena-testkit", &[]),
    ("arena-core", &["arena-testkit"]),
    ("arena-llm-types", &[]),
    ("arena-llm", &["arena-llm-types"]),
    ("arena-providers", &["arena-llm"]),
    ("arena-engine", &["arena-core", "arena-testkit"]),
    (
        "arena-store",
        &["arena-testkit", "arena-core", "arena-llm-types"],
    ),
    (
        "arena-play",
        &["arena-core", "arena-llm", "arena-engine", "arena-store"],
    ),
    ("arena-lua", &["arena-core", "arena-llm", "arena-play"]),
    (
        "arena-outputs",
        &[
            "arena-core",
            "arena-llm",
            "arena-engine",
            "arena-store",
            "arena-play",
        ],
    ),
    (
        "arena",
        &[
            "arena-core",
            "arena-llm",
            "arena-providers",
            "arena-engine",
            "arena-store",
            "arena-play",
            "arena-lua",
            "arena-outputs",
        ],
    ),
];

#[test]
fn every_crate_uses_only_the_layers_below_it() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let rank: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (*n, i))
        .collect();
    let mut wrong = Vec::new();
    let packages = meta["packages"].as_array().expect("a package list");
    for package in packages {
        let name = package["name"].as_str().expect("a name");
        let Some(&own) = rank.get(name) else {
            wrong.push(format!("`{name}` is not in LAYERS: give it its place"));
            continue;
        };
        for dep in package["dependencies"]
            .as_array()
            .expect("a dependency list")
        {
            let dep_name = dep["name"].as_str().expect("a name");
            let Some(&theirs) = rank.get(dep_name) else {
                continue; // not a workspace crate
            };
            let dev_only = dep["kind"].as_str() == Some("dev");
            let allowed = if dev_only {
                theirs < own
            } else {
                LAYERS[own].1.contains(&dep_name)
            };
            if !allowed {
                let how = if dev_only {
                    "dev-dependency"
                } else {
                    "dependency"
                };
                wrong.push(format!("`{name}` has `{dep_name}` as a {how}"));
            }
        }
    }
    assert_eq!(
        packages.len(),
        LAYERS.len(),
        "one LAYERS entry per workspace crate"
    );
    assert!(
        wrong.is_empty(),
        "crates that use a layer they may not:\n{}",
        wrong.join("\n")
    );
}
