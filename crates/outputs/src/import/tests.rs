use super::*;
use crate::import::{chessarena, llm_chess};

fn player(name: &str) -> ImportedPlayer {
    ImportedPlayer {
        name: name.to_owned(),
        kind: "llm",
        settings: serde_json::json!({}),
    }
}

fn game(moves: &[&str], result: GameResult, termination: Termination) -> ImportedGame {
    ImportedGame {
        source_id: "g".to_owned(),
        file: PathBuf::from("g.json"),
        white: player("w"),
        black: player("b"),
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        attempts: Vec::new(),
        elapsed_ms: Vec::new(),
        fens_before: Vec::new(),
        final_fen: None,
        result,
        termination,
        reason: termination.as_str().to_owned(),
        calls: Vec::new(),
        record: serde_json::Value::Null,
    }
}

const FOOLS_MATE: &[&str] = &["f2f3", "e7e5", "g2g4", "d8h4"];

#[test]
fn a_checkmate_replays_and_a_wrong_result_does_not() {
    let plies = replay(&game(
        FOOLS_MATE,
        GameResult::BlackWins,
        Termination::Checkmate,
    ))
    .unwrap();
    assert_eq!(plies.len(), 4);
    assert_eq!(plies[3].san, "Qh4#");
    assert_eq!(plies[3].player, "b");
    let err = replay(&game(
        FOOLS_MATE,
        GameResult::WhiteWins,
        Termination::Checkmate,
    ))
    .unwrap_err();
    assert!(err.contains("0-1 by checkmate"), "{err}");
    let err = replay(&game(
        &["e2e4"],
        GameResult::WhiteWins,
        Termination::Checkmate,
    ))
    .unwrap_err();
    assert!(err.contains("not one"), "{err}");
}

#[test]
fn illegal_moves_and_moves_after_the_end_are_refused() {
    let err = replay(&game(&["e2e5"], GameResult::Draw, Termination::MoveLimit)).unwrap_err();
    assert!(err.starts_with("ply 1 (`e2e5`)"), "{err}");
    let mut moves = FOOLS_MATE.to_vec();
    moves.push("e1f2");
    let err = replay(&game(&moves, GameResult::BlackWins, Termination::Checkmate)).unwrap_err();
    assert!(err.contains("ply 5"), "{err}");
}

#[test]
fn protocol_failures_are_lost_by_the_side_to_move() {
    // White to move after two plies: White forfeits.
    let two = &["e2e4", "e7e5"];
    assert!(replay(&game(two, GameResult::BlackWins, Termination::Forfeit)).is_ok());
    assert!(replay(&game(two, GameResult::WhiteWins, Termination::Forfeit)).is_err());
    assert!(replay(&game(two, GameResult::WhiteWins, Termination::MaxTurns)).is_err());
    assert!(replay(&game(two, GameResult::Draw, Termination::MoveLimit)).is_ok());
    assert!(replay(&game(two, GameResult::BlackWins, Termination::MoveLimit)).is_err());
    assert!(replay(&game(two, GameResult::Draw, Termination::EngineFailure)).is_ok());
}

#[test]
fn the_positions_a_record_gives_are_checked() {
    let mut g = game(&["e2e4"], GameResult::Draw, Termination::MoveLimit);
    g.final_fen = Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_owned());
    assert!(replay(&g).is_ok());
    g.fens_before = vec![Some("8/8/8/8/8/8/8/8 w - - 0 1".to_owned())];
    assert!(replay(&g).unwrap_err().contains("ply 1"));
}

#[test]
fn chessarena_names_players_as_its_ratings_do() {
    use chessarena::rating_name;
    assert_eq!(
        rating_name("gpt-4.1_blitz", Some(true)),
        ("gpt-4.1_blitz_True".into(), true)
    );
    assert_eq!(
        rating_name("gpt-4.1_blitz", Some(false)),
        ("gpt-4.1_blitz_False".into(), false)
    );
    // Early records lack the flag: ChessArena assumes True.
    assert_eq!(
        rating_name("deepseek-v3_blindfold", None).0,
        "deepseek-v3_blindfold_True"
    );
    assert_eq!(
        rating_name("o3_standard_False", Some(true)),
        ("o3_standard_False".into(), false)
    );
    // Random movers are renamed, the flag appended as for anyone.
    assert_eq!(
        rating_name("Random_player_blitz", None).0,
        "random_player_blitz_True"
    );
    assert_eq!(
        rating_name("random_bullet", Some(false)).0,
        "random_player_blitz_False"
    );
}

#[test]
fn termination_words_map_to_arena_terminations() {
    assert_eq!(
        chessarena::termination("75_move_rule"),
        Some(Termination::SeventyFiveMoveRule)
    );
    assert_eq!(
        chessarena::termination("forfeit"),
        Some(Termination::Forfeit)
    );
    assert_eq!(chessarena::termination("resign"), None);
    assert_eq!(
        llm_chess::termination("Max moves reached"),
        Some(Termination::MoveLimit)
    );
    assert_eq!(
        llm_chess::termination("Max turns in single dialog"),
        Some(Termination::MaxTurns)
    );
    assert_eq!(
        llm_chess::termination("ERROR OCCURED"),
        Some(Termination::EngineFailure)
    );
    assert_eq!(
        chessarena::outcome("forbidden_thinking"),
        "forbidden_reasoning"
    );
    assert_eq!(chessarena::outcome("Invalid UCI format"), "unparseable");
}

#[test]
fn keys_are_removed_at_any_depth() {
    let mut v = serde_json::json!({"api_key": "x", "a": [{"Azure_API_KEY": 1, "model": "m"}]});
    without_keys(&mut v);
    assert_eq!(v, serde_json::json!({"a": [{"model": "m"}]}));
}
