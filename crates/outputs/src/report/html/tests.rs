//! The report built from a small store written through the store's own API.

use std::io::Read as _;

use base64::Engine as _;

use super::*;
use crate::store::{LlmCallRecord, PlayerRecord, PlyRecord, ScheduledGame};

const INJECTED: &str = "</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)>";

fn store_with_a_game() -> (Store, TournamentRow) {
    let store = Store::open_in_memory().unwrap();
    let t = store
        .open_tournament(
            "t<1>",
            "t.lua",
            r#"{"format":"round_robin","max_plies":10}"#,
        )
        .unwrap();
    store
        .upsert_player(
            t.id,
            &PlayerRecord::new(
                "model</script>",
                "llm",
                r#"{"model":"m","mode":"blitz","mode_options":{"legal_moves":true}}"#,
            ),
        )
        .unwrap();
    store
        .upsert_player(t.id, &PlayerRecord::new("random", "random", "{}"))
        .unwrap();
    store
        .schedule_games(
            t.id,
            &[ScheduledGame::new(0, 0, "model</script>", "random")],
        )
        .unwrap();
    let g = store.games(t.id).unwrap()[0].id;
    store.mark_game_started(g, "hash", 1).unwrap();
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let id = store
        .record_llm_call(&LlmCallRecord {
            game_id: Some(g),
            ply: 0,
            seq: 0,
            player: "model</script>".into(),
            model: "m".into(),
            endpoint: "http://x".into(),
            request_json: r#"{"messages":[{"role":"user","content":"Your move <b>now</b>"}]}"#
                .into(),
            reply_text: Some(INJECTED.into()),
            ..LlmCallRecord::default()
        })
        .unwrap();
    store
        .set_llm_call_outcome(id, "no_move_found", Some("try again"))
        .unwrap();
    let id = store
        .record_llm_call(&LlmCallRecord {
            game_id: Some(g),
            ply: 0,
            seq: 1,
            player: "model</script>".into(),
            model: "m".into(),
            request_json: "{}".into(),
            reply_text: Some("```\ne2e4\n```".into()),
            ..LlmCallRecord::default()
        })
        .unwrap();
    store
        .set_llm_call_outcome(id, "move", Some("e2e4"))
        .unwrap();
    store
        .record_ply(
            g,
            &PlyRecord {
                ply: 0,
                fen_before: fen.into(),
                uci: "e2e4".into(),
                san: "e4".into(),
                player: "model</script>".into(),
                attempts: 2,
                elapsed_ms: 10,
                clock_ms: None,
            },
        )
        .unwrap();
    store
        .finish_game(g, "0-1", "forfeit", Some(INJECTED))
        .unwrap();
    (store, t)
}

/// The per-game blocks, decoded.
fn game_blocks(html: &str) -> Vec<serde_json::Value> {
    html.split("data-encoding=\"gzip+base64\" id=\"gd-")
        .skip(1)
        .map(|rest| {
            let body = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(body)
                .unwrap();
            let mut json = String::new();
            flate2::read::GzDecoder::new(&bytes[..])
                .read_to_string(&mut json)
                .unwrap();
            serde_json::from_str(&json).unwrap()
        })
        .collect()
}

#[test]
fn model_and_script_text_is_escaped_everywhere() {
    let (store, t) = store_with_a_game();
    let (html, stats) = build(
        &store,
        &Selection {
            tournaments: vec![t],
            eval_runs: vec![],
            ..Selection::default()
        },
    )
    .unwrap();
    assert_eq!(stats.games, 1);
    // The only scripts are the report's own and the data blocks.
    assert_eq!(html.matches("<script").count(), 2, "{html}");
    assert!(
        !html.contains("alert(1)") && !html.contains("<img"),
        "{html}"
    );
    assert!(html.contains("model&lt;/script&gt;"));
    assert!(html.contains("t&lt;1&gt;"));
    let games = game_blocks(&html);
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!(g["reason"], INJECTED);
    let calls = g["plies"][0]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["reply"], INJECTED);
    assert_eq!(calls[0]["outcome"], "no_move_found");
    assert_eq!(calls[0]["messages"][0]["content"], "Your move <b>now</b>");
    assert_eq!(
        g["plies"][0]["fen"],
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    // No analysis: no evaluation in the data.
    assert!(g["plies"][0]["a"].is_null());
}

