//! An engine's evaluation of a position, as UCI reports it. It lives in the chess core rather
//! than with the engines because the store keeps evaluations (analyses, adjudications) and must
//! not depend on the engine crate for their type.

use serde::{Deserialize, Serialize};

/// An evaluation as UCI reports it: from the side to move's point of view.
///
/// Serialises as `{"cp": 35}` or `{"mate": -3}`, the shape analyses are stored in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Score {
    /// Centipawns; positive favours the side to move.
    Cp(i32),
    /// Mate in this many moves (not plies); negative when the side to move is being mated.
    Mate(i32),
}
