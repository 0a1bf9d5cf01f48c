//! cutechess's adjudication rules on crafted evaluation sequences.

use shakmaty::Color;

use super::*;

fn resign(score_cp: i64, moves: i64, twosided: bool) -> Adjudicator {
    Adjudicator::new(
        Some(ResignRule {
            score_cp,
            moves,
            twosided,
        }),
        None,
    )
}

fn draw(after_move: i64, score_cp: i64, moves: i64) -> Adjudicator {
    Adjudicator::new(
        None,
        Some(DrawRule {
            after_move,
            score_cp,
            moves,
        }),
    )
}

/// Feeds plies from the start position, White first, each a mover's score (`None`: no
/// evaluation) and whether it was a capture or pawn move; returns the 1-based ply count at which
/// a verdict came, and the verdict.
fn feed(adj: &mut Adjudicator, plies: &[(Option<i32>, bool)]) -> Option<(u32, Verdict)> {
    for (i, (score, irreversible)) in plies.iter().enumerate() {
        let n = u32::try_from(i).unwrap();
        let mover = if n % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        if let Some(v) = adj.add(&PlyEval {
            mover,
            plies: n + 1,
            irreversible: *irreversible,
            score: *score,
        }) {
            return Some((n + 1, v));
        }
    }
    None
}

/// Plies where White's score is `white` and Black's `black` after each of their moves, all
/// quiet moves.
fn alternate(white: &[i32], black: &[i32]) -> Vec<(Option<i32>, bool)> {
    white
        .iter()
        .zip(black)
        .flat_map(|(w, b)| [(Some(*w), false), (Some(*b), false)])
        .collect()
}

