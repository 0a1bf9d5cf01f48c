//! What can stop a round from being paired.

/// Why a round could not be paired.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    /// The input does not describe a tournament (a round missing, an unknown opponent).
    #[error("invalid tournament: {0}")]
    Invalid(String),
    /// No pairing keeps the absolute criteria (no rematch, absolute colour preferences, at most
    /// one bye and only to a player who may take one).
    #[error(
        "no pairing of round {round} keeps the absolute criteria (no rematch, no two players with the same absolute colour preference, one bye at most and only to a player without one)"
    )]
    NoPairing {
        /// The round being paired (1-based).
        round: usize,
    },
    /// The field is too large for the weights this build can hold.
    #[error(
        "{players} players in {groups} score groups need {bits}-bit weights; at most {max} are supported"
    )]
    TooLarge {
        /// Players to pair.
        players: usize,
        /// Score groups.
        groups: usize,
        /// Bits the weights would need.
        bits: u32,
        /// Bits supported.
        max: u32,
    },
}
