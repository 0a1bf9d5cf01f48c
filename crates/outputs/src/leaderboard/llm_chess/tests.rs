//! The LLM Chess table on hand-made results.

use super::*;
use crate::rating::elo_anchor::{Block, Color as EloColor};

fn player(name: &str, kind: &str, settings: &str) -> PlayerRow {
    PlayerRow {
        id: 0,
        tournament: 1,
        name: name.into(),
        kind: kind.into(),
        settings_json: settings.into(),
    }
}

fn game(
    id: i64,
    white: &str,
    black: &str,
    result: GameResult,
    termination: Termination,
    plies: u32,
) -> FinishedGame {
    FinishedGame {
        id,
        white: white.into(),
        black: black.into(),
        result,
        termination,
        plies,
        moves: moves(plies, termination),
        material: (39, 39),
    }
}

fn call(game_id: i64, ply: u32, outcome: &str, completion: u64) -> CallSummary {
    CallSummary {
        game_id,
        ply,
        player: "m".into(),
        model: "gpt-4o-mini".into(),
        prompt_tokens: Some(1000),
        completion_tokens: Some(completion),
        details: Default::default(),
        outcome: Some(outcome.into()),
        latency_ms: 0,
    }
}

fn cell<'a>(t: &'a Table, row: usize, column: &str) -> &'a Cell {
    let i = t.columns.iter().position(|c| c == column).unwrap();
    &t.rows[row][i]
}

fn num(c: &Cell) -> f64 {
    match c {
        Cell::Num(x, _) => *x,
        other => panic!("expected a number, got {other:?}"),
    }
}