#[test]
fn resign_comes_after_exactly_the_given_moves_of_the_loser() {
    let plies = alternate(&[-1200, -1000, -1500, -1500], &[1200, 1000, 1500, 1500]);
    // White's third move at -1000 or below is ply 5.
    assert_eq!(
        feed(&mut resign(1000, 3, false), &plies),
        Some((
            5,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
    // One move fewer is not enough.
    assert_eq!(feed(&mut resign(1000, 3, false), &plies[..4]), None);
}

#[test]
fn a_score_above_the_threshold_restarts_the_loser_count() {
    // -999 is not at or below -1000: White's count restarts from its fourth move.
    let plies = alternate(
        &[-1200, -1200, -999, -1200, -1200, -1200],
        &[0, 0, 0, 0, 0, 0],
    );
    assert_eq!(
        feed(&mut resign(1000, 3, false), &plies),
        Some((
            11,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
}

#[test]
fn each_side_counts_its_own_moves_only() {
    // Black's own moves at +30 do not interrupt White's count (cutechess counts per side), and
    // Black, whose scores are positive, never resigns.
    let plies = alternate(&[-2000, -2000], &[30, 30]);
    assert_eq!(
        feed(&mut resign(1000, 2, false), &plies),
        Some((
            3,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
    // The loser can be Black, judged at its own move.
    let plies = alternate(&[500, 600, 700], &[-1000, -1000, -1000]);
    assert_eq!(
        feed(&mut resign(1000, 3, false), &plies),
        Some((
            6,
            Verdict::Resign {
                loser: Color::Black
            }
        ))
    );
}

#[test]
fn twosided_resign_also_needs_the_winner_confident() {
    // White is lost by its own scores, but Black's are below +1000 once: not two-sided yet.
    let plies = alternate(&[-1200, -1200, -1200, -1200], &[1200, 900, 1200, 1200]);
    assert_eq!(
        feed(&mut resign(1000, 3, false), &plies),
        Some((
            5,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
    // Two-sided: Black's count of moves at +1000 or more restarts at its 900 (ply 4), so its
    // third in a row is ply 10, and White resigns at its next move, ply 11 (its sixth move at
    // -1000 or below), not at ply 5 as one-sided.
    let plies = alternate(
        &[-1200, -1200, -1200, -1200, -1200, -1200],
        &[1200, 900, 1200, 1200, 1200, 1200],
    );
    assert_eq!(feed(&mut resign(1000, 3, true), &plies[..10]), None);
    assert_eq!(
        feed(&mut resign(1000, 3, true), &plies),
        Some((
            11,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
}

#[test]
fn the_thresholds_are_inclusive() {
    let plies = alternate(&[-1000], &[0]);
    assert_eq!(
        feed(&mut resign(1000, 1, false), &plies),
        Some((
            1,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
    // |score| <= 10 counts for the draw; 11 does not.
    let quiet = |s: i32| (Some(s), false);
    assert_eq!(
        feed(&mut draw(1, 10, 1), &[quiet(10), quiet(-10)]),
        Some((2, Verdict::Draw))
    );
    assert_eq!(feed(&mut draw(1, 10, 1), &[quiet(10), quiet(-11)]), None);
}

#[test]
fn draw_only_after_the_move_number() {
    // Scores at zero from the first ply: the count (2 × 2 plies) is reached at ply 4, but the
    // rule waits for move 10 on the board (ply 20, plies / 2 >= 10).
    let plies = vec![(Some(0), false); 30];
    assert_eq!(
        feed(&mut draw(10, 10, 2), &plies),
        Some((20, Verdict::Draw))
    );
    assert_eq!(feed(&mut draw(10, 10, 2), &plies[..19]), None);
}

#[test]
fn draw_needs_both_sides_moves_in_a_row() {
    // moves = 3: six consecutive plies within the score. A score out of range at ply 4 restarts
    // the count, so the sixth in a row is ply 10.
    let mut plies = vec![(Some(5), false); 12];
    plies[3] = (Some(50), false);
    assert_eq!(feed(&mut draw(1, 10, 3), &plies), Some((10, Verdict::Draw)));
}

#[test]
fn a_capture_or_pawn_move_restarts_the_draw_count() {
    // The ply that captures counts as the first of a new run (cutechess resets, then counts).
    let mut plies = vec![(Some(0), false); 12];
    plies[4] = (Some(0), true);
    // Without the capture: six in a row at ply 6. With it at ply 5: plies 5..=10.
    assert_eq!(
        feed(&mut draw(1, 10, 3), &[(Some(0), false); 12]),
        Some((6, Verdict::Draw))
    );
    assert_eq!(feed(&mut draw(1, 10, 3), &plies), Some((10, Verdict::Draw)));
}

#[test]
fn a_ply_without_evaluation_restarts_the_counts() {
    let mut plies = alternate(&[-1200, -1200, -1200, -1200], &[0, 0, 0, 0]);
    plies[2] = (None, false); // White's second move comes without a score.
    assert_eq!(
        feed(&mut resign(1000, 2, false), &plies),
        Some((
            7,
            Verdict::Resign {
                loser: Color::White
            }
        ))
    );
    let mut plies = vec![(Some(0), false); 8];
    plies[1] = (None, false);
    assert_eq!(feed(&mut draw(1, 10, 2), &plies), Some((6, Verdict::Draw)));
}

#[test]
fn draw_is_checked_before_resign() {
    // A rule set where one score meets both: the draw wins, as in cutechess.
    let mut adj = Adjudicator::new(
        Some(ResignRule {
            score_cp: 5,
            moves: 1,
            twosided: false,
        }),
        Some(DrawRule {
            after_move: 1,
            score_cp: 10,
            moves: 1,
        }),
    );
    assert_eq!(
        feed(&mut adj, &[(Some(0), false), (Some(-8), false)]),
        Some((2, Verdict::Draw))
    );
}

#[test]
fn scores_are_turned_to_the_mover_view() {
    // After White's move the engine reports Black's view: +300 for Black is -300 for White.
    assert_eq!(mover_cp(Score::Cp(300)), -300);
    assert_eq!(mover_cp(Score::Cp(-45)), 45);
    // The side to move mates in 2: the mover is lost, by more than any threshold.
    assert_eq!(mover_cp(Score::Mate(2)), -(MATE_CP - 2));
    // The side to move is mated in 1: the mover is winning.
    assert_eq!(mover_cp(Score::Mate(-1)), MATE_CP - 1);
    assert!(mover_cp(Score::Mate(-30)) > 10_000);
}

#[test]
fn the_move_limit_verdict_uses_its_threshold() {
    assert_eq!(limit_result(200, 200), GameResult::WhiteWins);
    assert_eq!(limit_result(199, 200), GameResult::Draw);
    assert_eq!(limit_result(-199, 200), GameResult::Draw);
    assert_eq!(limit_result(-200, 200), GameResult::BlackWins);
    assert_eq!(limit_result(MATE_CP - 3, 200), GameResult::WhiteWins);
}

fn spec(lua_like: serde_json::Value) -> AdjudicationSpec {
    serde_json::from_value(lua_like).expect("a spec")
}

#[test]
fn bad_rules_are_problems() {
    let players = vec![PlayerSpec::Random(
        serde_json::from_value(serde_json::json!({ "name": "rnd" })).unwrap(),
    )];
    let no_engine = spec(serde_json::json!({ "resign": { "score_cp": 1000, "moves": 4 } }));
    assert!(
        no_engine.problems(&players)[0].contains("a rule needs an engine"),
        "{:?}",
        no_engine.problems(&players)
    );
    let zero = spec(serde_json::json!({
        "engine": "stockfish",
        "resign": { "score_cp": 1000, "moves": 0 },
        "draw": { "after_move": 40, "score_cp": 10, "moves": -2 },
    }));
    let problems = zero.problems(&players);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("`resign.moves` must be at least 1, not 0")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains("`draw.moves` must be at least 1, not -2")),
        "{problems:?}"
    );
    let not_engine = spec(serde_json::json!({
        "engine": "rnd", "move_limit": {}, "nodes": 10, "depth": 3,
    }));
    let problems = not_engine.problems(&players);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("a random player, not an engine")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("not several")),
        "{problems:?}"
    );
    let none = spec(serde_json::json!({ "engine": "stockfish" }));
    assert!(none.problems(&players)[0].starts_with("no rule"));
    // A move-limit verdict with an engine of its own needs no other.
    let own = spec(serde_json::json!({ "move_limit": { "engine": "stockfish" } }));
    assert_eq!(own.problems(&players), Vec::<String>::new());
    // Unknown keys do not read.
    assert!(
        serde_json::from_value::<AdjudicationSpec>(serde_json::json!({
            "engine": "stockfish", "resign": { "score_cp": 1, "moves": 1, "two_sided": true }
        }))
        .is_err()
    );
}

#[test]
fn the_default_search_is_a_fixed_node_count() {
    let s = spec(serde_json::json!({ "engine": "stockfish", "move_limit": {} }));
    assert_eq!(s.limits(), engine::SearchLimits::nodes(DEFAULT_NODES));
    assert_eq!(s.move_limit.unwrap().threshold_cp(), DEFAULT_LIMIT_CP);
}

/// cutechess's `GameAdjudicator::addEval` and the call before it in `ChessGame::onMoveMade`,
/// written again from their text for [`agrees_with_cutechess_on_random_games`]: cutechess stores
/// the resign score negated (`-resign score=N` is a threshold of −N) and counts a "win" when
/// the mover's score is at least its negation; a move with no search (depth 0) restarts the draw
/// count and the mover's counts and judges nothing; the draw count is restarted after a capture
/// or pawn move before the move is counted.
struct Cutechess {
    draw: Option<(i64, i64, i64)>,
    resign: Option<(i64, i64, bool)>,
    draw_score_count: i64,
    resign_score_count: [i64; 2],
    win_score_count: [i64; 2],
}

impl Cutechess {
    /// `ply_count` is the board's ply count after the move; `score` `None` is a move without a
    /// search. Returns `Some(None)` for a draw and `Some(Some(loser))` for a resignation.
    fn add_eval(
        &mut self,
        side: usize,
        ply_count: i64,
        reversible_move_count: i64,
        score: Option<i64>,
    ) -> Option<Option<usize>> {
        if reversible_move_count == 0 {
            self.draw_score_count = 0;
        }
        let Some(score) = score else {
            self.draw_score_count = 0;
            self.resign_score_count[side] = 0;
            self.win_score_count[side] = 0;
            return None;
        };
        if let Some((move_num, move_count, draw_score)) = self.draw {
            if score.abs() <= draw_score {
                self.draw_score_count += 1;
            } else {
                self.draw_score_count = 0;
            }
            if ply_count / 2 >= move_num && self.draw_score_count >= move_count * 2 {
                return Some(None);
            }
        }
        if let Some((move_count, score_cp, two_sided)) = self.resign {
            let resign_score = -score_cp;
            if score <= resign_score {
                self.resign_score_count[side] += 1;
            } else {
                self.resign_score_count[side] = 0;
            }
            if score >= -resign_score {
                self.win_score_count[side] += 1;
            } else {
                self.win_score_count[side] = 0;
            }
            if self.resign_score_count[side] >= move_count
                && (!two_sided || self.win_score_count[1 - side] >= move_count)
            {
                return Some(Some(side));
            }
        }
        None
    }
}

/// Random rules and random games (scores near the thresholds, some moves without a search, some
/// captures and pawn moves): arena's adjudicator stops each game at the same ply with the same
/// verdict as the transcription of cutechess above.
#[test]
fn agrees_with_cutechess_on_random_games() {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(38);
    let mut verdicts = [0usize; 3];
    for _ in 0..3000 {
        let draw = rng.random_bool(0.7).then(|| {
            (
                rng.random_range(1..30_i64),
                rng.random_range(1..6_i64),
                rng.random_range(1..40_i64),
            )
        });
        let resign = rng.random_bool(0.7).then(|| {
            (
                rng.random_range(1..6_i64),
                rng.random_range(100..800_i64),
                rng.random_bool(0.5),
            )
        });
        let mut ours = Adjudicator::new(
            resign.map(|(moves, score_cp, twosided)| ResignRule {
                score_cp,
                moves,
                twosided,
            }),
            draw.map(|(after_move, moves, score_cp)| DrawRule {
                after_move,
                score_cp,
                moves,
            }),
        );
        let mut theirs = Cutechess {
            draw,
            resign,
            draw_score_count: 0,
            resign_score_count: [0; 2],
            win_score_count: [0; 2],
        };
        let start_ply = rng.random_range(0..4_u32);
        let scale = [30, 300, 1000][rng.random_range(0..3)];
        let drift = rng.random_range(-200..200_i64);
        let mut reversible = 0_i64;
        for n in start_ply..start_ply + 200 {
            let side = (n % 2) as usize;
            let irreversible = rng.random_bool(0.1);
            reversible = if irreversible { 0 } else { reversible + 1 };
            let score = (!rng.random_bool(0.03)).then(|| {
                let white = drift + rng.random_range(-scale..=scale);
                if side == 0 { white } else { -white }
            });
            let verdict = ours.add(&PlyEval {
                mover: if side == 0 {
                    Color::White
                } else {
                    Color::Black
                },
                plies: n + 1,
                irreversible,
                score: score.map(|s| i32::try_from(s).unwrap()),
            });
            let expected = theirs.add_eval(side, i64::from(n + 1), reversible, score);
            let as_theirs = verdict.map(|v| match v {
                Verdict::Draw => None,
                Verdict::Resign { loser } => Some(usize::from(loser == Color::Black)),
            });
            assert_eq!(as_theirs, expected, "ply {} of {draw:?} {resign:?}", n + 1);
            if let Some(v) = expected {
                verdicts[v.map_or(0, |loser| 1 + loser)] += 1;
                break;
            }
        }
    }
    // Draws and resignations of both sides all occur in the sample.
    assert!(verdicts.iter().all(|&v| v > 50), "{verdicts:?}");
}
