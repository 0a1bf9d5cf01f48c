//! Engine analysis of played games: every position searched once on a pool of persistent engines,
//! cached in the store, and turned into per-ply verdicts (evaluations, top moves, the played move's
//! rank, Win%, class, phase, centipawn loss, accuracy) and per-player totals.
//!
//! ```no_run
//! # async fn demo(store: &arena_store::Store) -> Result<(), arena_play::analysis::AnalysisError> {
//! use arena_play::analysis::{AnalysisPool, AnalysisSettings, Analyser};
//! use arena_engine::EngineSpec;
//!
//! let pool = AnalysisPool::new(EngineSpec::new("sf", "stockfish").option("Threads", "1"), 2);
//! let analyser = Analyser::new(store, &pool, AnalysisSettings::default()).await?;
//! let t = store.find_tournament("demo")?.expect("a tournament");
//! for game in analyser.pending(t.id)? {
//!     analyser.analyse_game(&game, None).await?;
//! }
//! for row in store.analysis_summary(t.id)? {
//!     println!("{}: {:.1}% top-3 moves", row.player, 100.0 * row.top_move_rate);
//! }
//! pool.shutdown().await;
//! # Ok(()) }
//! ```

mod game;
pub mod lichess;
mod pool;
pub mod winrate;

pub use self::{
    game::{Analyser, AnalysisSettings, GameReport, SEGMENT_POSITIONS, VisitOrder},
    pool::{AnalysisLimits, AnalysisPool, AnalysisSession, PositionAnalysis, RankedMove},
    winrate::{Classification, Phase, WinModel},
};
use std::collections::BTreeMap;

/// The default engine hash of an analysis process, in MB: LLM Chess's 128 rather than Stockfish's
/// 16, so that the hash still holds the previous positions' searches when the next one of the
/// game's segment starts (depth-20 searches visit millions of nodes each).
pub const DEFAULT_HASH_MB: u32 = 128;

use crate::{engine::EngineError, store::PlayerAnalysisRow};

