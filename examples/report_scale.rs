//! The HTML report at scale: builds a store of N games of P plies in which every ply is an LLM
//! call with a blitz-sized prompt (the FEN, the last ten moves, the legal moves) and a reply of a
//! few hundred characters of varied "reasoning", every ply analysed, then times `html::build` and
//! prints the report's size. `tests/browser/load.mjs` then measures how long chromium takes to
//! open it and one game.
//!
//! ```sh
//! cargo run --release --example report_scale -- --games 2000 --plies 200 --dir /tmp/scale
//! node tests/browser/load.mjs /tmp/scale/scale.html
//! ```

use std::{path::PathBuf, time::Instant};

use arena::{
    board::Game,
    engine::Score,
    report::html::{self, Selection},
    store::{LlmCallRecord, PlayerRecord, PlyAnalysisRecord, PlyRecord, ScheduledGame, Store},
};
use rand::{RngExt, SeedableRng, rngs::StdRng};
use shakmaty::{Position, uci::UciMove};

const SYSTEM: &str = "You play chess, and you want to win.\nStudy the position, weigh a few candidate moves, and reason step by step as long as you like.\nWrite the move in UCI notation: the from-square then the to-square, such as e2e4 or g1f3, with a promotion piece letter when a pawn promotes (e7e8q).\nEnd your answer with the move alone inside a ``` fenced block.";

const WORDS: &[&str] = &[
    "the",
    "knight",
    "bishop",
    "centre",
    "control",
    "pawn",
    "structure",
    "king",
    "safety",
    "open",
    "file",
    "attack",
    "defend",
    "weak",
    "square",
    "develop",
    "tempo",
    "threat",
    "capture",
    "queen",
    "rook",
    "endgame",
    "initiative",
    "pin",
    "fork",
    "diagonal",
    "because",
    "so",
    "then",
    "and",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut games = 2000u32;
    let mut plies = 200u32;
    let mut dir = PathBuf::from("/tmp/report-scale");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--games" => games = args.next().ok_or("--games N")?.parse()?,
            "--plies" => plies = args.next().ok_or("--plies N")?.parse()?,
            "--dir" => dir = args.next().ok_or("--dir DIR")?.into(),
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("scale.db");
    if !db.exists() {
        let started = Instant::now();
        fill(&Store::open(&db)?, games, plies)?;
        eprintln!("store built in {:.1} s", started.elapsed().as_secs_f64());
    }
    let store = Store::open_read_only(&db)?;
    let selection = Selection {
        tournaments: store.tournaments()?,
        eval_runs: Vec::new(),
        ..Selection::default()
    };
    let started = Instant::now();
    let (page, stats) = html::build(&store, &selection)?;
    let took = started.elapsed();
    let out = dir.join("scale.html");
    std::fs::write(&out, &page)?;
    println!(
        "{} games: report {} ({:.1} MB) built in {:.1} s; store {:.1} MB",
        stats.games,
        out.display(),
        page.len() as f64 / 1e6,
        took.as_secs_f64(),
        std::fs::metadata(&db)?.len() as f64 / 1e6
    );
    Ok(())
}

