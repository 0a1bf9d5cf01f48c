//! Swiss pairing systems as pure functions: a round's pairing from the tournament so far.
//!
//! - [`dutch`]: the FIDE Dutch system (FIDE Handbook C.04.3, the 2025 rules that bbpPairings
//!   implements), computed as bbpPairings computes it: each pairing bracket is settled by
//!   maximum-weight matchings whose edge weights encode the criteria in their order.
//! - [`trf`]: a tournament read from a FIDE TRF file (as `arena export trf` and bbpPairings
//!   write it), and written to one ([`trf::write_trf`], what `arena export trf` prints).
//! - [`blossom`]: the maximum-weight matching it rests on; [`wide`]: its wide integer weights.
//!
//! Nothing here knows of Lua, the store or the command line: the Swiss format script hands the
//! history over (`arena.pairing.dutch`), and the tests replay tournaments written by
//! bbpPairings (`tests/fixtures/swiss/`).

pub mod blossom;
pub mod dutch;
mod error;
pub mod trf;
pub mod wide;

#[cfg(test)]
mod fixtures;

pub use dutch::{
    Colour, Pairing, Player, Record, RoundEntry, Tournament, UnplayedGame, pair_round,
};
pub use error::PairingError;
pub use trf::{TrfError, TrfFile, parse_trf, read_trf};
