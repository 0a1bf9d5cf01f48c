//! Each player's figures as lichess computes them, from the stored per-ply analysis: its move
//! judgements ([`LichessJudgement`]), its average centipawn loss per game and its game accuracy,
//! over the moves the player chose (book plies belong to no player and count in no column).
//!
//! Lichess computes ACPL and accuracy per game (`AccuracyCP.mean`, `AccuracyPercent.gameAccuracy`)
//! and a player's figure over several games is the mean of its games' figures, not a pool of all
//! their moves. Lichess starts a game from a fixed 15 cp (`Cp.initial`); so does this, for a game
//! whose first counted move is played from the standard start position. A game that counts from
//! another position (after book plies, or from a FEN) starts from the engine's evaluation of it,
//! which lichess, having no book, never needs.
//!
//! A move that delivers mate counts in none of the figures: lichess's analysis drops the
//! evaluation of a checkmated position (`mate 0`) before pairing each move's evaluations before
//! and after (`makeInfos` of its `AnalysisBuilder`), so the mating move gets no entry, no
//! judgement, no centipawn loss and no accuracy, and the game's ACPL and accuracy are means over
//! the moves before it.

use std::collections::{BTreeMap, HashMap};

use shakmaty::Color;

use super::winrate::{LichessJudgement, game_accuracy, lichess_cp_loss, lichess_win_percent};
use crate::{
    engine::Score,
    store::{GameStatus, PlyAnalysisRecord, PlyRecord, Store, StoreError},
};

/// The standard start position, as stored before the first ply.
const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Lichess's evaluation of the start position (`Cp.initial`).
const INITIAL: Score = Score::Cp(15);

/// One player's lichess figures over a tournament.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LichessFigures {
    /// Analysed moves the player chose (not a mating move, which lichess leaves out).
    pub moves: u64,
    /// Its moves judged `?!`, `?` and `??`.
    pub inaccuracies: u64,
    /// `?`.
    pub mistakes: u64,
    /// `??`.
    pub blunders: u64,
    /// The mean over its games of each game's ACPL (rounded per game, as lichess shows it).
    pub acpl: Option<f64>,
    /// The mean over its games of each game's accuracy.
    pub accuracy: Option<f64>,
    /// Games behind `acpl` and `accuracy`.
    pub games: u64,
}

/// One game's figures for one colour.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GameFigures {
    /// The player.
    pub player: String,
    /// Moves counted.
    pub moves: u64,
    /// `?!`, `?`, `??`.
    pub judgements: [u64; 3],
    /// The game's ACPL, rounded as lichess rounds it.
    pub acpl: i64,
    /// The game's accuracy.
    pub accuracy: f64,
}