fn fill(store: &Store, games: u32, plies: u32) -> Result<(), Box<dyn std::error::Error>> {
    let t = store.open_tournament("scale", "scale.lua", r#"{"format":"round_robin"}"#)?;
    let names = ["model-a", "model-b", "model-c", "model-d"];
    for n in names {
        store.upsert_player(
            t.id,
            &PlayerRecord::new(
                n,
                "llm",
                r#"{"model":"m","mode":"blitz","mode_options":{"legal_moves":true}}"#,
            ),
        )?;
    }
    let schedule: Vec<ScheduledGame> = (0..games)
        .map(|i| {
            let w = names[i as usize % 4];
            let b = names[(i as usize + 1 + (i as usize / 4) % 3) % 4];
            ScheduledGame::new(i, i / 2, w, b)
        })
        .collect();
    store.schedule_games(t.id, &schedule)?;
    let mut rng = StdRng::seed_from_u64(1);
    for g in store.games(t.id)? {
        store.mark_game_started(g.id, "hash", 1)?;
        let mut game = Game::new(None, plies)?;
        let mut history: Vec<String> = Vec::new();
        for ply in 0..plies {
            let legal = game.position().legal_moves();
            // Random games also end early: mate, stalemate, too little material, repetition.
            if legal.is_empty() || game.end().is_some() {
                break;
            }
            let fen = game.fen();
            let white = game.turn() == shakmaty::Color::White;
            let player = if white { &g.white } else { &g.black };
            let legal_uci: Vec<String> = legal
                .iter()
                .map(|m| UciMove::from_standard(*m).to_string())
                .collect();
            let mv = legal_uci[rng.random_range(0..legal_uci.len())].clone();
            let last: Vec<&str> = history
                .iter()
                .rev()
                .take(10)
                .rev()
                .map(String::as_str)
                .collect();
            let user = format!(
                "The position (FEN): {fen}\nYou play {}.\nThe last moves: {}\nThe legal moves: {}\nYour move?",
                if white { "White" } else { "Black" },
                last.join(" "),
                legal_uci.join(" ")
            );
            let request = serde_json::json!({
                "model": "m", "max_tokens": 512, "temperature": 0.7,
                "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            })
            .to_string();
            let words = rng.random_range(40..140);
            let reasoning: Vec<&str> = (0..words)
                .map(|_| WORDS[rng.random_range(0..WORDS.len())])
                .collect();
            let reply = format!("{}.\n```\n{mv}\n```", reasoning.join(" "));
            // One ply in ten needs a second attempt.
            let attempts = if rng.random_range(0..10) == 0 { 2 } else { 1 };
            for seq in 0..attempts {
                let id = store.record_llm_call(&LlmCallRecord {
                    game_id: Some(g.id),
                    ply,
                    seq,
                    player: player.clone(),
                    model: "m".into(),
                    endpoint: "http://127.0.0.1:1/v1".into(),
                    request_json: request.clone(),
                    reply_text: Some(if seq + 1 < attempts {
                        reasoning.join(" ")
                    } else {
                        reply.clone()
                    }),
                    prompt_tokens: Some(300),
                    completion_tokens: Some(words),
                    latency_ms: 800,
                    ..LlmCallRecord::default()
                })?;
                let (outcome, detail) = if seq + 1 < attempts {
                    ("no_move_found", "I could not find a move in your answer.")
                } else {
                    ("move", mv.as_str())
                };
                store.set_llm_call_outcome(id, outcome, Some(detail))?;
            }
            let played = game.play_uci(&mv)?;
            store.record_ply(
                g.id,
                &PlyRecord {
                    ply,
                    fen_before: fen,
                    uci: played.uci.clone(),
                    san: played.san,
                    player: player.clone(),
                    attempts,
                    elapsed_ms: 800,
                    clock_ms: None,
                },
            )?;
            let cp = rng.random_range(-300..300);
            store.record_ply_analysis(
                g.id,
                &PlyAnalysisRecord {
                    ply,
                    engine_id: "sf".into(),
                    limits_key: "depth=8".into(),
                    win_model: "lichess".into(),
                    eval_before: Score::Cp(cp),
                    eval_after: Score::Cp(-cp),
                    best: Some(mv.clone()),
                    pv: vec![mv.clone()],
                    top_json: "[]".into(),
                    played_rank: Some(1),
                    in_top: true,
                    played_score: None,
                    all_moves_json: None,
                    win_before: 50.0 + cp as f64 / 10.0,
                    win_after: 50.0 + cp as f64 / 12.0,
                    cp_loss: rng.random_range(0..200),
                    accuracy: 90.0,
                    phase: "middlegame".into(),
                    classification: ["good", "best", "inaccuracy", "mistake", "blunder"]
                        [rng.random_range(0..5)]
                    .into(),
                },
            )?;
            history.push(played.uci);
        }
        store.finish_game(g.id, "1/2-1/2", "move_limit", None)?;
    }
    Ok(())
}
