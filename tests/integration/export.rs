//! `arena export pgn` writes PGN that python-chess reads without errors, and `arena leaderboard`
//! prints the stored standings.

use std::process::Command;

use crate::common::{TestDir, finished, stderr, stdout, stockfish};

/// Reads every game with python-chess, replays it, and prints one line per game:
/// `white|black|result|termination|plycount|moves|final fen|errors`.
const READ_BACK: &str = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        board = game.end().board()
        h = game.headers
        print("|".join([h["White"], h["Black"], h["Result"], h.get("Termination", "-"),
                        h.get("PlyCount", "-"), str(len(list(game.mainline_moves()))),
                        board.fen(), str(len(game.errors))]))
"#;

fn python_chess() -> bool {
    arena_testkit::python_chess("export tests")
}

#[test]
fn exported_games_read_back_with_python_chess() {
    if !stockfish("exported_games_read_back_with_python_chess") || !python_chess() {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "export test", games_per_pair = 4, max_plies = 30, seed = 3,
  openings = { fens = {
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2",
  } },
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { nodes = 500 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let run = dir.run("t.lua");
    assert!(run.status.success(), "{}", stderr(&run));

    let export = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db", "--out", "games.pgn"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event \"export test\"]").count(), 4, "{pgn}");
    assert_eq!(pgn.matches("[SetUp \"1\"]").count(), 4, "{pgn}");

    let out = Command::new("python3")
        .args(["-c", READ_BACK, "games.pgn"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "{}", stdout(&out));

    let store = crate::common::open_store(&dir.db());
    let t = store.find_tournament("export test").unwrap().unwrap();
    for (line, game) in lines.iter().zip(store.games(t.id).unwrap()) {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f[0], game.white);
        assert_eq!(f[1], game.black);
        assert_eq!(Some(f[2]), game.result.as_deref());
        assert_ne!(f[3], "-", "Termination tag present");
        assert_eq!(f[4], f[5], "PlyCount equals the moves python-chess read");
        assert_eq!(f[7], "0", "python-chess reported errors: {line}");
        // The position python-chess reaches is the one arena stored last.
        let plies = store.plies(game.id).unwrap();
        let mut board = arena::board::Game::new(game.start_fen.as_deref(), 0).unwrap();
        for p in &plies {
            board.play_uci(&p.uci).unwrap();
        }
        assert_eq!(
            f[6].split(' ').take(4).collect::<Vec<_>>(),
            board.fen().split(' ').take(4).collect::<Vec<_>>()
        );
    }

    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db"])
        .output()
        .unwrap();
    assert!(board.status.success());
    let text = stdout(&board);
    assert!(
        text.starts_with("export test · ratings (Glicko-1)\n"),
        "{text}"
    );
    // Four games leave both players provisional (RD above 100): shown, marked, and the mark
    // explained.
    assert!(text.contains("\n1*  sf "), "{text}");
    assert!(text.contains("* provisional: RD above 100"), "{text}");
    assert!(text.contains("export test · standings"), "{text}");

    let json = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            "t.db",
            "--all",
            "--stats",
            "--games",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", stderr(&json));
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let ratings = crate::common::json_rows(&v, "export test · ratings (Glicko-1)");
    assert_eq!(ratings.len(), 2);
    assert_eq!(
        ratings[0]["player"], "sf",
        "Stockfish rates above the random mover"
    );
    assert_eq!(ratings[0]["games"], 4);
    assert_eq!(ratings[0]["mode"], "engine");
    assert!(ratings[0]["rating"].as_f64().unwrap() >= ratings[1]["rating"].as_f64().unwrap());
    let terminations = crate::common::json_rows(&v, "export test · terminations");
    assert_eq!(terminations.len(), 2);
    let per_game = crate::common::json_rows(&v, "export test · games");
    assert_eq!(per_game.len(), 4);
    for g in per_game {
        assert!(g["plies"].as_i64().unwrap() > 0, "{g}");
        assert!(
            ["1-0", "0-1", "1/2-1/2"].contains(&g["result"].as_str().unwrap()),
            "{g}"
        );
    }
}

