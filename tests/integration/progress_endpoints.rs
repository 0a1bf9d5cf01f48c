//! The progress output's endpoint lines (calls in flight, learned limits and how close the run
//! came to them, 429s) against `examples/fake_openai.rs --rpm`, whose headers teach the limit.

use std::path::PathBuf;

use crate::common::{TestDir, fake_openai_with, stderr};

/// The fake's `host:port`, as the endpoint's label starts.
fn host(url: &str) -> &str {
    url.strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("an http URL")
}

/// The endpoint line of `host` in `log`, checked to carry the learned limit of 600 a minute.
fn endpoint_line<'a>(log: &'a str, host: &str) -> &'a str {
    let line = log
        .lines()
        .rfind(|l| l.starts_with(&format!("  {host}: ")))
        .unwrap_or_else(|| panic!("no endpoint line for {host} in:\n{log}"));
    assert!(line.contains(" in flight · rpm "), "{line}");
    assert!(line.contains("/600 "), "the learned limit is shown: {line}");
    assert!(line.ends_with("×429"), "{line}");
    assert!(line.chars().count() <= 80, "{line}");
    line
}

#[test]
fn an_evaluation_prints_each_endpoints_figures() {
    let fake = fake_openai_with(0, &["--rpm", "600"]);
    let dir = TestDir::new();
    let book = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tournaments/data/popularpos_sample.epd"),
    )
    .expect("the position sample is in the repository");
    dir.write("data/book.epd", &book);
    dir.write(
        "e.lua",
        &format!(
            r#"local arena = require("arena")
return arena.evaluation {{
  name = "seen", seed = 2,
  tasks = {{ {{ task = "basic_understanding", build = {{ book = "data/book.epd", count = 5 }} }} }},
  players = {{ arena.llm {{ name = "model", base_url = "{}", model = "fake-random-mover", outage_s = 0 }} }},
}}"#,
            fake.url
        ),
    );
    let out = dir
        .arena()
        .args(["eval", "e.lua", "--db", "t.db"])
        .output()
        .expect("arena runs");
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let line = endpoint_line(&log, host(&fake.url));
    assert!(line.contains(" 0 in flight · rpm 5/600 1% · "), "{line}");
}

#[test]
fn a_tournament_prints_each_endpoints_figures_after_each_game() {
    let fake = fake_openai_with(0, &["--rpm", "600"]);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "seen", games_per_pair = 1, max_plies = 6, seed = 3,
  players = {{
    arena.llm {{ name = "model", base_url = "{}", model = "fake-random-mover", outage_s = 0 }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let line = endpoint_line(&log, host(&fake.url));
    assert!(line.contains(" 0 in flight · rpm "), "{line}");
}

/// A sequential experiment's progress shows a live line: each arm's pairs of its cap and its LLR
/// against the bounds that stop it, printed (off a terminal) whenever it changes, and ending at
/// the figures the verdict lines give.
#[test]
fn a_sequential_experiment_shows_each_arms_llr_against_its_bounds_as_it_runs() {
    let fake = fake_openai_with(0, &[]);
    let dir = TestDir::new();
    let model = |name: &str| {
        format!(
            r#"arena.llm {{ name = "{name}", base_url = "{}", model = "fake-random-mover", options = {{ legal_moves = true }} }}"#,
            fake.url
        )
    };
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.experiment {{
  name = "live",
  baseline = {},
  variants = {{ {} }},
  opponents = {{ arena.random {{ name = "random" }} }},
  openings = {{ book = "2moves_v1", count = 4 }},
  sprt = {{ elo0 = 0, elo1 = 5, alpha = 0.05, beta = 0.05 }},
  null = true,
  max_pairs = 4,
  max_plies = 6,
  concurrency = 2,
}}"#,
            model("plain"),
            model("listed")
        ),
    );
    let out = dir.run("t.lua");
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    let lines: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_once("] experiment: ").map(|(_, rest)| rest))
        .collect();
    assert!(lines.len() >= 2, "a line as the pairs come in:\n{log}");
    assert!(
        lines[0].starts_with("listed 0/4 pairs, LLR 0.00 in (")
            && lines[0].contains(" · plain-null 0/4 pairs"),
        "{}",
        lines[0]
    );
    let last = lines.last().unwrap();
    // Each line is new: printed when it changes.
    assert!(lines.windows(2).all(|w| w[0] != w[1]), "{lines:?}");
    // The last line agrees with the verdict line: the same pairs, LLR and bound.
    let stdout = crate::common::stdout(&out);
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("listed vs plain:"))
        .unwrap_or_else(|| panic!("no verdict:\n{stdout}"));
    let pairs = verdict
        .split(" pairs")
        .next()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap();
    let llr = verdict
        .split("LLR ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let bound = verdict
        .split("of bound ")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let listed = last.split(" · ").next().unwrap();
    assert!(
        listed.starts_with(&format!("listed {pairs}/4 pairs")),
        "{listed} / {verdict}"
    );
    assert!(
        listed.contains(&format!("LLR {llr}")),
        "{listed} / {verdict}"
    );
    assert!(listed.contains(bound), "{listed} / {verdict}");
}