#[test]
fn an_empty_store_says_there_are_no_games() {
    let store = Store::open_in_memory().unwrap();
    let (html, stats) = build(&store, &Selection::default()).unwrap();
    assert_eq!(stats, ReportStats::default());
    assert!(html.contains("no games to show"), "{html}");
}

/// Each ply's FEN after the move is taken from the next ply's stored `fen_before` (the report does
/// not replay every ply): on a Chess960 game with both castlings (king takes rook), a capture en
/// passant and a promotion, every `fen` is the one the game itself reached.
#[test]
fn each_ply_shows_the_position_the_game_reached() {
    use crate::board::{Game, Variant};

    let store = Store::open_in_memory().unwrap();
    let t = store.open_tournament("t", "t.lua", "{}").unwrap();
    for name in ["a", "b"] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
            .unwrap();
    }
    let mut scheduled = ScheduledGame::new(0, 0, "a", "b");
    scheduled.variant = Variant::Chess960;
    store.schedule_games(t.id, &[scheduled]).unwrap();
    let g = store.games(t.id).unwrap()[0].id;
    store.mark_game_started(g, "hash", 1).unwrap();
    let moves = [
        "g1f3", "g8f6", "e2e3", "e7e6", "f1e2", "f8e7", "e1h1", "e8h8", "d2d4", "b7b5", "d4d5",
        "c7c5", "d5c6", "a7a6", "c6d7", "a6a5", "d7c8q",
    ];
    let mut game = Game::new_in(Variant::Chess960, None, 0).unwrap();
    let mut reached = Vec::new();
    for (ply, uci) in moves.iter().enumerate() {
        let fen_before = game.fen();
        let played = game.play_uci(uci).unwrap();
        reached.push(game.fen());
        store
            .record_ply(
                g,
                &PlyRecord {
                    ply: u32::try_from(ply).unwrap(),
                    fen_before,
                    uci: played.uci,
                    san: played.san,
                    player: if ply % 2 == 0 { "a" } else { "b" }.into(),
                    attempts: 1,
                    elapsed_ms: 0,
                    clock_ms: None,
                },
            )
            .unwrap();
    }
    let selection = Selection {
        tournaments: vec![t],
        ..Selection::default()
    };
    let (html, _) = build(&store, &selection).unwrap();
    let block = &game_blocks(&html)[0];
    let shown: Vec<&str> = block["plies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["fen"].as_str().unwrap())
        .collect();
    assert_eq!(shown, reached);
    // White castled short (king g1, rook f1), and so did Black; the last ply promoted on c8.
    assert!(reached[6].starts_with("rnbqk2r/pppp"), "{}", reached[6]);
    assert!(reached[6].contains("RNBQ1RK1"), "{}", reached[6]);
    assert!(reached[7].starts_with("rnbq1rk1"), "{}", reached[7]);
    assert!(reached[16].starts_with("rnQq1rk1"), "{}", reached[16]);
}

