//! The book's worked question (docs/src/guide/experiments.md, "Test a prompt change"): does
//! asking the model to think in steps make it play better, and what does it cost? Run as
//! `examples/think/fake.lua` runs it, against `examples/fake_openai.rs --think-if "numbered
//! steps" --think-better`, which thinks (and then plays its best capture or a mate in one) only
//! when the prompt asks for numbered steps, as `examples/think/prompts/think.lua` does.

use std::path::Path;

use crate::{
    common::{TestDir, fake_openai_with, json_rows, stderr, stdout},
    ratings::{assert_valid, json_schema},
};

#[test]
fn the_think_example_against_the_fake_reaches_a_verdict_and_shows_the_cost() {
    let fake = fake_openai_with(
        0,
        &[
            "--think-tokens",
            "200",
            "--think-if",
            "numbered steps",
            "--think-better",
        ],
    );
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/think");
    let dir = TestDir::new();
    let prompt = std::fs::read_to_string(example.join("prompts/think.lua")).unwrap();
    dir.write("prompts/think.lua", &prompt);
    let script = std::fs::read_to_string(example.join("fake.lua")).unwrap();
    let default_url = "http://127.0.0.1:8799/v1";
    assert!(
        script.contains(default_url),
        "examples/think/fake.lua has no `{default_url}`"
    );
    dir.write("fake.lua", &script.replace(default_url, &fake.url));
    let out = dir.run("fake.lua");
    let (text, err) = (stdout(&out), stderr(&out));
    // A verdict on chess, not "no chess compared" (exit code 3).
    assert_eq!(out.status.code(), Some(0), "{text}\n{err}");
    let line = text
        .lines()
        .find(|l| l.starts_with("think vs plain:"))
        .unwrap_or_else(|| panic!("no verdict line:\n{text}\n{err}"));
    assert!(line.contains("H1 (better)"), "{line}");
    assert!(!line.contains("no chess compared"), "{line}");

    let lb = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&lb.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&lb)));
    assert_valid(&json_schema(), &json, "arena leaderboard --format json");
    let arms = json_rows(&json, "experiment");
    let think = arms.iter().find(|r| r["variant"] == "think").unwrap();
    assert_eq!(think["verdict"], "H1", "{think}");
    assert!(think["elo"].as_f64().unwrap() > 0.0, "{think}");
    // The cost: `think` writes 100 to 300 tokens of steps (200 on average) before an answer as
    // long as `plain`'s, and none is cut at max_tokens = 512.
    let (d, ci) = (
        think["completion_tokens_per_move_diff"].as_f64().unwrap(),
        think["completion_tokens_per_move_ci95"].as_f64().unwrap(),
    );
    assert!(d - ci > 150.0 && d + ci < 250.0, "{think}");
    assert_eq!(think["cut_off_pct_diff"].as_f64(), Some(0.0), "{think}");
    let protocol = json_rows(&json, "experiment_protocol");
    let row = protocol
        .iter()
        .find(|r| r["variant"] == "think" && r["metric"] == "completion tokens per move")
        .unwrap_or_else(|| panic!("{protocol:?}"));
    assert_eq!(row["difference"].as_f64(), Some(d));
    // `plain` was not asked for steps, so it got the fake's short answer: about 11 tokens.
    assert!(row["baseline_mean"].as_f64().unwrap() < 20.0, "{row}");
}
