use super::*;
use crate::{
    board::ExtractRule,
    eval::{chessarena_data, datasets::read_puzzle_dir},
};

fn puzzle(fen: &str, moves: &[&str], rating: i64) -> Puzzle {
    Puzzle {
        id: "t".to_owned(),
        fen: fen.to_owned(),
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        rating,
        rating_deviation: None,
        popularity: None,
        nb_plays: None,
        themes: Vec::new(),
        game_url: None,
        opening_tags: Vec::new(),
    }
}

/// Lichess puzzle 0000D: White's setup move Qd6, then the solver (Black) plays Rd8, White takes
/// Qxd8 and the solver recaptures Bxd8.
fn two_step() -> Puzzle {
    puzzle(
        "5rk1/1p3ppp/pq3b2/8/8/1P1Q1N2/P4PPP/3R2K1 w - - 2 27",
        &["d3d6", "f8d8", "d6d8", "f6d8"],
        1580,
    )
}

#[test]
fn a_correct_line_is_solved_with_opponent_replies() {
    let mut s = PuzzleSession::new(&two_step(), 5).expect("valid puzzle");
    assert_eq!(s.history(), ["d3d6"]);
    assert_eq!(s.state(), &SessionState::Awaiting { step: 1 });
    assert_eq!(s.solver_moves(), 2);
    let out = s.submit_reply(
        "The rook goes to d8: ```\nRd8\n```",
        &ExtractRule::chessarena(),
    );
    assert_eq!(
        out,
        Outcome::Continue {
            opponent_reply: "d6d8".to_owned()
        }
    );
    assert_eq!(s.state(), &SessionState::Awaiting { step: 2 });
    let out = s.submit_reply("```\nf6d8\n```", &ExtractRule::chessarena());
    assert_eq!(
        out,
        Outcome::Finished(SessionState::Solved {
            by_alternative_mate: false
        })
    );
    assert_eq!(s.history(), ["d3d6", "f8d8", "d6d8", "f6d8"]);
    assert_eq!(s.fen(), "3b2k1/1p3ppp/pq6/8/8/1P3N2/P4PPP/3R2K1 w - - 0 29");
    // Further replies change nothing.
    assert!(matches!(
        s.submit_uci("a1a2"),
        Outcome::Finished(SessionState::Solved { .. })
    ));
}

#[test]
fn retries_are_counted_per_move() {
    let mut s = PuzzleSession::new(&two_step(), 3).expect("valid");
    let Outcome::Retry(r) = s.submit_reply("no idea", &ExtractRule::chessarena()) else {
        panic!("expected a retry");
    };
    assert_eq!(r.attempts_left, 2);
    let Outcome::Retry(r) = s.submit_uci("d6d7") else {
        panic!("illegal is a retry")
    };
    assert_eq!(r.attempts_left, 1);
    assert_eq!(s.attempts(), 2);
    let out = s.submit_uci("zz");
    assert_eq!(
        out,
        Outcome::Finished(SessionState::Failed(Failure::NoValidMove { step: 1 }))
    );
}

#[test]
fn a_wrong_legal_move_fails_at_once() {
    let mut s = PuzzleSession::new(&two_step(), 5).expect("valid");
    let out = s.submit_uci("g8h8");
    let Outcome::Finished(SessionState::Failed(f)) = out else {
        panic!("expected a failure")
    };
    assert_eq!(
        f,
        Failure::WrongMove {
            step: 1,
            played: "g8h8".into(),
            expected: "f8d8".into()
        }
    );
    assert_eq!(f.step(), 1);
}

#[test]
fn any_mate_solves() {
    // Back-rank mate: the solution says Ra8#, Re8# mates too.
    let p = puzzle(
        "6k1/5ppp/8/8/8/8/8/R3R1K1 b - - 0 1",
        &["g8h8", "a1a8"],
        500,
    );
    let mut s = PuzzleSession::new(&p, 5).expect("valid");
    assert_eq!(
        s.submit_uci("e1e8"),
        Outcome::Finished(SessionState::Solved {
            by_alternative_mate: true
        })
    );
}

#[test]
fn bad_puzzles_are_rejected() {
    assert!(
        PuzzleSession::new(
            &puzzle(
                "5rk1/1p3ppp/pq3b2/8/8/1P1Q1N2/P4PPP/3R2K1 w - - 2 27",
                &["d3d6", "a1a2"],
                1
            ),
            5
        )
        .is_err()
    );
    assert!(PuzzleSession::new(&puzzle("bad", &["d3d6", "f8d8"], 1), 5).is_err());
}

#[test]
fn bands_and_table() {
    assert_eq!(band_of(100), 0);
    assert_eq!(band_of(599), 0);
    assert_eq!(band_of(600), 1);
    assert_eq!(band_of(2999), 6);
    assert_eq!(band_of(3300), 6);
    let report = aggregate([(420, true), (450, false), (1500, true), (2700, false)]);
    assert_eq!(
        report.overall,
        Tally {
            solved: 2,
            total: 4
        }
    );
    assert_eq!(
        report.bands[0],
        Tally {
            solved: 1,
            total: 2
        }
    );
    let text = table(&[("model-a", &report)]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("Model or Engine  200-600  600-1000"),
        "{text}"
    );
    assert!(lines[0].ends_with("2600-3000  Overall"));
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        row,
        [
            "model-a", "50.0", "-", "-", "100.0", "-", "-", "0.0", "50.0"
        ]
    );
}

/// Every ChessArena puzzle can be set up, and playing its own solution solves it.
#[test]
fn chessarena_puzzles_solve_with_their_solution() {
    let Some(dir) = chessarena_data("fine-grained_evaluation/puzzles_by_rating/lite") else {
        return;
    };
    let loaded = read_puzzle_dir(&dir).expect("readable");
    let mut results = Vec::new();
    for p in &loaded.rows {
        let mut s = PuzzleSession::new(p, 5).unwrap_or_else(|e| panic!("{e}"));
        let mut i = 1;
        loop {
            match s.submit_uci(&p.moves[i]) {
                Outcome::Continue { opponent_reply } => {
                    assert_eq!(opponent_reply, p.moves[i + 1]);
                    i += 2;
                }
                Outcome::Finished(state) => {
                    assert_eq!(
                        state,
                        SessionState::Solved {
                            by_alternative_mate: false
                        },
                        "{}",
                        p.id
                    );
                    break;
                }
                Outcome::Retry(r) => panic!("{}: {}", p.id, r.message),
            }
        }
        results.push((p.rating, true));
    }
    let report = aggregate(results);
    assert_eq!(report.overall.total, 1000);
    let per_band: Vec<usize> = report.bands.iter().map(|t| t.total).collect();
    assert_eq!(per_band, [143, 143, 143, 143, 143, 143, 142]);
}
