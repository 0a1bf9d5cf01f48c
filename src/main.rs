//! The `arena` binary: logging set-up, then the command line.

use std::{
    io::{IsTerminal, stderr},
    process::ExitCode,
};

use arena::tournament::progress::LogWriter;
use tracing_subscriber::EnvFilter;

mod cli;

fn main() -> ExitCode {
    // reqwest is built without a default TLS provider; install ring before any client exists.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The wire formats live above the client (crates/providers); hand them over before any call.
    arena_providers::install();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("ARENA_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(LogWriter)
        .with_ansi(stderr().is_terminal())
        .with_target(false)
        .without_time()
        .init();
    cli::main()
}