/// Both colours' figures for one analysed game: its plies and their analyses (any order). Plies
/// without an analysis end the count (an analysis is written ply by ply; the game is only
/// complete when every ply has one).
pub(crate) fn game_figures(
    plies: &[PlyRecord],
    analyses: &[PlyAnalysisRecord],
) -> Vec<GameFigures> {
    let by_ply: HashMap<u32, &PlyAnalysisRecord> = analyses.iter().map(|a| (a.ply, a)).collect();
    // The counted plies: the player's own, in order, from the first after the book.
    let counted: Vec<(&PlyRecord, &PlyAnalysisRecord)> = plies
        .iter()
        .skip_while(|p| p.player == "book")
        .map_while(|p| Some((p, *by_ply.get(&p.ply)?)))
        .filter(|(p, _)| p.player != "book")
        // The mating move: lichess has no evaluation pair for it (see the module's notes).
        .filter(|(_, a)| !delivers_mate(a))
        .collect();
    let Some(&(first, first_analysis)) = counted.first() else {
        return Vec::new();
    };
    let first_colour = colour(first);
    let start = if first.fen_before == START {
        INITIAL
    } else {
        first_analysis.eval_before
    };
    // Each move's score before it, from the mover's side: the previous ply's evaluation after
    // it (the same position's search), lichess's 15 cp for the first.
    let befores: Vec<Score> = std::iter::once(start)
        .chain(counted.iter().map(|(_, a)| a.eval_after))
        .take(counted.len())
        .collect();
    let mut out: Vec<GameFigures> = Vec::new();
    for side in [Color::White, Color::Black] {
        let mine: Vec<usize> = (0..counted.len())
            .filter(|&i| colour(counted[i].0) == side)
            .collect();
        let Some(&i0) = mine.first() else { continue };
        let mut judgements = [0u64; 3];
        let mut loss = 0u64;
        for &i in &mine {
            let (p, a) = counted[i];
            let best = a.best.as_deref() == Some(p.uci.as_str());
            let judged = LichessJudgement::of(best, befores[i], a.eval_after);
            match judged {
                Some(LichessJudgement::Inaccuracy) => judgements[0] += 1,
                Some(LichessJudgement::Mistake) => judgements[1] += 1,
                Some(LichessJudgement::Blunder) => judgements[2] += 1,
                None => {}
            }
            loss += u64::from(lichess_cp_loss(befores[i], a.eval_after));
        }
        out.push(GameFigures {
            player: counted[i0].0.player.clone(),
            moves: mine.len() as u64,
            judgements,
            acpl: (loss as f64 / mine.len() as f64).round() as i64,
            accuracy: f64::NAN,
        });
    }
    // White's Win% before the first counted move, then after each.
    let white = |mover: Color, own: f64| match mover {
        Color::White => own,
        Color::Black => 100.0 - own,
    };
    let mut wins = vec![white(first_colour, lichess_win_percent(start))];
    for (p, a) in &counted {
        wins.push(white(colour(p), 100.0 - lichess_win_percent(a.eval_after)));
    }
    let (w, b) = game_accuracy(&wins, first_colour);
    for f in &mut out {
        let side = counted
            .iter()
            .find(|(p, _)| p.player == f.player)
            .map(|(p, _)| colour(p));
        f.accuracy = match side {
            Some(Color::White) => w,
            Some(Color::Black) => b,
            None => None,
        }
        .unwrap_or(f64::NAN);
    }
    out
}

/// Every player's lichess figures over the analysed games of a tournament.
///
/// # Errors
/// When the store cannot be read.
pub fn figures(
    store: &Store,
    tournament: i64,
) -> Result<BTreeMap<String, LichessFigures>, StoreError> {
    let mut sums: BTreeMap<String, (LichessFigures, f64, f64)> = BTreeMap::new();
    for game in store.games(tournament)? {
        if game.status != GameStatus::Finished {
            continue;
        }
        let analyses = store.ply_analyses(game.id)?;
        if analyses.is_empty() {
            continue;
        }
        let plies = store.plies(game.id)?;
        for f in game_figures(&plies, &analyses) {
            let (total, acpl, accuracy) = sums.entry(f.player.clone()).or_default();
            total.moves += f.moves;
            total.inaccuracies += f.judgements[0];
            total.mistakes += f.judgements[1];
            total.blunders += f.judgements[2];
            total.games += 1;
            *acpl += f.acpl as f64;
            *accuracy += f.accuracy;
        }
    }
    Ok(sums
        .into_iter()
        .map(|(player, (mut total, acpl, accuracy))| {
            let games = total.games as f64;
            total.acpl = (total.games > 0).then(|| acpl / games);
            total.accuracy = (total.games > 0 && accuracy.is_finite()).then(|| accuracy / games);
            (player, total)
        })
        .collect())
}

/// Lichess's judgement of one stored ply from its analysis: the score before it is lichess's
/// 15 cp when it is played from the standard start position, else the engine's; book plies and
/// the mating move have none.
pub fn judgement(ply: &PlyRecord, analysis: &PlyAnalysisRecord) -> Option<LichessJudgement> {
    if ply.player == "book" || delivers_mate(analysis) {
        return None;
    }
    let before = if ply.fen_before == START {
        INITIAL
    } else {
        analysis.eval_before
    };
    let best = analysis.best.as_deref() == Some(ply.uci.as_str());
    LichessJudgement::of(best, before, analysis.eval_after)
}

/// Whether the ply checkmates: the position after it is scored `mate 0`, the evaluation lichess
/// leaves out of its analysis.
fn delivers_mate(analysis: &PlyAnalysisRecord) -> bool {
    analysis.eval_after == Score::Mate(0)
}