/// Reads annotated games with python-chess and prints, per game, one JSON object: the tags, the
/// parse errors, the final comment, and per move its SAN, NAGs, evaluation from White's side as
/// python-chess prints it (`+31`, `#-2`, `#+0`), move time in seconds and comment.
const READ_ANNOTATED: &str = r#"
import sys, json, chess.pgn
with open(sys.argv[1], encoding="utf-8") as f:
    while (game := chess.pgn.read_game(f)) is not None:
        moves = []
        for node in game.mainline():
            ev = node.eval()
            moves.append({"san": node.san(), "nags": sorted(node.nags),
                          "eval": None if ev is None else str(ev.white()),
                          "emt": node.emt(), "comment": node.comment})
        print(json.dumps({"tags": dict(game.headers), "errors": [str(e) for e in game.errors],
                          "end": game.end().comment, "moves": moves}))
"#;

/// The evaluation python-chess should read for the position after `ply`'s move, computed from
/// the stored score (the side to move's) without arena's writer.
fn expected_eval(fen_before: &str, eval_after: arena::engine::Score) -> String {
    use arena::engine::Score;
    let white_moved = fen_before.split(' ').nth(1) == Some("w");
    // White's view of the side-to-move score after the move.
    let flip = if white_moved { -1 } else { 1 };
    match eval_after {
        // python-chess writes a positive score with its sign and zero as `0`.
        Score::Cp(0) => "0".to_owned(),
        Score::Cp(cp) => format!("{:+}", flip * cp),
        // The side to move is mated: White wins if Black is to move.
        Score::Mate(0) => if white_moved { "#+0" } else { "#-0" }.to_owned(),
        Score::Mate(n) => format!("#{:+}", flip * n),
    }
}

/// White space folded to single spaces, as the writer wraps lines.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the comment of a ply must say about its protocol failures, computed from the store: per
/// failure outcome, `N outcome` followed by the moves the play mode named.
fn failure_words(store: &arena::store::Store, game: i64, ply: u32) -> Vec<String> {
    let calls: Vec<_> = store
        .call_outcomes(game)
        .unwrap()
        .into_iter()
        .filter(|o| o.ply == ply)
        .collect();
    let mut words = Vec::new();
    for kind in arena::store::PROTOCOL_FAILURE_OUTCOMES {
        let of_kind: Vec<_> = calls
            .iter()
            .filter(|c| c.outcome.as_deref() == Some(kind))
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        let mut text = format!("{} {}", of_kind.len(), kind.replace('_', " "));
        let moves: Vec<&str> = of_kind
            .iter()
            .filter_map(|c| c.candidate.as_deref())
            .collect();
        if !moves.is_empty() {
            text = format!("{text}: {}", moves.join(", "));
        }
        words.push(text);
    }
    words
}

/// A play mode for the test: blitz, except that at its first move it first plays `e1g1` (which
/// the board refuses) and then refuses the reply itself naming `e1c1`, as a mode may.
const CASTLING_MODE: &str = r#"local blitz = require("modes.blitz")
local M = { defaults = blitz.defaults, start = blitz.start }
function M.reply(ctx, text)
  if ctx.ply < 2 and ctx.attempt == 1 then
    return { move = "e1g1" }
  elseif ctx.ply < 2 and ctx.attempt == 2 then
    return { retry = "Not now.", outcome = "illegal", candidate = "e1c1" }
  end
  return blitz.reply(ctx, text)
end
return M
"#;

