use super::*;
use crate::eval::chessarena_data;

const PUZZLE_ROWS: &str = r#"{"PuzzleId": "a1", "FEN": "6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 1", "Moves": ["g8f8", "a1a8"], "Rating": 420, "RatingDeviation": 80, "Popularity": 90, "NbPlays": 10, "Themes": "mate mateIn1", "GameUrl": "https://lichess.org/x", "OpeningTags": NaN}
{"PuzzleId": "bad", "FEN": "8/8/8/8/8/8/8/8 w - - 0 1", "Moves": ["e2e4"], "Rating": 900}
not json at all

{"PuzzleId": "a2", "FEN": "6k1/5ppp/8/8/8/8/8/R5K1 b - - 0 1", "Moves": "g8h8 a1a8", "Rating": 1500.0, "Themes": "mate", "OpeningTags": "Sicilian_Defense Sicilian_Defense_Other", "note": "NaN inside a string stays"}
"#;

#[test]
fn puzzles_jsonl_keeps_good_rows_and_locates_bad_ones() {
    let loaded = parse_puzzles_jsonl(PUZZLE_ROWS, "mem.jsonl");
    let ids: Vec<&str> = loaded.rows.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["a1", "a2"]);
    assert_eq!(loaded.rows[0].opening_tags, Vec::<String>::new());
    assert_eq!(loaded.rows[0].moves, ["g8f8", "a1a8"]);
    assert_eq!(loaded.rows[1].moves, ["g8h8", "a1a8"]);
    assert_eq!(loaded.rows[1].rating, 1500);
    assert_eq!(loaded.rows[1].opening_tags.len(), 2);
    assert_eq!(loaded.rows[0].themes, ["mate", "mateIn1"]);
    let lines: Vec<usize> = loaded.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [2, 3]);
    assert!(loaded.errors[0].to_string().starts_with("mem.jsonl:2: "));
    assert!(
        loaded.errors[0].message.contains("setup move"),
        "{}",
        loaded.errors[0]
    );
}

#[test]
fn non_finite_tokens_outside_strings_become_null() {
    let v: Value = parse_json_lenient(
        r#"{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN Infinity", "d": "x\"NaN"}"#,
    )
    .expect("lenient JSON");
    assert_eq!(v["a"], Value::Null);
    assert_eq!(v["b"], serde_json::json!([null, null]));
    assert_eq!(v["c"], "NaN Infinity");
    assert_eq!(v["d"], "x\"NaN");
    assert!(parse_json_lenient::<Value>("{\"a\": NaNa}").is_err());
}

#[test]
fn lichess_csv_is_read_by_header() {
    let csv = "PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags\n\
00008,r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24,f2g3 e6e7 b2b1 b3c1 b1c1 h6c1,1913,75,94,6230,crushing hangingPiece long middlegame,https://lichess.org/787zsVup/black#48,\n\
0000D,5rk1/1p3ppp/pq3b2/8/8/1P1Q1N2/P4PPP/3R2K1 w - - 2 27,d3d6 f8d8 d6d8 f6d8,1580,73,97,11995,\"advantage endgame short\",https://lichess.org/F8M8OS71#53,\n\
broken,fen,,abc\n";
    let loaded = parse_puzzles_csv(csv, "puzzles.csv");
    assert_eq!(loaded.rows.len(), 2, "{:?}", loaded.errors);
    let p = &loaded.rows[0];
    assert_eq!(p.id, "00008");
    assert_eq!(p.moves.len(), 6);
    assert_eq!(
        (p.rating, p.rating_deviation, p.popularity, p.nb_plays),
        (1913, Some(75), Some(94), Some(6230))
    );
    assert!(p.opening_tags.is_empty());
    assert_eq!(loaded.rows[1].themes, ["advantage", "endgame", "short"]);
    assert_eq!(loaded.errors.len(), 1);
    assert_eq!(loaded.errors[0].line, 4);
}

#[test]
fn basic_rows_take_square_and_fen_from_the_prompt() {
    let text = r#"{"system": "s", "prompt": "\nCurrent board position in FEN notation:\nk7/8/1BK5/8/8/8/7P/1N4N1 w - - 6 64\nPosition:h2\n", "ground_truth": {"piece": "P", "legal_moves": ["h2h3", "h2h4"], "current_turn": "white", "error": null}, "fen": "k7/8/1BK5/8/8/8/7P/1N4N1 w - - 6 64"}
{"prompt": "Current board position in FEN notation:\nk7/8/1BK5/8/8/8/7P/1N4N1 w - - 6 64\nPosition:a8\n", "ground_truth": {"piece": "k", "legal_moves": []}}
{"prompt": "no position", "ground_truth": {"piece": null, "legal_moves": []}}
"#;
    let loaded = parse_basic_jsonl(text, "basic.jsonl");
    assert_eq!(loaded.rows.len(), 2);
    assert_eq!(loaded.rows[0].square, "h2");
    assert_eq!(loaded.rows[0].kind, SquareKind::OwnPiece);
    assert_eq!(loaded.rows[1].kind, SquareKind::OpponentPiece);
    assert_eq!(loaded.rows[1].fen, "k7/8/1BK5/8/8/8/7P/1N4N1 w - - 6 64");
    assert_eq!(loaded.errors[0].line, 3);
}