/// What can go wrong while analysing.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// No analysis engine could be started.
    #[error("failed to start the analysis engine: {source}")]
    Start {
        /// Why.
        source: EngineError,
    },
    /// The engine failed on a position, twice.
    #[error("analysis of `{fen}` failed: {source}")]
    Engine {
        /// The position.
        fen: String,
        /// The engine's error on the retry.
        source: EngineError,
    },
    /// The engine failed `ucinewgame` at the start of a session.
    #[error("the analysis engine failed to start a new game: {source}")]
    NewGame {
        /// The engine's error.
        source: EngineError,
    },
    /// The engine answered without a scored line.
    #[error("the engine gave no score for `{fen}`")]
    NoScore {
        /// The position.
        fen: String,
    },
    /// A stored position does not parse.
    #[error("invalid position `{fen}`: {reason}")]
    BadFen {
        /// The position.
        fen: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A stored move does not replay on its stored position.
    #[error("ply {ply} of game {game_id} (`{uci}`) is not legal in its stored position")]
    BadPly {
        /// The game id.
        game_id: i64,
        /// The ply.
        ply: u32,
        /// The stored move.
        uci: String,
    },
    /// A cached analysis does not read back.
    #[error("the cached analysis of `{fen}` is unreadable: {reason}")]
    BadCache {
        /// The position.
        fen: String,
        /// The JSON error.
        reason: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl AnalysisError {
    /// Whether another worker took the game's analysis over while this one worked on it: not a
    /// failure of the analysis, which the new holder carries on.
    pub fn is_lease_lost(&self) -> bool {
        matches!(
            self,
            AnalysisError::Store(crate::store::StoreError::LeaseLost { .. })
        )
    }

    /// Whether the engine process was at fault (crashed, hung, broke the protocol), so that the same
    /// work on the fresh process its actor started may succeed.
    pub(crate) fn is_engine_fault(&self) -> bool {
        let source = match self {
            AnalysisError::Engine { source, .. } | AnalysisError::NewGame { source } => source,
            _ => return false,
        };
        matches!(
            source,
            EngineError::Crashed { .. }
                | EngineError::Timeout { .. }
                | EngineError::Protocol { .. }
        )
    }
}

/// The per-player analysis in the papers' columns: plies, legal-move rate (ChessArena's Table 12,
/// from `legal_move_rates` by player, shown only for players that have one), top-move rate, the
/// share of each LLM Chess class (its Table 2, its cutoffs of 30/20/10 Win% points) and its
/// blunders per game phase; then lichess's own figures by player (`lichess`, see
/// [`lichess::figures`]): its `?!`, `?` and `??` counts, ACPL and accuracy, each a mean of games.
pub fn summary_table(
    rows: &[PlayerAnalysisRow],
    legal_move_rates: &BTreeMap<String, f64>,
    lichess: &BTreeMap<String, lichess::LichessFigures>,
) -> crate::table::Table {
    use crate::table::{Cell, Table};
    let mut table = Table::new(
        "engine analysis",
        &[
            "#",
            "player",
            "plies",
            "legal moves %",
            "top moves %",
            "best %",
            "good %",
            "inaccuracy %",
            "mistake %",
            "blunder %",
            "opening blunder %",
            "middlegame blunder %",
            "endgame blunder %",
            "lichess ?!",
            "lichess ?",
            "lichess ??",
            "lichess ACPL",
            "lichess accuracy",
        ],
    )
    .of_kind("analysis");
    let percent = |r: &PlayerAnalysisRow, n: u64| Cell::Num(100.0 * r.rate(n), 1);
    let mut ordered: Vec<&PlayerAnalysisRow> = rows.iter().collect();
    // Best lichess accuracy first (as before, when the store's accuracy ordered the rows).
    let accuracy = |r: &PlayerAnalysisRow| lichess.get(&r.player).and_then(|f| f.accuracy);
    ordered.sort_by(|a, b| {
        accuracy(b)
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&accuracy(a).unwrap_or(f64::NEG_INFINITY))
            .then(a.player.cmp(&b.player))
    });
    for (i, r) in ordered.into_iter().enumerate() {
        let mut row = vec![
            (i + 1).into(),
            r.player.clone().into(),
            r.plies.into(),
            legal_move_rates
                .get(&r.player)
                .map_or(Cell::Empty, |rate| Cell::Num(100.0 * rate, 1)),
            Cell::Num(100.0 * r.top_move_rate, 1),
            percent(r, r.best),
            percent(r, r.good),
            percent(r, r.inaccuracy),
            percent(r, r.mistake),
            percent(r, r.blunder),
        ];
        for (plies, blunders) in r.phase_plies.iter().zip(r.phase_blunders) {
            row.push(if *plies == 0 {
                Cell::Empty
            } else {
                Cell::Num(100.0 * blunders as f64 / *plies as f64, 1)
            });
        }
        match lichess.get(&r.player) {
            Some(f) => row.extend([
                f.inaccuracies.into(),
                f.mistakes.into(),
                f.blunders.into(),
                f.acpl.map_or(Cell::Empty, |a| Cell::Num(a, 1)),
                f.accuracy.map_or(Cell::Empty, |a| Cell::Num(a, 1)),
            ]),
            None => row.extend(std::iter::repeat_n(Cell::Empty, 5)),
        }
        table.rows.push(row);
    }
    table.notes.push(
        "rates per analysed ply of the player's own (book plies count nowhere); legal moves % is accepted moves per attempt, for LLM players"
            .to_owned(),
    );
    table.notes.push(
        "best/good/inaccuracy/mistake/blunder %: LLM Chess's classes (best: the engine's first choice; else a Win% drop of 10, 20, 30 points or more), and its phases"
            .to_owned(),
    );
    table.notes.push(
        "lichess ?!, ?, ??: moves lichess judges an inaccuracy, mistake or blunder (a drop in winning chances of 0.1, 0.2, 0.3 on [−1, 1], i.e. 5, 10, 15 Win% points; mates by lichess's mate rules; never the engine's best move); \
         lichess ACPL and accuracy: per game as lichess computes them (each evaluation clamped to ±1000, no cap on a move's loss, the game's first position at 15 cp), then the mean of the player's games"
            .to_owned(),
    );
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_table_shows_rates_as_percentages() {
        let row = PlayerAnalysisRow {
            player: "sf".into(),
            plies: 8,
            top_moves: 6,
            top_move_rate: 0.75,
            best: 4,
            good: 2,
            inaccuracy: 1,
            mistake: 0,
            blunder: 1,
            acpl: 41.4,
            accuracy: Some(88.26),
            phase_plies: [4, 4, 0],
            phase_blunders: [0, 1, 0],
        };
        let llm = PlayerAnalysisRow {
            player: "llm".into(),
            accuracy: None,
            ..row.clone()
        };
        let legal = BTreeMap::from([("llm".to_owned(), 0.8)]);
        let figures = BTreeMap::from([(
            "sf".to_owned(),
            lichess::LichessFigures {
                moves: 8,
                inaccuracies: 2,
                mistakes: 1,
                blunders: 1,
                acpl: Some(55.5),
                accuracy: Some(81.25),
                games: 2,
            },
        )]);
        let table = summary_table(&[llm, row], &legal, &figures);
        assert_eq!(table.rows[0][1], crate::table::Cell::from("sf"));
        assert_eq!(
            table.rows[0][3],
            crate::table::Cell::Empty,
            "sf makes no attempts"
        );
        assert_eq!(table.rows[1][3], crate::table::Cell::Num(80.0, 1));
        let text = table.to_text();
        let lines: Vec<&str> = text.lines().collect();
        let cells: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "1", "sf", "8", "-", "75.0", "50.0", "25.0", "12.5", "0.0", "12.5", "0.0", "25.0",
                "-", "2", "1", "1", "55.5", "81.2"
            ],
            "{text}"
        );
    }
}
