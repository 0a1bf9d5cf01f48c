//! The agentic mode through native tool calls (`actions = "tools"`) against the fake server, which
//! answers with tool calls in each wire format: the calls and their results travel in the dialog,
//! each reply is stored with its outcome as in the text protocol, a wrong tool or a call without
//! its argument is a wrong action, and the games end as chess.

use arena::{llm::ChatRequest, store::GameStatus};

use crate::common::{TestDir, fake_openai_with, open_store, stderr};

/// A one-game tournament: `random` against a tools player on `url` speaking `provider`.
fn tournament(url: &str, provider: &str, options: &str, stream: bool) -> TestDir {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "tools", games_per_pair = 1, max_plies = 6, seed = 3, concurrency = 1,
  players = {{
    arena.random {{ name = "rnd" }},
    arena.llm {{
      name = "fake", base_url = "{url}", model = "fake-random-mover", provider = "{provider}",
      max_concurrency = 1, stream = {stream}, mode = "agentic",
      options = {{ actions = "tools", {options} }},
    }},
  }},
}}"#
        ),
    );
    dir
}

/// Every stored call of the tools player, in order: (ply, seq, outcome, request).
fn calls(dir: &TestDir) -> Vec<(u32, u32, String, ChatRequest)> {
    let store = open_store(&dir.db());
    let t = store.find_tournament("tools").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 1);
    let game = &games[0];
    assert_eq!(game.status, GameStatus::Finished, "{game:?}");
    let mut out = Vec::new();
    for ply in 0..=game.ply_count {
        for c in store.llm_calls(game.id, ply).unwrap() {
            let request: ChatRequest = serde_json::from_str(&c.call.request_json).unwrap();
            out.push((
                ply,
                c.call.seq,
                c.outcome.clone().unwrap_or_default(),
                request,
            ));
        }
    }
    out
}

#[test]
fn an_agentic_game_through_tools_plays_in_every_wire_format() {
    let fake = fake_openai_with(0, &["--stream"]);
    for (provider, stream) in [
        ("openai", false),
        ("openai", true),
        ("openai_responses", false),
        ("anthropic", false),
        ("gemini", false),
    ] {
        let dir = tournament(&fake.url, provider, "", stream);
        let out = dir.run("t.lua");
        assert!(out.status.success(), "{provider}: {}", stderr(&out));
        let calls = calls(&dir);
        // The fake asks for the legal moves, then plays one: two calls a ply, three plies.
        let outcomes: Vec<&str> = calls.iter().map(|c| c.2.as_str()).collect();
        assert_eq!(
            outcomes,
            ["get_legal_moves", "move"].repeat(3),
            "{provider} (stream {stream})"
        );
        for (ply, seq, _, request) in &calls {
            let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["get_current_board", "get_legal_moves", "make_move"]);
            if *seq == 1 {
                // The second turn carries the first call and its result, the legal moves.
                let [_, asked, answered] = &request.messages[..] else {
                    panic!("{provider} ply {ply}: {:?}", request.messages);
                };
                assert_eq!(asked.role, "assistant");
                assert_eq!(asked.tool_calls[0].name, "get_legal_moves");
                assert_eq!(answered.role, "tool");
                assert_eq!(answered.tool_call_id, Some(asked.tool_calls[0].id.clone()));
                assert!(
                    answered.content.split(',').all(|m| m.len() >= 4),
                    "{answered:?}"
                );
            }
        }
        if provider == "gemini" {
            shown_readably(&dir);
        }
    }
}

/// The report's transcript and the calls export show each tool call, not an empty reply.
fn shown_readably(dir: &TestDir) {
    let out = dir
        .arena()
        .args(["report", "--db", "t.db"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    // The game's data block is gzip and base64: its replies are the shown calls.
    let block = html
        .split("data-encoding=\"gzip+base64\" id=\"gd-")
        .nth(1)
        .expect("a game block");
    let body = &block[block.find('>').unwrap() + 1..block.find("</script>").unwrap()];
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, body).unwrap();
    let mut data = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut data)
        .unwrap();
    assert!(
        data.contains("→ get_legal_moves({})"),
        "no call in the report: {data}"
    );
    assert!(
        data.contains("→ make_move({"),
        "no move call in the report: {data}"
    );

    let out = dir
        .arena()
        .args([
            "export",
            "jsonl",
            "--db",
            "t.db",
            "--what",
            "calls",
            "--out",
            "calls.jsonl",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("calls.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 6);
    for row in &rows {
        let name = row["tool_calls"][0]["name"].as_str().unwrap();
        let expected = if row["outcome"] == "move" {
            "make_move"
        } else {
            "get_legal_moves"
        };
        assert_eq!(name, expected, "{row}");
    }
}

#[test]
fn a_wrong_tool_and_a_call_without_its_argument_are_wrong_actions() {
    let fake = fake_openai_with(0, &["--bad-tool-calls"]);
    // Two failures a ply are allowed with three attempts: each ply then ends in a move.
    let dir = tournament(&fake.url, "openai", "max_attempts = 3", false);
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let calls = calls(&dir);
    let outcomes: Vec<&str> = calls.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(
        outcomes,
        ["wrong_action", "wrong_action", "get_legal_moves", "move"].repeat(3)
    );
    // The feedback is the failed call's result.
    let third = &calls[2].3.messages;
    assert_eq!(third[1].tool_calls[0].name, "resign_game");
    assert_eq!(third[2].role, "tool");
    assert!(
        third[2].content.contains("no tool `resign_game`"),
        "{third:?}"
    );
    assert!(
        third[4].content.contains("needs one argument, `move`"),
        "{third:?}"
    );

    // With two attempts the second wrong action loses the game, as in the text protocol.
    let dir = tournament(&fake.url, "openai", "max_attempts = 2", false);
    let out = dir.run("t.lua");
    // Its one game ends before it moves: the run compared no chess (exit 3).
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("tools").unwrap().unwrap();
    let game = &store.games(t.id).unwrap()[0];
    assert_eq!(game.termination.as_deref(), Some("too_many_wrong_actions"));
    assert!(game.result.is_some(), "{game:?}");
}
