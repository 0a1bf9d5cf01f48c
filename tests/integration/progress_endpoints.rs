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
