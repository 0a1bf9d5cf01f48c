//! Engine analysis of played games: every position searched once on a pool of persistent engines,
//! cached in the store, and turned into per-ply verdicts (evaluations, top moves, the played move's
//! rank, Win%, class, phase, centipawn loss, accuracy) and per-player totals.
//!
//! ```no_run
//! # async fn demo(store: &arena::store::Store) -> Result<(), arena::analysis::AnalysisError> {
//! use arena::analysis::{AnalysisPool, AnalysisSettings, Analyser};
//! use arena::engine::EngineSpec;
//!
//! let pool = AnalysisPool::new(EngineSpec::new("sf", "stockfish").option("Threads", "1"), 2);
//! let analyser = Analyser::new(store, &pool, AnalysisSettings::default()).await?;
//! let t = store.find_tournament("demo")?.expect("a tournament");
//! for game in analyser.pending(t.id)? {
//!     analyser.analyse_game(&game).await?;
//! }
//! for row in store.analysis_summary(t.id)? {
//!     println!("{}: {:.1}% top-3 moves", row.player, 100.0 * row.top_move_rate);
//! }
//! pool.shutdown().await;
//! # Ok(()) }
//! ```

mod game;
mod pool;
pub mod winrate;

pub use self::{
    game::{Analyser, AnalysisSettings, GameReport},
    pool::{AnalysisLimits, AnalysisPool, PositionAnalysis, RankedMove},
    winrate::{Classification, Phase, WinModel},
};
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

/// The per-player analysis: plies, top-move rate, the share of each class, average centipawn loss
/// and Lichess accuracy.
pub fn summary_table(rows: &[PlayerAnalysisRow]) -> crate::report::Table {
    use crate::report::{Cell, Table};
    let mut table = Table::new(
        "engine analysis",
        &[
            "#",
            "player",
            "plies",
            "top moves %",
            "best %",
            "good %",
            "inaccuracy %",
            "mistake %",
            "blunder %",
            "ACPL",
            "accuracy",
        ],
    );
    let percent = |r: &PlayerAnalysisRow, n: u64| Cell::Num(100.0 * r.rate(n), 1);
    for (i, r) in rows.iter().enumerate() {
        table.rows.push(vec![
            (i + 1).into(),
            r.player.clone().into(),
            r.plies.into(),
            Cell::Num(100.0 * r.top_move_rate, 1),
            percent(r, r.best),
            percent(r, r.good),
            percent(r, r.inaccuracy),
            percent(r, r.mistake),
            percent(r, r.blunder),
            Cell::Num(r.acpl, 0),
            r.accuracy.map_or(Cell::Empty, |a| Cell::Num(a, 1)),
        ]);
    }
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
        };
        let table = summary_table(&[row]).to_text();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        let cells: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "1", "sf", "8", "75.0", "50.0", "25.0", "12.5", "0.0", "12.5", "41", "88.3"
            ]
        );
    }
}