fn players() -> Vec<PlayerRow> {
    vec![
        player("m", "llm", r#"{"mode":"agentic"}"#),
        player("rnd", "random", r#"{"anchor_elo":-122.27}"#),
        player("sf", "engine", r#"{"anchor_elo":250.0}"#),
    ]
}

#[test]
fn the_metrics_of_a_hand_made_record() {
    let mut lost = game(
        4,
        "m",
        "sf",
        GameResult::BlackWins,
        Termination::TooManyWrongActions,
        10,
    );
    lost.material = (30, 39);
    let games = vec![
        game(
            1,
            "rnd",
            "m",
            GameResult::BlackWins,
            Termination::Checkmate,
            40,
        ),
        game(
            2,
            "rnd",
            "m",
            GameResult::BlackWins,
            Termination::Checkmate,
            60,
        ),
        game(3, "rnd", "m", GameResult::Draw, Termination::MoveLimit, 200),
        lost,
        game(
            5,
            "m",
            "sf",
            GameResult::WhiteWins,
            Termination::Checkmate,
            90,
        ),
    ];
    let calls = vec![
        call(1, 1, "get_current_board", 10),
        call(1, 1, "get_legal_moves", 10),
        call(1, 1, "move", 10),
        call(1, 3, "wrong_action", 10),
        call(1, 3, "wrong_move", 10),
        call(1, 3, "move", 10),
        call(4, 0, "wrong_action", 10),
        call(4, 0, "wrong_action", 10),
        call(4, 0, "wrong_move", 10),
        // A game that is not in the list (unfinished) is ignored.
        call(99, 0, "wrong_action", 10),
    ];
    let t = table(&players(), &games, &calls, 200, &PriceTable::built_in());
    assert_eq!(t.rows.len(), 1, "only model players get a row");
    assert_eq!(cell(&t, 0, "player"), &Cell::Text("m".into()));
    assert_eq!(cell(&t, 0, "games"), &Cell::Int(5));
    // W 3, D 1, L 1: ((3 − 1)/5)/2 + 0.5 = 70 %.
    assert!((num(cell(&t, 0, "Win/Loss %")) - 70.0).abs() < 1e-9);
    let margin = elo_anchor::win_loss(3, 1, 1).unwrap().normalised_margin95 * 100.0;
    assert!((num(cell(&t, 0, "±95%")) - margin).abs() < 1e-9);
    assert_eq!(cell(&t, 0, "draws by"), &Cell::Text("move limit 1".into()));
    // Four whole games and one cut at its 11th move (10 plies and the turn it failed at) of 200.
    assert!((num(cell(&t, 0, "duration %")) - 100.0 * (4.0 + 11.0 / 200.0) / 5.0).abs() < 1e-9);
    // 3 wrong actions and 2 wrong moves in 401 moves (the failed turn counts, as LLM Chess counts it).
    assert!((num(cell(&t, 0, "wrong actions/1000")) - 3000.0 / 401.0).abs() < 1e-9);
    assert!((num(cell(&t, 0, "wrong moves/1000")) - 2000.0 / 401.0).abs() < 1e-9);
    // 9 replies over 3 plies asked.
    assert!((num(cell(&t, 0, "actions/ply")) - 3.0).abs() < 1e-9);
    assert!((num(cell(&t, 0, "avg moves")) - 80.2).abs() < 1e-9);
    // 90 completion tokens over every move of the player's games, both sides', as LLM Chess
    // divides them (not over the 3 plies it was asked at).
    assert!((num(cell(&t, 0, "tokens/move")) - 90.0 / 401.0).abs() < 1e-9);
    // gpt-4o-mini: $0.15 per million prompt tokens, $0.60 per million completion tokens.
    let cost = 9.0 * (1000.0 * 0.15 + 10.0 * 0.60) / 1e6 / 5.0;
    assert!((num(cell(&t, 0, "cost/game $")) - cost).abs() < 1e-12);
    // Material: even in four games, 9 down in the lost one.
    assert!((num(cell(&t, 0, "material diff")) + 9.0 / 5.0).abs() < 1e-9);
    assert_eq!(cell(&t, 0, "games vs"), &Cell::Text("rnd 3, sf 2".into()));

    // Elo from the colour actually played in each game.
    let expected = elo_anchor::estimate(&[
        Block::new(-122.27, 2, 1, 0).played_as(EloColor::Black, WHITE_ADVANTAGE),
        Block::new(250.0, 1, 0, 1).played_as(EloColor::White, WHITE_ADVANTAGE),
    ])
    .unwrap();
    assert!((num(cell(&t, 0, "Elo")) - expected.elo().unwrap()).abs() < 1e-9);
    assert!((num(cell(&t, 0, "Elo ±95%")) - expected.margin95().unwrap()).abs() < 1e-9);
}

#[test]
fn a_calibrated_anchors_own_error_widens_the_elo_interval() {
    let games = vec![
        game(
            1,
            "m",
            "sf",
            GameResult::WhiteWins,
            Termination::Checkmate,
            40,
        ),
        game(
            2,
            "sf",
            "m",
            GameResult::WhiteWins,
            Termination::Checkmate,
            40,
        ),
        game(3, "m", "sf", GameResult::Draw, Termination::MoveLimit, 200),
    ];
    let margin = |sf_settings: &str| {
        let players = vec![
            player("m", "llm", r#"{"mode":"agentic"}"#),
            player("sf", "engine", sf_settings),
        ];
        let t = table(&players, &games, &[], 200, &PriceTable::built_in());
        (num(cell(&t, 0, "Elo")), num(cell(&t, 0, "Elo ±95%")))
    };
    let (elo, exact) = margin(r#"{"anchor_elo":250.0}"#);
    let (same, wide) = margin(r#"{"anchor_elo":250.0,"anchor_se":40.0}"#);
    assert_eq!(elo, same);
    // One opponent: the errors add in quadrature.
    let want = (exact * exact + (1.96f64 * 40.0).powi(2)).sqrt();
    assert!((wide - want).abs() < 1e-9, "{wide} vs {want}");
}

#[test]
fn colour_is_corrected_per_game() {
    let record = |white_is_model: bool| {
        let games: Vec<FinishedGame> = (0..4)
            .map(|i| {
                let (w, b) = if white_is_model {
                    ("m", "sf")
                } else {
                    ("sf", "m")
                };
                let model_wins = i < 3;
                let result = match (white_is_model, model_wins) {
                    (true, true) | (false, false) => GameResult::WhiteWins,
                    _ => GameResult::BlackWins,
                };
                game(i, w, b, result, Termination::Checkmate, 50)
            })
            .collect();
        let t = table(&players(), &games, &[], 200, &PriceTable::built_in());
        num(cell(&t, 0, "Elo"))
    };
    // The same score is worth 70 points more with Black (35 each way).
    assert!((record(false) - record(true) - 70.0).abs() < 1e-6);
}

#[test]
fn sweeps_give_one_sided_bounds_and_unpriced_models_no_cost() {
    let games = vec![
        game(
            1,
            "rnd",
            "m",
            GameResult::BlackWins,
            Termination::Checkmate,
            30,
        ),
        game(
            2,
            "rnd",
            "m",
            GameResult::BlackWins,
            Termination::Checkmate,
            30,
        ),
    ];
    let mut c = call(1, 1, "move", 5);
    c.model = "smollm2-135m".into();
    let t = table(&players(), &games, &[c], 200, &PriceTable::built_in());
    let Cell::Text(elo) = cell(&t, 0, "Elo") else {
        panic!("a bound is text");
    };
    assert!(elo.starts_with("≥ "), "{elo}");
    assert_eq!(cell(&t, 0, "cost/game $"), &Cell::Empty);
    assert!((num(cell(&t, 0, "Win/Loss %")) - 100.0).abs() < 1e-9);

    let lost = vec![game(
        1,
        "rnd",
        "m",
        GameResult::WhiteWins,
        Termination::MaxTurns,
        20,
    )];
    let t = table(&players(), &lost, &[], 200, &PriceTable::built_in());
    let Cell::Text(elo) = cell(&t, 0, "Elo") else {
        panic!("a bound is text");
    };
    assert!(elo.starts_with("≤ "), "{elo}");
    // 20 plies and the turn it failed at: 21 of 200 moves.
    assert!((num(cell(&t, 0, "duration %")) - 10.5).abs() < 1e-9);
}

#[test]
fn players_without_anchored_opponents_have_no_elo_and_the_order_follows_win_loss() {
    let players = vec![
        player("m", "llm", r#"{"mode":"agentic"}"#),
        player("n", "moa", r#"{"mode":"agentic"}"#),
    ];
    let games = vec![game(
        1,
        "m",
        "n",
        GameResult::BlackWins,
        Termination::Checkmate,
        30,
    )];
    let t = table(&players, &games, &[], 200, &PriceTable::built_in());
    assert_eq!(cell(&t, 0, "player"), &Cell::Text("n".into()));
    assert_eq!(cell(&t, 0, "Elo"), &Cell::Empty);
    assert!(applies(&players));
    assert!(!applies(&[player("x", "llm", r#"{"mode":"blitz"}"#)]));
}

#[test]
fn material_counts_pieces() {
    let game = Game::new(Some("4k3/8/8/8/8/8/PPP5/RN2K2Q w - - 0 1"), 0).unwrap();
    assert_eq!(material(game.position()), (3 + 5 + 3 + 9, 0));
}

#[test]
fn a_call_without_usage_makes_tokens_and_cost_unknown_not_cheaper() {
    let games = vec![game(
        1,
        "m",
        "rnd",
        GameResult::WhiteWins,
        Termination::Checkmate,
        20,
    )];
    let mut unknown = call(1, 2, "move", 10);
    unknown.prompt_tokens = None;
    unknown.completion_tokens = None;
    let calls = vec![call(1, 0, "move", 10), unknown];
    let t = table(&players(), &games, &calls, 200, &PriceTable::built_in());
    let unknown = Cell::Text(UNKNOWN.into());
    assert_eq!(cell(&t, 0, "cost/game $"), &unknown);
    assert_eq!(cell(&t, 0, "tokens/move"), &unknown);
    assert!(
        t.notes.iter().any(|n| n.contains("without usage by m (1)")),
        "{:?}",
        t.notes
    );
}

#[test]
fn the_provider_s_own_price_wins_and_the_notes_say_so() {
    let games = vec![game(
        1,
        "m",
        "rnd",
        GameResult::WhiteWins,
        Termination::Checkmate,
        20,
    )];
    // One call the provider priced (its usage unreported), one left to the table, with 600 of
    // its 1000 prompt tokens cached (gpt-4o-mini: $0.15 input, $0.075 cached, $0.60 output).
    let mut by_provider = call(1, 0, "move", 10);
    by_provider.prompt_tokens = None;
    by_provider.completion_tokens = None;
    by_provider.details.provider_cost_usd = Some(0.01);
    let mut by_table = call(1, 2, "move", 10);
    by_table.details.cached_tokens = Some(600);
    let t = table(
        &players(),
        &games,
        &[by_provider, by_table],
        200,
        &PriceTable::built_in(),
    );
    let cost = 0.01 + (400.0 * 0.15 + 600.0 * 0.075 + 10.0 * 0.60) / 1e6;
    assert!((num(cell(&t, 0, "cost/game $")) - cost).abs() < 1e-12);
    assert_eq!(cell(&t, 0, "tokens/move"), &Cell::Text(UNKNOWN.into()));
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("calls priced by the provider by m (1 of 2)")),
        "{:?}",
        t.notes
    );
}

#[test]
fn a_game_that_ends_on_the_board_has_its_final_material() {
    use crate::store::{PlayerRecord, PlyRecord, ScheduledGame};
    let store = Store::open_in_memory().unwrap();
    let t = store.open_tournament("t", "t.lua", "{}").unwrap();
    for name in ["w", "b"] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
            .unwrap();
    }
    store
        .schedule_games(t.id, &[ScheduledGame::new(1, 0, "w", "b")])
        .unwrap();
    let row = store.games(t.id).unwrap().remove(0);
    store.mark_game_started(row.id, "h", 1).unwrap();
    // 1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6 4.Qxf7#: Black is a pawn down in the mated position.
    let mut game = Game::new_in(crate::board::Variant::Standard, None, 0).unwrap();
    for (n, uci) in ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"]
        .iter()
        .enumerate()
    {
        let fen_before = game.fen();
        let played = game.play_uci(uci).unwrap();
        store
            .record_ply(
                row.id,
                &PlyRecord {
                    ply: n as u32,
                    fen_before,
                    uci: played.uci,
                    san: played.san,
                    player: if n % 2 == 0 { "w" } else { "b" }.into(),
                    attempts: 1,
                    elapsed_ms: 1,
                    clock_ms: None,
                },
            )
            .unwrap();
    }
    store.finish_game(row.id, "1-0", "checkmate", None).unwrap();
    let g = finished(&store, &store.game(row.id).unwrap())
        .unwrap()
        .expect("a finished game");
    assert_eq!(g.material, (39, 38));
    assert_eq!((g.plies, g.moves), (7, 7));
}

#[test]
fn a_turn_that_returned_without_a_move_counts_as_a_move_and_one_the_api_refused_does_not() {
    // As `run()` in maxim-saplin/llm_chess (llm_chess.py) counts `number_of_moves`: 20 plies
    // made, then a turn that came back without a move counts 21; a turn whose request the API
    // refused raises before the count, 20; a game decided on the board, its plies.
    for (termination, want) in [
        (Termination::TooManyWrongActions, 21),
        (Termination::MaxTurns, 21),
        (Termination::Forfeit, 21),
        (Termination::ContextExceeded, 20),
        (Termination::RequestRejected, 20),
        (Termination::Checkmate, 20),
        (Termination::MoveLimit, 20),
    ] {
        assert_eq!(moves(20, termination), want, "{termination:?}");
    }
}