/// The colour that played a ply, from its position.
fn colour(ply: &PlyRecord) -> Color {
    if ply.fen_before.split_whitespace().nth(1) == Some("b") {
        Color::Black
    } else {
        Color::White
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ply(n: u32, fen: &str, uci: &str, player: &str) -> PlyRecord {
        PlyRecord {
            ply: n,
            fen_before: fen.into(),
            uci: uci.into(),
            san: uci.into(),
            player: player.into(),
            attempts: 1,
            elapsed_ms: 1,
            clock_ms: None,
        }
    }

    fn analysis(n: u32, before: Score, after: Score, best: &str) -> PlyAnalysisRecord {
        PlyAnalysisRecord {
            ply: n,
            engine_id: "sf".into(),
            limits_key: "depth=8".into(),
            win_model: "lichess".into(),
            eval_before: before,
            eval_after: after,
            best: Some(best.into()),
            pv: Vec::new(),
            top_json: "[]".into(),
            played_rank: None,
            in_top: false,
            played_score: None,
            all_moves_json: None,
            win_before: 0.0,
            win_after: 0.0,
            cp_loss: 0,
            accuracy: 0.0,
            phase: "opening".into(),
            classification: "good".into(),
        }
    }

    const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const AFTER_E5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    const AFTER_QH5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P2Q/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2";

    /// 1.e4 e5 2.Qh5 Nc6 with hand-set evaluations (each side to move's view).
    fn game(book: usize) -> (Vec<PlyRecord>, Vec<PlyAnalysisRecord>) {
        let mut plies = vec![
            ply(0, START, "e2e4", "w"),
            ply(1, AFTER_E4, "e7e5", "b"),
            ply(2, AFTER_E5, "d1h5", "w"),
            ply(3, AFTER_QH5, "b8c6", "b"),
        ];
        for p in &mut plies[..book] {
            p.player = "book".into();
        }
        let analyses = vec![
            // The engine's 30 at the start: lichess counts from 15 instead.
            analysis(0, Score::Cp(30), Score::Cp(-40), "e2e4"),
            analysis(1, Score::Cp(-40), Score::Cp(60), "c7c5"),
            // White throws 1560 cp away: each side clamped to 1000, a loss of 1060, not 1000.
            analysis(2, Score::Cp(60), Score::Cp(1500), "g1f3"),
            analysis(3, Score::Cp(1500), Score::Cp(-1490), "b8c6"),
        ];
        (plies, analyses)
    }

    #[test]
    fn a_game_is_judged_and_averaged_as_lichess_does() {
        let (plies, analyses) = game(0);
        let figures = game_figures(&plies, &analyses);
        let [white, black] = &figures[..] else {
            panic!("{figures:?}")
        };
        // White: 1.e4 best (15 → 40: no loss), 2.Qh5 60 → −1000: a blunder (winning chances
        // 0.110 → −0.992), loss 1060. ACPL round(1060 / 2) = 530.
        assert_eq!(white.player, "w");
        assert_eq!(white.moves, 2);
        assert_eq!(white.judgements, [0, 0, 1]);
        assert_eq!(white.acpl, 530);
        // Black: 1...e5 −40 → −60 (20 lost, 0.036 of winning chances: nothing), 2...Nc6 best
        // (+1000 → +1000 clamped: nothing lost). round(20 / 2) = 10.
        assert_eq!(black.judgements, [0, 0, 0]);
        assert_eq!(black.acpl, 10);
        // Accuracy from White's Win%: 15 cp, then after each move.
        let wins = [
            lichess_win_percent(Score::Cp(15)),
            100.0 - lichess_win_percent(Score::Cp(-40)),
            lichess_win_percent(Score::Cp(60)),
            100.0 - lichess_win_percent(Score::Cp(1500)),
            lichess_win_percent(Score::Cp(-1490)),
        ];
        let (w, b) = game_accuracy(&wins, Color::White);
        assert!((white.accuracy - w.unwrap()).abs() < 1e-9);
        assert!((black.accuracy - b.unwrap()).abs() < 1e-9);
        assert_eq!(
            judgement(&plies[2], &analyses[2]),
            Some(LichessJudgement::Blunder)
        );
        assert_eq!(judgement(&plies[0], &analyses[0]), None);
    }

    #[test]
    fn book_plies_count_in_no_column() {
        let (plies, analyses) = game(2);
        let figures = game_figures(&plies, &analyses);
        let [white, black] = &figures[..] else {
            panic!("{figures:?}")
        };
        // Only 2.Qh5 and 2...Nc6 count, from the engine's 60 (no 15 cp: not the start).
        assert_eq!((white.moves, white.acpl), (1, 1060));
        assert_eq!((black.moves, black.acpl), (1, 0));
        let wins = [
            lichess_win_percent(Score::Cp(60)),
            100.0 - lichess_win_percent(Score::Cp(1500)),
            lichess_win_percent(Score::Cp(-1490)),
        ];
        let (w, b) = game_accuracy(&wins, Color::White);
        assert!((white.accuracy - w.unwrap()).abs() < 1e-9);
        assert!((black.accuracy - b.unwrap()).abs() < 1e-9);
        assert_eq!(judgement(&plies[0], &analyses[0]), None);
    }

    /// A White-side evaluation of a position for [`lichess_reference`]: centipawns, or mate in
    /// n moves (positive: White mates; `Mate(0)`: the side to move is checkmated).
    #[derive(Clone, Copy, Debug)]
    enum Ev {
        Cp(i32),
        Mate(i32),
    }

    /// Lichess's ACPL and accuracy of one game, both colours, written from its description and
    /// not from this module: one White-side evaluation per position after each move, the
    /// checkmated position's `mate 0` dropped (fishnet's `makeInfos`), the start position counted
    /// as 15 cp; ACPL per colour over its (before, after) pairs, each side's score capped at
    /// ±1000, losses below 0 counted as 0, the mean rounded half up; accuracy per colour as
    /// `AccuracyPercent.gameAccuracy`: Win% `50 + 50 (2 / (1 + e^(−0.00368208 cp)) − 1)` of the
    /// capped score, windows of (moves / 10) clamped to 2..8 positions (the first window repeated
    /// for the first moves), weights the windows' population σ clamped to 0.5..12, a move's
    /// accuracy `103.1668100711649 e^(−0.04354415386753951 drop) − 3.166924740191411 + 1`
    /// clamped to 0..100 (100 without a drop), the mean of the weighted mean and the harmonic mean
    /// (each accuracy at least 1). White moves first. Returns `[(acpl, accuracy); 2]`.
    fn lichess_reference(after_each_move: &[Ev]) -> [(i64, f64); 2] {
        let capped = |e: Ev| -> f64 {
            match e {
                Ev::Cp(c) => f64::from(c.clamp(-1000, 1000)),
                Ev::Mate(m) if m > 0 => 1000.0,
                Ev::Mate(_) => -1000.0,
            }
        };
        let infos: Vec<Ev> = after_each_move
            .iter()
            .copied()
            .filter(|e| !matches!(e, Ev::Mate(0)))
            .collect();
        let start = Ev::Cp(15);
        let acpl = |white: bool| -> i64 {
            let seq: Vec<Ev> = if white {
                std::iter::once(start)
                    .chain(infos.iter().copied())
                    .collect()
            } else {
                infos.clone()
            };
            let losses: Vec<f64> = seq
                .chunks_exact(2)
                .map(|p| {
                    let diff = capped(p[1]) - capped(p[0]);
                    (if white { -diff } else { diff }).max(0.0)
                })
                .collect();
            (losses.iter().sum::<f64>() / losses.len() as f64 + 0.5).floor() as i64
        };
        let win = |e: Ev| 50.0 + 50.0 * (2.0 / (1.0 + (-0.00368208 * capped(e)).exp()) - 1.0);
        let wins: Vec<f64> = std::iter::once(start)
            .chain(infos.iter().copied())
            .map(win)
            .collect();
        let size = (infos.len() / 10).clamp(2, 8);
        let sigma = |xs: &[f64]| {
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
        };
        let mut weights: Vec<f64> = Vec::new();
        for _ in 0..size.min(wins.len()) - 2 {
            weights.push(sigma(&wins[..size]));
        }
        for w in wins.windows(size) {
            weights.push(sigma(w));
        }
        let weights: Vec<f64> = weights.iter().map(|w| w.clamp(0.5, 12.0)).collect();
        let move_accuracy = |before: f64, after: f64| {
            if after >= before {
                100.0
            } else {
                let raw = 103.166_810_071_164_9
                    * (-0.043_544_153_867_539_51 * (before - after)).exp()
                    - 3.166_924_740_191_411;
                (raw + 1.0).clamp(0.0, 100.0)
            }
        };
        let accuracy = |white: bool| -> f64 {
            let mut moves = Vec::new();
            for (i, (pair, weight)) in wins.windows(2).zip(&weights).enumerate() {
                if (i % 2 == 0) == white {
                    let (before, after) = if white {
                        (pair[0], pair[1])
                    } else {
                        (100.0 - pair[0], 100.0 - pair[1])
                    };
                    moves.push((move_accuracy(before, after), *weight));
                }
            }
            let weighted = moves.iter().map(|(a, w)| a * w).sum::<f64>()
                / moves.iter().map(|(_, w)| w).sum::<f64>();
            let harmonic =
                moves.len() as f64 / moves.iter().map(|(a, _)| 1.0 / a.max(1.0)).sum::<f64>();
            (weighted + harmonic) / 2.0
        };
        [(acpl(true), accuracy(true)), (acpl(false), accuracy(false))]
    }

    #[test]
    fn the_mating_move_counts_in_no_figure_as_in_lichess() {
        // 1.e4 e5 2.Bc4 Nc6 3.Qh5 Nf6?? 4.Qxf7#, with hand-set evaluations; the last move mates.
        let fens = [
            START,
            AFTER_E4,
            AFTER_E5,
            "rnbqkbnr/pppp1ppp/8/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR b KQkq - 1 2",
            "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR w KQkq - 2 3",
            "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 3 3",
            "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
        ];
        let moves = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"];
        // Each position's score for its side to move, after each move.
        let after = [
            Score::Cp(-30),
            Score::Cp(35),
            Score::Cp(-20),
            Score::Cp(40),
            Score::Cp(-30),
            Score::Mate(1),
            Score::Mate(0),
        ];
        let mut plies = Vec::new();
        let mut analyses = Vec::new();
        let mut before = Score::Cp(25);
        for (i, ((fen, uci), after)) in fens.iter().zip(moves).zip(after).enumerate() {
            let n = i as u32;
            plies.push(ply(n, fen, uci, if i % 2 == 0 { "w" } else { "b" }));
            analyses.push(analysis(n, before, after, uci));
            before = after;
        }
        // 3...Nf6 was not the engine's move (3...g6 was): a judged blunder.
        analyses[5].best = Some("g7g6".into());
        // The same evaluations from White's side, as lichess stores them.
        let white_side: Vec<Ev> = after
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let sign = if i % 2 == 0 { -1 } else { 1 };
                match *s {
                    Score::Cp(c) => Ev::Cp(sign * c),
                    Score::Mate(0) => Ev::Mate(0),
                    Score::Mate(m) => Ev::Mate(sign * m),
                }
            })
            .collect();
        let [(white_acpl, white_accuracy), (black_acpl, black_accuracy)] =
            lichess_reference(&white_side);
        // By hand: White loses 0 (15 → 30), 15 (35 → 20) and 10 (40 → 30): 25 / 3 → 8 (with
        // the mate as a fourth move of no loss it would be 25 / 4 → 6). Black loses 5, 20 and
        // 970 (30 → 1000): 995 / 3 → 332.
        assert_eq!((white_acpl, black_acpl), (8, 332));
        let figures = game_figures(&plies, &analyses);
        let [white, black] = &figures[..] else {
            panic!("{figures:?}")
        };
        assert_eq!((white.moves, black.moves), (3, 3));
        assert_eq!((white.acpl, black.acpl), (white_acpl, black_acpl));
        assert!(
            (white.accuracy - white_accuracy).abs() < 1e-9,
            "{} vs lichess {white_accuracy}",
            white.accuracy
        );
        assert!(
            (black.accuracy - black_accuracy).abs() < 1e-9,
            "{} vs lichess {black_accuracy}",
            black.accuracy
        );
        assert_eq!(judgement(&plies[6], &analyses[6]), None);
        assert_eq!(
            judgement(&plies[5], &analyses[5]),
            Some(LichessJudgement::Blunder)
        );
    }

    /// A score from White's side turned to the side to move's, as the store keeps it.
    fn to_move(white: Score, white_to_move: bool) -> Score {
        match (white, white_to_move) {
            (s, true) => s,
            (Score::Cp(c), false) => Score::Cp(-c),
            (Score::Mate(n), false) => Score::Mate(-n),
        }
    }

    fn score_json(s: Score) -> serde_json::Value {
        match s {
            Score::Cp(c) => serde_json::json!({ "cp": c }),
            Score::Mate(n) => serde_json::json!({ "mate": n }),
        }
    }

    /// A random evaluation of the next position from White's side: centipawns across and beyond
    /// ±1000 with the cut-off scores of both the winning-chance and the mate rules, mates for
    /// either side that shorten, lengthen, are lost, or turn into being mated.
    fn next_eval(rng: &mut rand::rngs::StdRng, prev: Score) -> Score {
        use rand::RngExt;
        const EDGES: [i32; 26] = [
            0, 15, -54, -55, 54, 55, -110, -111, 110, 111, -168, -169, 168, 169, -699, -700, -701,
            699, 700, 701, -999, -1000, -1001, 999, 1000, 1001,
        ];
        let cp = |rng: &mut rand::rngs::StdRng| match rng.random_range(0..4) {
            0 => Score::Cp(EDGES[rng.random_range(0..EDGES.len())]),
            1 => Score::Cp(rng.random_range(-3000..=3000)),
            _ => match prev {
                Score::Cp(c) => Score::Cp(c + rng.random_range(-400..=400)),
                Score::Mate(_) => Score::Cp(rng.random_range(-1500..=1500)),
            },
        };
        let mate = |rng: &mut rand::rngs::StdRng| {
            let n = rng.random_range(1..=12);
            Score::Mate(if rng.random_bool(0.5) { n } else { -n })
        };
        // The mate rules' cut-offs, from either side.
        const MATE_EDGES: [i32; 12] = [
            -699, -700, -701, 699, 700, 701, -999, -1000, -1001, 999, 1000, 1001,
        ];
        match prev {
            // Near a mate rule's cut-off, a mate is often found next.
            Score::Cp(c) if MATE_EDGES.contains(&c) && rng.random_bool(0.5) => mate(rng),
            Score::Cp(_) if rng.random_bool(0.12) => mate(rng),
            Score::Cp(_) => cp(rng),
            Score::Mate(n) => match rng.random_range(0..6) {
                // The mate goes on, one move shorter or a few longer.
                0 | 1 => {
                    let m = (n.abs() + rng.random_range(-1..=3)).max(1);
                    Score::Mate(m * n.signum())
                }
                // The other side mates instead.
                2 => Score::Mate(-n.signum() * rng.random_range(1..=8)),
                // The mate is gone, often to a score at a mate rule's cut-off.
                3 => Score::Cp(MATE_EDGES[rng.random_range(0..MATE_EDGES.len())]),
                _ => cp(rng),
            },
        }
    }

    /// lichess's judgements of every move and their counts per colour, on 600 random evaluation
    /// sequences, against `tests/reference/lichess_judgements.py` (lichess's `Advice`, winning
    /// chances, mate rules and `AnalysisBuilder` written from their descriptions). Games start
    /// at the standard start (lichess's 15 cp) or, with Black or White to move, from another
    /// position (the engine's evaluation, arena's rule, given to the script); some end in mate.
    #[test]
    fn judgements_match_the_python_reference_on_random_games() {
        use rand::{RngExt, SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(38);
        const OTHER_W: &str = "4k3/8/8/8/8/8/8/4K3 w - - 0 1";
        const OTHER_B: &str = "4k3/8/8/8/8/8/8/4K3 b - - 0 1";
        let mut games = Vec::new();
        let mut inputs = Vec::new();
        for g in 0..600 {
            let standard = g % 2 == 0;
            let white_first = standard || rng.random_bool(0.5);
            let start = if standard {
                Score::Cp(15)
            } else {
                let near = Score::Cp(rng.random_range(-800..=800));
                next_eval(&mut rng, near)
            };
            let length = rng.random_range(1..=40);
            let mating = rng.random_bool(0.3);
            // Evaluations of the positions after each move, from White's side.
            let mut evals = Vec::new();
            let mut prev = start;
            for _ in 0..length {
                prev = next_eval(&mut rng, prev);
                evals.push(prev);
            }
            if mating {
                evals.push(Score::Mate(0));
            }
            let (mut plies, mut analyses, mut moves) = (Vec::new(), Vec::new(), Vec::new());
            let mut before = to_move(start, white_first);
            for (i, &after) in evals.iter().enumerate() {
                let white = white_first == (i % 2 == 0);
                let fen = match (i, standard, white) {
                    (0, true, _) => START,
                    (_, _, true) => OTHER_W,
                    (_, _, false) => OTHER_B,
                };
                let best = rng.random_bool(0.25);
                let player = if white { "white" } else { "black" };
                plies.push(ply(i as u32, fen, "e2e4", player));
                let after_to_move = to_move(after, !white);
                let engine = if best { "e2e4" } else { "d2d4" };
                analyses.push(analysis(i as u32, before, after_to_move, engine));
                moves.push(serde_json::json!({ "best": best, "after": score_json(after) }));
                before = after_to_move;
            }
            let mut input = serde_json::json!({
                "first": if white_first { "white" } else { "black" },
                "moves": moves,
            });
            if !standard {
                input["start"] = score_json(start);
            }
            inputs.push(input);
            games.push((plies, analyses));
        }
        let Some(reference) = crate::rating::reference::run(
            "lichess judgements against tests/reference/lichess_judgements.py",
            "lichess_judgements.py",
            &serde_json::json!({ "games": inputs }),
        ) else {
            return;
        };
        let glyph = |j: Option<LichessJudgement>| match j {
            Some(LichessJudgement::Inaccuracy) => Some("?!"),
            Some(LichessJudgement::Mistake) => Some("?"),
            Some(LichessJudgement::Blunder) => Some("??"),
            None => None,
        };
        // How often each judgement came from the centipawn rule and from the mate rules: the
        // comparison is only worth something if both were exercised at every level.
        let mut seen: BTreeMap<(bool, &str), u32> = BTreeMap::new();
        for (g, (plies, analyses)) in games.iter().enumerate() {
            let theirs = &reference["games"][g];
            for (i, (p, a)) in plies.iter().zip(analyses).enumerate() {
                let ours = glyph(judgement(p, a));
                let expected = theirs["judgements"][i].as_str();
                assert_eq!(
                    ours, expected,
                    "game {g}, move {i}: {:?} then {:?}, best {:?}",
                    a.eval_before, a.eval_after, a.best
                );
                if let Some(j) = ours {
                    let mate = matches!(a.eval_before, Score::Mate(_))
                        || matches!(a.eval_after, Score::Mate(_));
                    *seen.entry((mate, j)).or_default() += 1;
                }
            }
            let figures = game_figures(plies, analyses);
            for colour in ["white", "black"] {
                let counts = &theirs["counts"][colour];
                let expected = ["inaccuracies", "mistakes", "blunders"]
                    .map(|k| counts[k].as_u64().expect("a count"));
                let ours = figures
                    .iter()
                    .find(|f| f.player == colour)
                    .map_or([0; 3], |f| f.judgements);
                assert_eq!(ours, expected, "game {g}, {colour}'s counts");
            }
        }
        for mate in [false, true] {
            for j in ["?!", "?", "??"] {
                let n = seen.get(&(mate, j)).copied().unwrap_or(0);
                assert!(
                    n >= 5,
                    "only {n} moves judged {j} (mate rules: {mate}): {seen:?}"
                );
            }
        }
    }
}
