//! The client through the real formats: the tests of `arena-llm` that need a wire format live
//! here, since a format cannot be handed to that crate's own tests (a dev-dependency on this
//! crate would link a second `arena_llm`, whose types are not the ones under test).
//!
//! Every test module starts from `use super::*`: the client's public API, its wire-format kit,
//! and the formats installed once (see [`formats`]).

pub(crate) use arena_llm::{wire::*, *};

mod assembly;
mod batch;
mod client;
mod fuzz;
mod images;
mod providers;
mod rejection;
mod sdk;
mod stream;
mod tools;

/// Installs the built-in formats for this test binary (`install` keeps the first call's, so
/// every test may call it).
pub(crate) fn formats() {
    crate::install();
}
