//! arena's chess core: what the rest of arena builds on and what has no effects of its own.
//!
//! - [`board`]: the game record and its end rules, reading moves out of free text, renderings,
//!   PGN, opening books and names, chess clocks;
//! - [`rating`]: rating maths (Glicko-1, Elo against anchors, Bradley–Terry, ladders, SPRT);
//! - [`pairing`]: Swiss pairing (the FIDE Dutch system);
//! - [`table`]: the tables every command prints, as text, CSV, JSON, Markdown or LaTeX;
//! - [`lines`], [`script`]: bounded line reading, and script errors located at `file:line`.

pub mod board;
#[cfg(any(test, feature = "test-support"))]
pub mod fuzz;
pub mod lines;
pub mod pairing;
pub mod rating;
pub mod script;
pub mod table;

#[cfg(any(test, feature = "test-support"))]
use arena_testkit as test_parts;