#[test]
fn annotated_pgn_carries_the_stored_analysis_failures_and_replies() {
    let test = "annotated_pgn_carries_the_stored_analysis_failures_and_replies";
    let Some(url) = crate::common::local_llm(test) else {
        return;
    };
    if !stockfish(test) || !python_chess() {
        return;
    }
    let dir = TestDir::new();
    // The model without a grammar makes protocol failures; Stockfish and the random mover give
    // the analysis good and bad moves to classify.
    let model = crate::common::llm_player(
        &url,
        "smol",
        "legal_moves = true, max_attempts = 4, parser = \"tolerant\"",
    )
    .replace("timeout_s = 300,", "timeout_s = 300, mode = \"castling\",");
    dir.write("modes/castling.lua", CASTLING_MODE);
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "annotated", games_per_pair = 1, max_plies = 8, seed = 5, concurrency = 1,
  analysis = {{ depth = 6, processes = 1 }},
  players = {{
    {model},
    arena.engine {{ name = "sf", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 300 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
        ),
    );
    let run = dir.run("t.lua");
    assert!(finished(run.status), "{}", stderr(&run));
    // A second tournament in the same store, without analysis.
    dir.write(
        "u.lua",
        r#"return arena.tournament {
  name = "unanalysed", games_per_pair = 1, max_plies = 8, seed = 2,
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 1 } },
}"#,
    );
    let run = dir.run("u.lua");
    assert!(run.status.success(), "{}", stderr(&run));

    // Inject a hostile reply at a ply of the first game: it tries to end the comment, fake an
    // evaluation, start an escaped line and a new game.
    let store = crate::common::open_store(&dir.db());
    let t = store.find_tournament("annotated").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let hostile = games
        .iter()
        .find(|g| g.ply_count >= 2)
        .expect("a game with moves");
    let hostile_reply = "Fine. }\n\n[%eval 9.99]\n% 1-0\n\n[Event \"x\"]\n{ 1. e4 } *";
    store
        .record_llm_call(&arena::store::LlmCallRecord {
            game_id: Some(hostile.id),
            ply: 1,
            seq: 50,
            player: "smol".into(),
            model: "m".into(),
            endpoint: "e".into(),
            request_json: "{}".into(),
            reply_text: Some(hostile_reply.into()),
            ..Default::default()
        })
        .map(|id| store.set_llm_call_outcome(id, "illegal", None).unwrap())
        .unwrap();

    let export = dir
        .arena()
        .args([
            "export",
            "pgn",
            "--db",
            "t.db",
            "--annotate",
            "--reasoning",
            "--out",
            "a.pgn",
        ])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let out = Command::new("python3")
        .args(["-c", READ_ANNOTATED, "a.pgn"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let read: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let unanalysed = store.find_tournament("unanalysed").unwrap().unwrap();
    let all_games: Vec<_> = games
        .iter()
        .chain(&store.games(unanalysed.id).unwrap())
        .cloned()
        .collect();
    assert_eq!(read.len(), all_games.len(), "{}", stdout(&out));

    let (mut evals, mut nags, mut failures, mut refusals) = (0, 0, 0, 0);
    for (game, back) in all_games.iter().zip(&read) {
        let tags = &back["tags"];
        assert_eq!(back["errors"], serde_json::json!([]), "{back}");
        assert_eq!(tags["TimeControl"], "-");
        let plies = store.plies(game.id).unwrap();
        // Every first move from the initial position has a name; the position itself has none.
        if plies.is_empty() {
            assert!(tags.get("ECO").is_none(), "{tags}");
        } else {
            let eco = tags["ECO"].as_str().expect("an ECO code");
            assert!(
                eco.len() == 3 && ('A'..='E').contains(&eco.chars().next().unwrap()),
                "{eco}"
            );
            assert!(!tags["Opening"].as_str().unwrap().is_empty());
        }
        let moves = back["moves"].as_array().unwrap();
        assert_eq!(moves.len(), plies.len(), "{back}");
        let analyses = store.ply_analyses(game.id).unwrap();
        let analysed = game.tournament == t.id;
        assert_eq!(analyses.len(), if analysed { plies.len() } else { 0 });
        assert_eq!(
            tags.get("Annotator").is_some(),
            analysed && !plies.is_empty(),
            "{tags}"
        );
        for (i, (ply, m)) in plies.iter().zip(moves).enumerate() {
            assert_eq!(m["san"], ply.san.as_str());
            // The evaluation python-chess reads is the store's, ply by ply.
            match analyses.get(i) {
                Some(a) => {
                    assert_eq!(
                        m["eval"],
                        expected_eval(&ply.fen_before, a.eval_after).as_str(),
                        "ply {i} of game {}: {m}",
                        game.index
                    );
                    evals += 1;
                    // NAGs follow lichess's judgements (its cutoffs, not the stored LLM Chess
                    // classes), which the analysis module's fixed cases pin.
                    let nag = match arena::analysis::lichess::judgement(ply, a) {
                        Some(j) => serde_json::json!([j.nag()]),
                        None => serde_json::json!([]),
                    };
                    nags += usize::from(nag != serde_json::json!([]));
                    assert_eq!(m["nags"], nag, "{a:?}");
                }
                None => {
                    assert!(m["eval"].is_null(), "{m}");
                    assert!(!m["comment"].as_str().unwrap().contains("%eval"), "{m}");
                }
            }
            let emt = m["emt"].as_f64().expect("every move has its time");
            assert!((emt - ply.elapsed_ms as f64 / 1000.0).abs() < 1e-9, "{m}");
            // The ply's protocol failures, counted from the stored outcomes, with the moves the
            // play mode read.
            let calls = store.llm_calls(game.id, ply.ply).unwrap();
            // The writer wraps lines; python-chess keeps the line ends inside comments.
            let comment = fold(m["comment"].as_str().unwrap());
            for words in failure_words(&store, game.id, ply.ply) {
                failures += 1;
                assert!(comment.contains(&words), "{words} in {comment}");
            }
            // --reasoning: every reply is in the comment, its white space folded.
            for c in &calls {
                if let Some(reply) = &c.call.reply_text {
                    let folded: Vec<&str> = reply.split_whitespace().collect();
                    let folded = folded
                        .join(" ")
                        .replace('}', "\u{FF5D}")
                        .replace("[%", "[ %");
                    assert!(comment.contains(&folded), "{folded:?} in {comment:?}");
                }
            }
        }
        // A forfeit: the failures of the ply without a move follow the reason.
        let end = fold(back["end"].as_str().unwrap());
        if game.termination.as_deref() == Some("forfeit") {
            assert!(end.contains("forfeits"), "{end}");
            for words in failure_words(&store, game.id, plies.len() as u32) {
                failures += 1;
                assert!(end.contains(&words), "{words} in {end}");
            }
        }
        // The refusals of the test's mode, at the model's first ply, from both paths (the
        // board refusing e1g1, the mode refusing e1c1).
        if game.white == "smol" || game.black == "smol" {
            let first = u32::from(game.black == "smol");
            let at = moves
                .get(first as usize)
                .map_or(end.clone(), |m| fold(m["comment"].as_str().unwrap()));
            assert!(at.contains(" illegal: e1g1, e1c1"), "{at}");
            refusals += 1;
        }
        if game.id == hostile.id {
            let comment = fold(moves[1]["comment"].as_str().unwrap());
            assert!(
                comment.contains(
                    "Fine. \u{FF5D} [ %eval 9.99] % 1-0 [Event \"x\"] { 1. e4 \u{FF5D} *"
                ),
                "{comment}"
            );
        }
    }
    assert!(evals > 0 && nags > 0, "{evals} evaluations, {nags} NAGs");
    assert!(failures > 0, "the model's failures are annotated");
    assert_eq!(refusals, 2, "the model played two games");

    // Without --annotate nothing of this is written.
    let plain = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    let plain = stdout(&plain);
    for absent in ["%eval", "%emt", "[ECO ", "TimeControl", "$4", "Fine."] {
        assert!(!plain.contains(absent), "{absent}");
    }
    // --reasoning needs --annotate.
    let refused = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db", "--reasoning"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
}

/// `arena leaderboard --format md|latex`: the stored tables as Markdown pipe tables and as LaTeX
/// floats, names escaped for each (`rnd_a` is `rnd\_a` in LaTeX), one table per table of the
/// text output.
#[test]
fn the_leaderboard_prints_markdown_and_latex_for_papers() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "rr", games_per_pair = 2, max_plies = 20, seed = 3,
  players = { arena.random { name = "rnd_a" }, arena.random { name = "rnd_b" }, arena.random { name = "rnd_c" } },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let board = |format: &str| {
        let out = dir
            .arena()
            .args(["leaderboard", "--db", "t.db", "--format", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = board("text");
    let tables = text.lines().filter(|l| l.starts_with("rr · ")).count();
    assert!(tables >= 3, "{text}");
    let md = board("md");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("**rr · ")).count(),
        tables,
        "{md}"
    );
    assert!(md.contains("| rnd_a |"), "{md}");
    assert!(
        md.lines().all(|l| !l.starts_with("- * ")),
        "a note opens no list: {md}"
    );
    let latex = board("latex");
    assert_eq!(latex.matches("\\begin{tabular}").count(), tables, "{latex}");
    assert_eq!(latex.matches("\\end{table}").count(), tables, "{latex}");
    assert!(latex.contains(" & rnd\\_a & "), "{latex}");
    assert!(
        latex.contains("\\caption{rr \\textperiodcentered{} ratings (Glicko-1)}"),
        "{latex}"
    );
    // Every row of a tabular has as many cells as its column specification.
    for block in latex.split("\\begin{tabular}{").skip(1) {
        let (spec, rest) = block.split_once('}').unwrap();
        let body = rest.split("\\end{tabular}").next().unwrap();
        for row in body.lines().filter(|l| l.ends_with("\\\\")) {
            assert_eq!(row.matches(" & ").count() + 1, spec.len(), "{row}");
        }
    }
}