#[test]
fn items_from_positions_have_the_right_truth() {
    let fen = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
    let king = BasicItem::from_position(fen, "e1").expect("valid");
    assert_eq!(king.piece.as_deref(), Some("K"));
    let mut moves = king.legal_moves.clone();
    moves.sort();
    assert_eq!(moves, ["e1c1", "e1d1", "e1f1", "e1g1"]);
    let black = BasicItem::from_position(fen, "a8").expect("valid");
    assert_eq!(
        (black.kind, black.legal_moves.len()),
        (SquareKind::OpponentPiece, 0)
    );
    let empty = BasicItem::from_position(fen, "e4").expect("valid");
    assert_eq!((empty.kind, empty.piece), (SquareKind::Empty, None));
    assert!(BasicItem::from_position(fen, "i9").is_err());
}

#[test]
fn generation_follows_the_sampling_and_the_seed() {
    let fens: Vec<String> = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
    ]
    .iter()
    .cycle()
    .take(3000)
    .map(|s| (*s).to_owned())
    .collect();
    let a = generate_basic_items(&fens, SquareSampling::default(), 7);
    let b = generate_basic_items(&fens, SquareSampling::default(), 7);
    let c = generate_basic_items(&fens, SquareSampling::default(), 8);
    assert!(a.errors.is_empty());
    assert_eq!(a, b);
    assert_ne!(a, c);
    let share = |k: SquareKind| a.rows.iter().filter(|i| i.kind == k).count() as f64 / 3000.0;
    // Binomial standard deviations at n = 3000 are under 0.007.
    assert!((share(SquareKind::OwnPiece) - 0.85).abs() < 0.03);
    assert!((share(SquareKind::OpponentPiece) - 0.07).abs() < 0.02);
    assert!((share(SquareKind::Empty) - 0.08).abs() < 0.02);
    for item in &a.rows {
        let again = BasicItem::from_position(&item.fen, &item.square).expect("valid");
        assert_eq!(&again, item);
    }
    let bad = generate_basic_items(&["not a fen".to_owned()], SquareSampling::default(), 1);
    assert_eq!((bad.rows.len(), bad.errors.len()), (0, 1));
}

#[test]
fn move_selection_rows() {
    let text = r#"{"fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "legal_moves": ["e2e4", "a2a3"], "top_moves": ["e2e4"], "move_with_winrate": [["e2e4", 55.5], ["a2a3", 44.0]], "system": "sys", "prompt": "p", "prompt_pgn": "pp", "other": 3}
{"fen": "x", "legal_moves": "e2e4, a2a3", "top_moves": [["e2e4", 55.5]], "move_with_winrate": []}
{"fen": "x", "legal_moves": "e2e4, a2a3", "top_moves": [["e2e4", 55.5]], "move_with_winrate": [["e2e4", NaN]]}
"#;
    let loaded = parse_move_selection_jsonl(text, "ms.jsonl");
    assert_eq!(loaded.rows.len(), 1);
    let item = &loaded.rows[0];
    assert_eq!(item.move_with_winrate[0], ("e2e4".to_owned(), 55.5));
    assert_eq!(
        item.prompts.keys().collect::<Vec<_>>(),
        ["prompt", "prompt_pgn"]
    );
    let lines: Vec<usize> = loaded.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [2, 3]);
}

#[test]
fn chessarena_puzzle_set_reads_completely() {
    let Some(dir) = chessarena_data("fine-grained_evaluation/puzzles_by_rating/lite") else {
        return;
    };
    let loaded = read_puzzle_dir(&dir).expect("the folder is readable");
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors.first());
    assert_eq!(loaded.rows.len(), 1000);
    // Files come in band order, and the ratings fit their band.
    let band = |p: &Puzzle| crate::eval::puzzles::band_of(p.rating);
    assert!(loaded.rows.windows(2).all(|w| band(&w[0]) <= band(&w[1])));
    assert_eq!(loaded.rows.iter().filter(|p| band(p) == 6).count(), 142);
    let with_tags = loaded
        .rows
        .iter()
        .filter(|p| !p.opening_tags.is_empty())
        .count();
    assert_eq!(1000 - with_tags, 805, "rows whose OpeningTags is NaN");
}

#[test]
fn chessarena_basic_set_reads_completely() {
    let Some(path) = chessarena_data(
        "fine-grained_evaluation/chess_modeling_evaluation/chess_modeling_evaluation.jsonl",
    ) else {
        return;
    };
    let loaded = read_basic_jsonl(&path).expect("readable");
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors.first());
    assert_eq!(loaded.rows.len(), 200);
    let count = |k: SquareKind| loaded.rows.iter().filter(|i| i.kind == k).count();
    assert_eq!(count(SquareKind::Empty), 19);
    // Our move generation agrees with the stored ground truth on every item.
    for item in &loaded.rows {
        let ours = BasicItem::from_position(&item.fen, &item.square).expect("valid");
        let mut a = ours.legal_moves.clone();
        let mut b = item.legal_moves.clone();
        a.sort();
        b.sort();
        assert_eq!(
            (ours.piece.as_ref(), a),
            (item.piece.as_ref(), b),
            "{} {}",
            item.fen,
            item.square
        );
    }
}