/// A message that repeats the one at its place in the same player's previous call is written as
/// `{"as_before": true}`, across plies and into the pending ply; any other is written in full.
#[test]
fn a_repeated_message_is_written_once_per_player() {
    let store = Store::open_in_memory().unwrap();
    let t = store
        .open_tournament("t", "t.lua", r#"{"format":"round_robin"}"#)
        .unwrap();
    for (name, kind) in [("a", "llm"), ("b", "llm")] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, kind, r#"{"model":"m"}"#))
            .unwrap();
    }
    store
        .schedule_games(t.id, &[ScheduledGame::new(0, 0, "a", "b")])
        .unwrap();
    let g = store.games(t.id).unwrap()[0].id;
    store.mark_game_started(g, "hash", 1).unwrap();
    let request = |system: &str, user: &str| {
        serde_json::json!({"messages": [
            {"content": system, "role": "system"}, {"content": user, "role": "user"}
        ]})
        .to_string()
    };
    let calls = [
        (0, 0, "a", request("rules", "move 1")),
        (0, 1, "a", request("rules", "move 1 again")),
        (1, 0, "b", request("rules", "move 1")),
        (2, 0, "a", "{}".to_owned()),
        (2, 1, "a", request("rules", "move 2")),
        (4, 0, "a", request("new rules", "move 2")),
    ];
    for (ply, seq, player, request_json) in &calls {
        store
            .record_llm_call(&LlmCallRecord {
                game_id: Some(g),
                ply: *ply,
                seq: *seq,
                player: (*player).into(),
                model: "m".into(),
                request_json: request_json.clone(),
                reply_text: Some("```\ne2e4\n```".into()),
                ..LlmCallRecord::default()
            })
            .unwrap();
    }
    let fens = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
    ];
    for (ply, (uci, player)) in [("e2e4", "a"), ("e7e5", "b"), ("g1f3", "a"), ("b8c6", "b")]
        .into_iter()
        .enumerate()
    {
        store
            .record_ply(
                g,
                &PlyRecord {
                    ply: ply as u32,
                    fen_before: fens[ply].into(),
                    uci: uci.into(),
                    san: String::new(),
                    player: player.into(),
                    attempts: 1,
                    elapsed_ms: 1,
                    clock_ms: None,
                },
            )
            .unwrap();
    }
    let (html, _) = build(
        &store,
        &Selection {
            tournaments: vec![t],
            ..Selection::default()
        },
    )
    .unwrap();
    let game = &game_blocks(&html)[0];
    let same = serde_json::json!({"as_before": true});
    let full = |system: &str, user: &str| serde_json::json!([{"content": system, "role": "system"}, {"content": user, "role": "user"}]);
    let plies = game["plies"].as_array().unwrap();
    let messages = |ply: usize, call: usize| plies[ply]["calls"][call]["messages"].clone();
    assert_eq!(messages(0, 0), full("rules", "move 1"));
    assert_eq!(
        messages(0, 1),
        serde_json::json!([same, {"content": "move 1 again", "role": "user"}])
    );
    // Another player's calls are their own.
    assert_eq!(messages(1, 0), full("rules", "move 1"));
    // A request the viewer shows whole leaves the previous messages as they were.
    assert!(messages(2, 0).is_null());
    assert_eq!(
        messages(2, 1),
        serde_json::json!([same, {"content": "move 2", "role": "user"}])
    );
    // The forfeited ply's call: its system prompt changed, its user message is the one before.
    let pending = &game["pending"][0]["calls"][0]["messages"];
    assert_eq!(
        *pending,
        serde_json::json!([{"content": "new rules", "role": "system"}, same])
    );
}

#[test]
fn the_placement_chart_draws_the_models_that_spent_something() {
    use crate::table::{Cell, Table};
    let table = |cost_a: f64| Table {
        title: "Placement".into(),
        kind: "placement".into(),
        tournament: None,
        columns: ["player", "Elo", "±95%", "±95% with ladder", "cost (USD)"]
            .map(String::from)
            .to_vec(),
        rows: vec![
            vec![
                Cell::Text("a".into()),
                Cell::Num(900.0, 1),
                Cell::Num(50.0, 1),
                Cell::Num(60.0, 1),
                Cell::Num(cost_a, 4),
            ],
            // A sweep: no finite Elo to draw.
            vec![
                Cell::Text("b".into()),
                Cell::Text("<= -300".into()),
                Cell::Empty,
                Cell::Empty,
                Cell::Num(0.2, 4),
            ],
        ],
        notes: Vec::new(),
    };
    let mut figure = String::new();
    placement_chart(&[table(0.5)])
        .expect("a chart")
        .render(&mut figure);
    assert!(figure.contains("id=\"cost-rating-plot\"") && figure.contains(">a</text>"));
    assert!(!figure.contains(">b</text>"), "{figure}");
    assert!(figure.contains("1 model(s) without a cost or a finite Elo are not drawn"));
    // Nothing spent by anyone drawable: no chart; no placement table: none either.
    assert!(placement_chart(&[table(0.0)]).is_none());
    let mut other = table(0.5);
    other.kind = "format".into();
    assert!(placement_chart(&[other]).is_none());
}
