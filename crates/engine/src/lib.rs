//! UCI chess engines as processes: a cheap [`EngineHandle`] per process talks to an actor that owns it,
//! and an [`EnginePool`] leases one process per game.
//!
//! The actor survives its engine: a process that dies, hangs past its deadline or answers garbage is
//! killed, the request that saw it fails with an error naming the engine, and the next request runs
//! on a fresh process (counted by [`EngineHandle::restarts`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), arena_engine::EngineError> {
//! use arena_engine::{EngineHandle, EngineSpec, SearchLimits};
//!
//! let sf = EngineHandle::spawn(EngineSpec::new("sf", "stockfish")).await?;
//! let best = sf.best_move(None, &["e2e4".to_owned()], &SearchLimits::nodes(1000)).await?;
//! println!("{} answers {}", sf.name(), best.uci);
//! sf.shutdown().await;
//! # Ok(()) }
//! ```

use arena_core::script;
#[cfg(any(test, feature = "test-support"))]
use arena_testkit as test_parts;

pub mod locate;
mod pool;
mod process;
pub mod uci;

use std::{path::PathBuf, time::Duration};

pub use self::{
    locate::locate,
    pool::{EngineLease, EnginePool},
    process::{EngineHandle, UNTIMED_SEARCH_ALLOWANCE},
    uci::{ClockTimes, Score, SearchInfo, SearchLimits, UciClock},
};

/// How to start and configure one engine player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSpec {
    /// The player's name, used in logs and errors (`sf-1500`).
    pub name: String,
    /// The binary: a path containing `/`, or a name looked up in `PATH` and `/usr/games`.
    pub command: String,
    /// Command-line arguments (`--uci` for gnuchess).
    pub args: Vec<String>,
    /// `setoption` name/value pairs, sent in order after `uciok`, e.g. `("Skill Level", "0")`.
    pub options: Vec<(String, String)>,
    /// How long the whole start-up (`uci`, options, `isready`) may take.
    pub init_timeout: Duration,
    /// Extra time a search may take beyond its `movetime` (or beyond [`UNTIMED_SEARCH_ALLOWANCE`]
    /// for depth/nodes searches) before the engine is declared hung.
    pub move_timeout_margin: Duration,
}

impl EngineSpec {
    /// A spec with no arguments or options, a 10 s start-up timeout and a 5 s move margin.
    pub fn new(name: impl Into<String>, command: impl Into<String>) -> EngineSpec {
        EngineSpec {
            name: name.into(),
            command: command.into(),
            args: Vec::new(),
            options: Vec::new(),
            init_timeout: Duration::from_secs(10),
            move_timeout_margin: Duration::from_secs(5),
        }
    }

    /// Adds one `setoption`, keeping the order of calls.
    pub fn option(mut self, name: impl Into<String>, value: impl Into<String>) -> EngineSpec {
        self.options.push((name.into(), value.into()));
        self
    }
}

/// The engine's answer to `go`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BestMove {
    /// The chosen move in UCI notation (`e2e4`, `e7e8q`); syntactically valid, not checked for legality.
    pub uci: String,
    /// The reply the engine expects, if it said.
    pub ponder: Option<String>,
    /// The last scored info line of the first (or only) PV before `bestmove`.
    pub info: Option<SearchInfo>,
    /// Milliseconds from sending `go` to reading `bestmove`: the engine's time on a clock.
    pub search_ms: u64,
}

/// The engine's answer to an analysis request ([`EngineHandle::analyse`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// The last scored report of every line, ordered by `multipv` (best first). A position without
    /// legal moves gives one line with an empty PV and `mate 0` (mated) or `cp 0` (stalemate).
    pub lines: Vec<SearchInfo>,
    /// The `bestmove`, or `None` when the position has no legal move.
    pub best: Option<String>,
}

/// What can go wrong with an engine. Every variant names the engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The binary is nowhere to be found.
    #[error(
        "engine binary `{command}` not found (searched {}); install it (e.g. `apt-get install stockfish`, \
         which puts it in /usr/games) or give its full path",
        display_paths(.searched)
    )]
    NotFound {
        /// The command as configured.
        command: String,
        /// Every path that was tried.
        searched: Vec<PathBuf>,
    },
    /// The process could not be started.
    #[error("failed to start engine `{name}`: {source}")]
    Spawn {
        /// The engine player's name.
        name: String,
        /// Why the OS refused.
        source: std::io::Error,
    },
    /// The process died or its pipes broke.
    #[error("engine `{name}` crashed: {detail}")]
    Crashed {
        /// The engine player's name.
        name: String,
        /// What was seen (exit status, EOF, write error).
        detail: String,
    },
    /// The engine did not answer in time and was killed.
    #[error("engine `{name}` did not answer within {after:?}")]
    Timeout {
        /// The engine player's name.
        name: String,
        /// The deadline that passed.
        after: Duration,
    },
    /// The engine printed something that breaks the protocol (e.g. `bestmove xyz`).
    #[error("engine `{name}` broke the UCI protocol: `{line}`")]
    Protocol {
        /// The engine player's name.
        name: String,
        /// The offending line.
        line: String,
    },
    /// The engine found no move (`bestmove (none)` or `0000`): the position is already over.
    #[error("engine `{name}` has no move in this position (it is mate or stalemate)")]
    NoMove {
        /// The engine player's name.
        name: String,
    },
    /// A search without any limit was requested; it would never end.
    #[error("search for engine `{name}` has no limit (set nodes, depth or movetime_ms)")]
    NoLimit {
        /// The engine player's name.
        name: String,
    },
    /// The engine was shut down (or its actor is gone) before the request was answered.
    #[error("engine `{name}` is shut down")]
    Shutdown {
        /// The engine player's name.
        name: String,
    },
    /// A Chess960 search was asked of an engine that does not advertise `UCI_Chess960`.
    #[error(
        "engine `{name}` cannot play Chess960: it does not advertise the UCI option `UCI_Chess960`"
    )]
    NoChess960 {
        /// The engine player's name.
        name: String,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nothing".to_owned();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
