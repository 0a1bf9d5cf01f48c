//! One engine process: an [`EngineHandle`] stub that callers clone, and an actor task that owns the
//! process, serialises requests, enforces deadlines and replaces a faulty process (fishnet's pattern).

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use shakmaty::uci::UciMove;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{Child, ChildStdin, ChildStdout, Command},
    sync::{mpsc, oneshot},
    time::timeout,
};
use tracing::{debug, warn};

use arena_core::board::Variant;

use super::{
    Analysis, BestMove, EngineError, EngineSpec, SearchLimits,
    locate::locate,
    uci::{self, InfoLine, UciLine},
};

/// How long a search limited only by depth or nodes may run (plus the spec's margin) before the engine
/// is declared hung. Generous, because a deep search on a slow machine is not a fault.
pub const UNTIMED_SEARCH_ALLOWANCE: Duration = Duration::from_secs(60);

/// How long an engine gets to settle (`stop`, `isready`) after its caller went away, and to exit on `quit`.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);

/// A cheap, cloneable stub for one engine process owned by an actor task.
///
/// Requests are served one at a time in arrival order. When the last clone is dropped (or
/// [`shutdown`](EngineHandle::shutdown) is called) the actor sends `quit` and the process ends.
#[derive(Debug, Clone)]
pub struct EngineHandle {
    name: Arc<str>,
    move_timeout_margin: Duration,
    tx: mpsc::Sender<EngineMessage>,
    shared: Arc<Shared>,
}

/// State the actor publishes to its handles without a round trip.
#[derive(Debug, Default)]
struct Shared {
    id_name: OnceLock<String>,
    /// The option names the engine advertised at its first start.
    options: OnceLock<Vec<String>>,
    restarts: AtomicU64,
}

/// The UCI option that switches an engine to Chess960: castling as king takes rook, X-FEN and
/// Shredder-FEN castling rights.
const UCI_CHESS960: &str = "UCI_Chess960";

#[derive(Debug)]
enum EngineMessage {
    NewGame {
        callback: oneshot::Sender<Result<(), EngineError>>,
    },
    Go {
        position: String,
        go: String,
        chess960: bool,
        deadline: Duration,
        callback: oneshot::Sender<Result<BestMove, EngineError>>,
    },
    Analyse {
        position: String,
        go: String,
        multipv: u32,
        chess960: bool,
        deadline: Duration,
        callback: oneshot::Sender<Result<Analysis, EngineError>>,
    },
    Shutdown {
        callback: oneshot::Sender<()>,
    },
}

impl EngineHandle {
    /// Starts the engine and waits until it is ready: `uci` → `uciok`, each `setoption`, `isready` →
    /// `readyok`, all within `spec.init_timeout`.
    ///
    /// # Errors
    ///
    /// [`EngineError::NotFound`] or [`EngineError::Spawn`] when the binary cannot be run;
    /// [`EngineError::Crashed`] or [`EngineError::Timeout`] when it dies or stalls during start-up.
    pub async fn spawn(spec: EngineSpec) -> Result<EngineHandle, EngineError> {
        let path = locate(&spec.command)?;
        let (process, id_name, options) = Process::start(&spec, &path).await?;
        let shared = Arc::new(Shared::default());
        if let Some(id) = id_name {
            // A fresh OnceLock cannot already be set.
            let _ = shared.id_name.set(id);
        }
        let _ = shared.options.set(options);
        let (tx, rx) = mpsc::channel(8);
        let name: Arc<str> = spec.name.as_str().into();
        let move_timeout_margin = spec.move_timeout_margin;
        let actor = EngineActor {
            spec,
            path,
            process: Some(process),
            shared: Arc::clone(&shared),
            rx,
        };
        tokio::spawn(actor.run());
        Ok(EngineHandle {
            name,
            move_timeout_margin,
            tx,
            shared,
        })
    }

    /// Starts a new game: `ucinewgame`, then `isready` → `readyok`.
    ///
    /// # Errors
    ///
    /// As for [`best_move`](EngineHandle::best_move); the deadline is the spec's `init_timeout`.
    pub async fn new_game(&self) -> Result<(), EngineError> {
        let (callback, reply) = oneshot::channel();
        self.request(EngineMessage::NewGame { callback }, reply)
            .await
    }

    /// Asks for the best move in the position reached from `start_fen` (or the start position) by
    /// `moves` (UCI notation), searching within `limits`.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoLimit`] for empty limits, [`EngineError::NoMove`] when the position has no legal
    /// move, and [`EngineError::Crashed`], [`EngineError::Timeout`] or [`EngineError::Protocol`] when the
    /// engine faults; the process is then replaced before the next request.
    pub async fn best_move(
        &self,
        start_fen: Option<&str>,
        moves: &[String],
        limits: &SearchLimits,
    ) -> Result<BestMove, EngineError> {
        self.best_move_in(Variant::Standard, start_fen, moves, limits, None)
            .await
    }

    /// [`best_move`](EngineHandle::best_move) in a game of `variant`, on a clock when `clock` is
    /// given.
    ///
    /// - For Chess960 the engine gets `setoption name UCI_Chess960 value true` first (and `false`
    ///   again before the next standard request), the moves are king-takes-rook UCI, and so is
    ///   its answer.
    /// - On a clock the engine is sent both sides' clocks (`go wtime .. btime .. winc .. binc ..`,
    ///   and `movetime` for a per-move limit, see [`uci::go_clocked`]), and counts as hung once
    ///   the mover's allowance plus the spec's margin has passed (instead of the untimed
    ///   allowance). `limits` may then be empty: the clock ends the search.
    ///
    /// # Errors
    ///
    /// As for [`best_move`](EngineHandle::best_move), and [`EngineError::NoChess960`] for a
    /// Chess960 game when the engine does not advertise `UCI_Chess960`.
    pub async fn best_move_in(
        &self,
        variant: Variant,
        start_fen: Option<&str>,
        moves: &[String],
        limits: &SearchLimits,
        clock: Option<&uci::UciClock>,
    ) -> Result<BestMove, EngineError> {
        let chess960 = self.check_variant(variant)?;
        let (go, deadline) = match clock {
            Some(clock) => (
                uci::go_clocked(limits, clock),
                Duration::from_millis(clock.allowance_ms) + self.move_timeout_margin,
            ),
            None => (limits.to_string(), self.deadline(limits)?),
        };
        let (callback, reply) = oneshot::channel();
        let message = EngineMessage::Go {
            position: uci::position(start_fen, moves),
            go,
            chess960,
            deadline,
            callback,
        };
        self.request(message, reply).await
    }

    /// Whether the engine advertised the UCI option `name` (compared case-insensitively, as UCI
    /// option names are).
    pub fn advertises(&self, name: &str) -> bool {
        self.shared
            .options
            .get()
            .is_some_and(|options| options.iter().any(|o| o.eq_ignore_ascii_case(name)))
    }

    /// The option names the engine advertised at its first start.
    pub fn advertised(&self) -> &[String] {
        self.shared.options.get().map_or(&[], Vec::as_slice)
    }

    /// Whether the engine plays Chess960 (it advertises `UCI_Chess960`).
    pub fn supports_chess960(&self) -> bool {
        self.advertises(UCI_CHESS960)
    }

    /// Whether a request in `variant` needs `UCI_Chess960`, refusing it when the engine lacks it.
    fn check_variant(&self, variant: Variant) -> Result<bool, EngineError> {
        if variant.is_chess960() && !self.supports_chess960() {
            return Err(EngineError::NoChess960 {
                name: self.name.to_string(),
            });
        }
        Ok(variant.is_chess960())
    }

    /// Analyses the position `fen` with `multipv` lines (at least 1), optionally restricted to
    /// `searchmoves`, and returns every line of the search's final report.
    ///
    /// The process keeps its `MultiPV` setting between requests and is sent `setoption name MultiPV`
    /// only when a request needs another value ([`best_move`](EngineHandle::best_move) needs 1).
    /// A position without legal moves is not an error here: the engine's `score mate 0` (or `cp 0`)
    /// line comes back with no best move.
    ///
    /// # Errors
    ///
    /// As for [`best_move`](EngineHandle::best_move), except that a position without a move is answered.
    pub async fn analyse(
        &self,
        fen: &str,
        limits: &SearchLimits,
        multipv: u32,
        searchmoves: &[String],
    ) -> Result<Analysis, EngineError> {
        self.analyse_in(Variant::Standard, fen, limits, multipv, searchmoves)
            .await
    }

    /// [`analyse`](EngineHandle::analyse) of a position of `variant`: for Chess960 with
    /// `UCI_Chess960` on, so that the FEN's castling rights and the moves (king takes rook) read
    /// as Chess960.
    ///
    /// # Errors
    ///
    /// As for [`analyse`](EngineHandle::analyse), and [`EngineError::NoChess960`] as for
    /// [`best_move_in`](EngineHandle::best_move_in).
    pub async fn analyse_in(
        &self,
        variant: Variant,
        fen: &str,
        limits: &SearchLimits,
        multipv: u32,
        searchmoves: &[String],
    ) -> Result<Analysis, EngineError> {
        let chess960 = self.check_variant(variant)?;
        let deadline = self.deadline(limits)?;
        let (callback, reply) = oneshot::channel();
        let message = EngineMessage::Analyse {
            position: uci::position(Some(fen), &[]),
            go: uci::go(limits, searchmoves),
            multipv: multipv.max(1),
            chess960,
            deadline,
            callback,
        };
        self.request(message, reply).await
    }

    /// How long a search within `limits` may take before the engine counts as hung.
    fn deadline(&self, limits: &SearchLimits) -> Result<Duration, EngineError> {
        if limits.is_empty() {
            return Err(EngineError::NoLimit {
                name: self.name.to_string(),
            });
        }
        let margin = self.move_timeout_margin;
        Ok(match limits.movetime_ms {
            Some(ms) => Duration::from_millis(ms) + margin,
            None => UNTIMED_SEARCH_ALLOWANCE + margin,
        })
    }

    /// The engine player's name from its spec.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the engine calls itself (`id name`), if it said.
    pub fn id_name(&self) -> Option<&str> {
        self.shared.id_name.get().map(String::as_str)
    }

    /// How many times the process was replaced after a fault.
    pub fn restarts(&self) -> u64 {
        self.shared.restarts.load(Ordering::Relaxed)
    }

    /// Sends `quit`, waits briefly for the process to exit (killing it otherwise) and stops the actor.
    /// Other clones of this handle get [`EngineError::Shutdown`] afterwards.
    pub async fn shutdown(self) {
        let (callback, done) = oneshot::channel();
        if self
            .tx
            .send(EngineMessage::Shutdown { callback })
            .await
            .is_ok()
        {
            // An error only means the actor is already gone, which is the goal.
            let _ = done.await;
        }
    }

    async fn request<T>(
        &self,
        message: EngineMessage,
        reply: oneshot::Receiver<Result<T, EngineError>>,
    ) -> Result<T, EngineError> {
        let shutdown = || EngineError::Shutdown {
            name: self.name.to_string(),
        };
        self.tx.send(message).await.map_err(|_| shutdown())?;
        reply.await.map_err(|_| shutdown())?
    }
}

/// Owns the process (or none, between a fault and the next request) and serves the handles' requests.
struct EngineActor {
    spec: EngineSpec,
    path: PathBuf,
    process: Option<Process>,
    shared: Arc<Shared>,
    rx: mpsc::Receiver<EngineMessage>,
}

impl EngineActor {
    async fn run(mut self) {
        loop {
            let message = match &mut self.process {
                Some(process) => tokio::select! {
                    message = self.rx.recv() => message,
                    status = process.child.wait() => {
                        let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                        warn!(engine = %self.spec.name, %status, "engine exited while idle; restarting on next request");
                        self.process = None;
                        continue;
                    }
                },
                None => self.rx.recv().await,
            };
            match message {
                Some(EngineMessage::NewGame { mut callback }) => {
                    let deadline = self.spec.init_timeout;
                    let result = self.serve(&mut callback, deadline, Op::NewGame).await;
                    if let Some(result) = result {
                        let _ = callback.send(result.map(|_| ()));
                    }
                }
                Some(EngineMessage::Analyse {
                    position,
                    go,
                    multipv,
                    chess960,
                    deadline,
                    mut callback,
                }) => {
                    let op = Op::Analyse {
                        position,
                        go,
                        multipv,
                        chess960,
                    };
                    let result = self.serve(&mut callback, deadline, op).await;
                    if let Some(result) = result {
                        let _ = callback.send(result.map(|answer| match answer {
                            Answer::Analysis(analysis) => analysis,
                            _ => unreachable!("an analyse request always yields an analysis"),
                        }));
                    }
                }
                Some(EngineMessage::Go {
                    position,
                    go,
                    chess960,
                    deadline,
                    mut callback,
                }) => {
                    let op = Op::Go {
                        position,
                        go,
                        chess960,
                    };
                    let result = self.serve(&mut callback, deadline, op).await;
                    if let Some(result) = result {
                        let _ = callback.send(result.map(|answer| match answer {
                            Answer::Best(best) => best,
                            _ => unreachable!("a go request always yields a move"),
                        }));
                    }
                }
                Some(EngineMessage::Shutdown { callback }) => {
                    self.quit().await;
                    let _ = callback.send(());
                    return;
                }
                // Every handle is gone.
                None => {
                    self.quit().await;
                    return;
                }
            }
        }
    }

    /// Runs one request on a live process (starting a replacement if needed) within `deadline`.
    /// Returns `None` when the caller went away first; the process is then settled or replaced.
    async fn serve<T>(
        &mut self,
        callback: &mut oneshot::Sender<T>,
        deadline: Duration,
        op: Op,
    ) -> Option<Result<Answer, EngineError>> {
        let name = self.spec.name.clone();
        if let Err(err) = self.ensure_process().await {
            return Some(Err(err));
        }
        let process = self
            .process
            .as_mut()
            .expect("ensure_process leaves a process on success");
        let outcome = tokio::select! {
            result = timeout(deadline, op.run(process, &name)) => Some(
                result.unwrap_or(Err(EngineError::Timeout { name: name.clone(), after: deadline })),
            ),
            () = callback.closed() => None,
        };
        match &outcome {
            None => {
                // Nobody waits for this answer, but the engine may still be searching: bring it back to
                // a quiet, synchronised state so the next request does not read a stale bestmove.
                if let Err(err) = process.settle(&name).await {
                    self.discard(&err);
                }
            }
            Some(Err(
                err @ (EngineError::Crashed { .. }
                | EngineError::Timeout { .. }
                | EngineError::Protocol { .. }),
            )) => {
                self.discard(err);
            }
            Some(_) => {}
        }
        outcome
    }

    /// Kills a faulty process; the next request starts a fresh one.
    fn discard(&mut self, err: &EngineError) {
        warn!(engine = %self.spec.name, error = %err, "killing engine process; it will be restarted");
        // Dropping the child kills it (kill_on_drop) and tokio reaps it in the background.
        self.process = None;
    }

    async fn ensure_process(&mut self) -> Result<(), EngineError> {
        if self.process.is_some() {
            return Ok(());
        }
        let (process, _id_name, _options) = Process::start(&self.spec, &self.path).await?;
        let restarts = self.shared.restarts.fetch_add(1, Ordering::Relaxed) + 1;
        warn!(engine = %self.spec.name, restarts, "engine process restarted");
        self.process = Some(process);
        Ok(())
    }

    async fn quit(&mut self) {
        if let Some(mut process) = self.process.take() {
            // The engine may already be gone; killing below covers every case.
            let _ = process.send(&self.spec.name, "quit").await;
            if timeout(SETTLE_TIMEOUT, process.child.wait()).await.is_err() {
                let _ = process.child.kill().await;
            }
        }
    }
}

/// A request that runs against the process.
enum Op {
    NewGame,
    Go {
        position: String,
        go: String,
        chess960: bool,
    },
    Analyse {
        position: String,
        go: String,
        multipv: u32,
        chess960: bool,
    },
}

/// What a request yields, by kind of request.
enum Answer {
    Ready,
    Best(BestMove),
    Analysis(Analysis),
}

impl Op {
    async fn run(self, process: &mut Process, name: &str) -> Result<Answer, EngineError> {
        // A request abandoned before its write leaves its commands queued: they are not this one's.
        process.pending.clear();
        match self {
            Op::NewGame => {
                // Goes out with the `isready` of the sync.
                process.queue(name, "ucinewgame");
                process.sync(name).await?;
                Ok(Answer::Ready)
            }
            Op::Go {
                position,
                go,
                chess960,
            } => {
                process.set_multipv(name, 1);
                process.set_chess960(name, chess960);
                process.queue(name, &position);
                process.send(name, &go).await?;
                // The engine's thinking time, as a clock sees it: from `go` to `bestmove`.
                let searching = Instant::now();
                let mut best = process.read_bestmove(name).await?;
                best.search_ms = u64::try_from(searching.elapsed().as_millis()).unwrap_or(u64::MAX);
                Ok(Answer::Best(best))
            }
            Op::Analyse {
                position,
                go,
                multipv,
                chess960,
            } => {
                process.set_multipv(name, multipv);
                process.set_chess960(name, chess960);
                process.queue(name, &position);
                process.send(name, &go).await?;
                process.read_analysis(name).await.map(Answer::Analysis)
            }
        }
    }
}

/// The child process and its pipes.
struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    buf: Vec<u8>,
    /// Commands queued for the next write, each ending in a newline.
    pending: Vec<u8>,
    /// The `MultiPV` value the engine runs with (1, the UCI default, until we change it).
    multipv: u32,
    /// Whether `UCI_Chess960` is on (off, the UCI default, until we change it).
    chess960: bool,
}

impl Process {
    /// Spawns the engine and runs the UCI handshake within `spec.init_timeout`. Returns the `id name`
    /// and the names of the options the engine advertised.
    async fn start(
        spec: &EngineSpec,
        path: &Path,
    ) -> Result<(Process, Option<String>, Vec<String>), EngineError> {
        let mut command = Command::new(path);
        command
            .args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        // Its own process group, so a Ctrl-C at the terminal reaches arena only and arena decides
        // how engines end.
        #[cfg(unix)]
        command.process_group(0);
        let spawn_error = |source| EngineError::Spawn {
            name: spec.name.clone(),
            source,
        };
        let mut child = command.spawn().map_err(spawn_error)?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("stdin and stdout were configured as pipes");
        };
        let mut process = Process {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            buf: Vec::new(),
            pending: Vec::new(),
            multipv: 1,
            // A script may switch the option on itself; then the process starts in that mode.
            chess960: spec.options.iter().any(|(option, value)| {
                option.eq_ignore_ascii_case(UCI_CHESS960) && value.eq_ignore_ascii_case("true")
            }),
        };
        let (id_name, options) = timeout(spec.init_timeout, process.handshake(spec))
            .await
            .unwrap_or(Err(EngineError::Timeout {
                name: spec.name.clone(),
                after: spec.init_timeout,
            }))?;
        debug!(engine = %spec.name, id = ?id_name, "engine ready");
        Ok((process, id_name, options))
    }

    async fn handshake(
        &mut self,
        spec: &EngineSpec,
    ) -> Result<(Option<String>, Vec<String>), EngineError> {
        let name = spec.name.as_str();
        // Each step waits for its answer: some engines (gnuchess) drop commands sent before they are ready.
        self.send(name, "uci").await?;
        let mut id_name = None;
        let mut advertised = Vec::new();
        loop {
            match self.read_line(name).await?.parse::<UciLine>() {
                Ok(UciLine::UciOk) => break,
                Ok(UciLine::IdName(id)) => id_name = Some(id),
                Ok(UciLine::Option(option)) => advertised.push(option),
                _ => {}
            }
        }
        for (option, value) in &spec.options {
            // UCI option names are case-insensitive; an unknown one is silently ignored by engines,
            // which would quietly change what a tournament measures.
            if !advertised.iter().any(|a| a.eq_ignore_ascii_case(option)) {
                warn!(engine = %name, option = %option, "engine does not advertise this option; it may be ignored");
            }
            self.send(name, &uci::setoption(option, value)).await?;
        }
        self.sync(name).await?;
        Ok((id_name, advertised))
    }

    /// `isready` → `readyok`, skipping whatever comes before.
    async fn sync(&mut self, name: &str) -> Result<(), EngineError> {
        self.send(name, "isready").await?;
        loop {
            if let Ok(UciLine::ReadyOk) = self.read_line(name).await?.parse::<UciLine>() {
                return Ok(());
            }
        }
    }

    /// Stops a search nobody waits for and resynchronises, within [`SETTLE_TIMEOUT`].
    async fn settle(&mut self, name: &str) -> Result<(), EngineError> {
        let settle = async {
            self.send(name, "stop").await?;
            self.sync(name).await
        };
        timeout(SETTLE_TIMEOUT, settle)
            .await
            .unwrap_or(Err(EngineError::Timeout {
                name: name.to_owned(),
                after: SETTLE_TIMEOUT,
            }))
    }

    /// Queues `setoption name MultiPV` when the engine runs with another value. Engines take
    /// options only while idle, which every request start is.
    fn set_multipv(&mut self, name: &str, multipv: u32) {
        if self.multipv != multipv {
            self.queue(name, &uci::setoption("MultiPV", &multipv.to_string()));
            // Should the write fail, the process is replaced: its state no longer matters.
            self.multipv = multipv;
        }
    }

    /// Queues `setoption name UCI_Chess960` when the engine runs in the other mode. A script's
    /// own `UCI_Chess960` option is overridden for each request by the variant of its game.
    fn set_chess960(&mut self, name: &str, chess960: bool) {
        if self.chess960 != chess960 {
            let value = if chess960 { "true" } else { "false" };
            self.queue(name, &uci::setoption(UCI_CHESS960, value));
            self.chess960 = chess960;
        }
    }

    /// Reads a multi-PV search up to `bestmove`, keeping the last complete report of every line.
    ///
    /// An engine reports all its lines after each iteration, line 1 first, so a line-1 report starts
    /// a new set; bound scores (aspiration fail-high/low) are kept only while nothing exact is known.
    async fn read_analysis(&mut self, name: &str) -> Result<Analysis, EngineError> {
        let mut lines: Vec<InfoLine> = Vec::new();
        loop {
            let line = self.read_line(name).await?;
            match line.parse::<UciLine>() {
                Ok(UciLine::Info(info)) if info.score.is_some() => {
                    let index = info.multipv.unwrap_or(1).max(1) as usize;
                    let exact = info.bound == uci::ScoreBound::Exact;
                    if index == 1 && exact {
                        lines.clear();
                    }
                    match lines
                        .iter_mut()
                        .find(|l| l.multipv.unwrap_or(1) as usize == index)
                    {
                        Some(old) if exact || old.bound != uci::ScoreBound::Exact => *old = info,
                        Some(_) => {}
                        None => lines.push(info),
                    }
                }
                Ok(UciLine::BestMove { best, .. }) => {
                    let protocol = || EngineError::Protocol {
                        name: name.to_owned(),
                        line: line.trim().to_owned(),
                    };
                    let best = match best.as_deref() {
                        None => return Err(protocol()),
                        Some("(none)") => None,
                        Some(text) => match text.parse::<UciMove>() {
                            Ok(UciMove::Null) => None,
                            Ok(_) => Some(text.to_owned()),
                            Err(_) => return Err(protocol()),
                        },
                    };
                    lines.sort_by_key(|l| l.multipv.unwrap_or(1));
                    return Ok(Analysis {
                        lines: lines.into_iter().map(Into::into).collect(),
                        best,
                    });
                }
                _ => {}
            }
        }
    }

    /// Reads a search up to `bestmove`. Of its `info` lines only the last one with a line-1
    /// score is parsed (once, at the end): the others are checked without building their `pv`,
    /// and no line is copied but that one.
    async fn read_bestmove(&mut self, name: &str) -> Result<BestMove, EngineError> {
        // The raw text of the last info line with a line-1 score, if any came.
        let mut last = String::new();
        loop {
            self.fill_line(name).await?;
            let line = self.line();
            if uci::is_scored_info(&line, 1) {
                last.clear();
                last.push_str(&line);
                continue;
            }
            if line.trim().split_ascii_whitespace().next() != Some("bestmove") {
                continue;
            }
            let Ok(UciLine::BestMove { best, ponder }) = line.parse::<UciLine>() else {
                unreachable!("a line whose first token is `bestmove` parses as one");
            };
            let protocol = || EngineError::Protocol {
                name: name.to_owned(),
                line: line.trim().to_owned(),
            };
            let best = best.ok_or_else(protocol)?;
            if best == "(none)" {
                return Err(EngineError::NoMove {
                    name: name.to_owned(),
                });
            }
            match best.parse::<UciMove>() {
                Ok(UciMove::Null) => {
                    return Err(EngineError::NoMove {
                        name: name.to_owned(),
                    });
                }
                Ok(_) => {}
                Err(_) => return Err(protocol()),
            }
            // A malformed ponder move is harmless: we never ponder.
            let ponder = ponder.filter(|p| p.parse::<UciMove>().is_ok());
            let info = match last.parse::<UciLine>() {
                Ok(UciLine::Info(info)) if !last.is_empty() => Some(info.into()),
                _ => None,
            };
            return Ok(BestMove {
                uci: best,
                ponder,
                info,
                search_ms: 0,
            });
        }
    }

    /// Adds `command` to what the next [`send`](Process::send) writes.
    fn queue(&mut self, name: &str, command: &str) {
        debug!(engine = %name, "> {command}");
        self.pending.extend_from_slice(command.as_bytes());
        self.pending.push(b'\n');
    }

    /// Writes the queued commands and `command` in one `write`: a request's `setoption`s,
    /// `position` and `go` reach the engine together, so it wakes once per request and the
    /// driver makes one system call, not one per line.
    async fn send(&mut self, name: &str, command: &str) -> Result<(), EngineError> {
        self.queue(name, command);
        let (stdin, pending) = (&mut self.stdin, &self.pending);
        let written = async {
            stdin.write_all(pending).await?;
            stdin.flush().await
        };
        let result = written.await.map_err(|err| EngineError::Crashed {
            name: name.to_owned(),
            detail: format!("failed to send `{command}`: {err}"),
        });
        self.pending.clear();
        result
    }

    async fn read_line(&mut self, name: &str) -> Result<String, EngineError> {
        self.fill_line(name).await?;
        Ok(self.line().into_owned())
    }

    /// Reads the next line of the engine's output into `buf`; [`line`](Process::line) reads it.
    async fn fill_line(&mut self, name: &str) -> Result<(), EngineError> {
        self.buf.clear();
        let read = self.stdout.read_until(b'\n', &mut self.buf).await;
        let crashed = |detail| EngineError::Crashed {
            name: name.to_owned(),
            detail,
        };
        match read {
            Ok(0) => {
                // The output closed: the process is exiting. Its status says why, if it comes quickly.
                let status = match timeout(Duration::from_millis(500), self.child.wait()).await {
                    Ok(Ok(status)) => format!("process exited ({status})"),
                    _ => "output closed".to_owned(),
                };
                Err(crashed(status))
            }
            Ok(_) => {
                debug!(engine = %name, "< {}", self.line());
                Ok(())
            }
            Err(err) => Err(crashed(format!("failed to read output: {err}"))),
        }
    }

    /// The line [`fill_line`](Process::fill_line) read, without its line end; borrowed unless it
    /// holds bytes that are not UTF-8 (lossy: a stray byte in a banner is no reason to fail).
    fn line(&self) -> std::borrow::Cow<'_, str> {
        match String::from_utf8_lossy(&self.buf) {
            std::borrow::Cow::Borrowed(text) => std::borrow::Cow::Borrowed(text.trim_end()),
            std::borrow::Cow::Owned(text) => std::borrow::Cow::Owned(text.trim_end().to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};
    use tempfile::TempDir;

    use super::*;
    use crate::Score;

    const STOCKFISH: &str = "/usr/games/stockfish";

    /// A deterministic Stockfish spec, or `None` (after saying so) when Stockfish is not installed.
    fn stockfish(name: &str) -> Option<EngineSpec> {
        if !Path::new(STOCKFISH).exists() {
            crate::test_parts::missing(
                "engine::process tests",
                STOCKFISH,
                "apt-get install stockfish",
            );
            return None;
        }
        Some(
            EngineSpec::new(name, STOCKFISH)
                .option("Threads", "1")
                .option("Hash", "16"),
        )
    }

    /// A fault-test engine from tests/fixtures/engines with a fresh state directory.
    fn fixture(script: &str, extra_args: &[&str]) -> (EngineSpec, TempDir) {
        let state = tempfile::tempdir().expect("temp dir");
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("tests/fixtures/engines")
            .join(script);
        let mut spec = EngineSpec::new(script, path.to_str().expect("utf-8 fixture path"));
        spec.args
            .push(state.path().to_str().expect("utf-8 temp path").to_owned());
        spec.args.extend(extra_args.iter().map(|a| a.to_string()));
        spec.move_timeout_margin = Duration::from_millis(400);
        (spec, state)
    }

    fn starts(state: &TempDir) -> u32 {
        let text = std::fs::read_to_string(state.path().join("starts"))
            .expect("the fixture counts its starts");
        text.trim().parse().expect("a number")
    }

    fn moves(list: &[&str]) -> Vec<String> {
        list.iter().map(|m| m.to_string()).collect()
    }

    fn assert_legal(fen: Option<&str>, played: &[String], best: &str) {
        let mut pos: Chess = match fen {
            Some(fen) => {
                let fen: Fen = fen.parse().expect("valid fen");
                fen.into_position(CastlingMode::Standard)
                    .expect("legal position")
            }
            None => Chess::default(),
        };
        for m in played {
            let m = m
                .parse::<UciMove>()
                .expect("uci")
                .to_move(&pos)
                .expect("legal");
            pos.play_unchecked(m);
        }
        best.parse::<UciMove>()
            .expect("bestmove is uci")
            .to_move(&pos)
            .expect("bestmove is legal");
    }

    #[tokio::test]
    async fn stockfish_handshake_reports_id_name() {
        let Some(spec) = stockfish("sf") else { return };
        let sf = EngineHandle::spawn(spec).await.expect("stockfish starts");
        assert_eq!(sf.name(), "sf");
        let id = sf.id_name().expect("stockfish sends id name");
        assert!(id.starts_with("Stockfish"), "{id}");
        assert_eq!(sf.restarts(), 0);
        sf.shutdown().await;
    }

    #[tokio::test]
    async fn stockfish_best_move_by_nodes_and_by_depth() {
        let Some(spec) = stockfish("sf") else { return };
        let sf = EngineHandle::spawn(spec).await.expect("stockfish starts");

        let best = sf
            .best_move(None, &[], &SearchLimits::nodes(1000))
            .await
            .expect("a move");
        assert_legal(None, &[], &best.uci);
        let info = best.info.expect("stockfish prints info lines");
        assert!(info.score.is_some() && !info.pv.is_empty());
        assert_eq!(info.pv[0], best.uci);

        sf.new_game().await.expect("ucinewgame");
        let played = moves(&["e2e4", "e7e5", "g1f3"]);
        let best = sf
            .best_move(None, &played, &SearchLimits::depth(6))
            .await
            .expect("a move");
        assert_legal(None, &played, &best.uci);
        let info = best.info.expect("stockfish prints info lines");
        assert_eq!(info.depth, Some(6));
        assert_eq!(info.multipv, Some(1));
        sf.shutdown().await;
    }

    #[tokio::test]
    async fn stockfish_from_fen_and_moves_finds_mate() {
        let Some(spec) = stockfish("sf") else { return };
        let sf = EngineHandle::spawn(spec).await.expect("stockfish starts");
        let fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1";
        let played = moves(&["h2h3", "g8h8"]);
        let best = sf
            .best_move(Some(fen), &played, &SearchLimits::depth(5))
            .await
            .expect("a move");
        assert_eq!(best.uci, "a1a8");
        assert_eq!(best.info.and_then(|i| i.score), Some(Score::Mate(1)));

        // A mated side has no move: an error, but not a fault that costs a restart.
        let mated = sf
            .best_move(
                Some(fen),
                &moves(&["h2h3", "g8h8", "a1a8"]),
                &SearchLimits::depth(3),
            )
            .await;
        assert!(
            matches!(mated, Err(EngineError::NoMove { ref name }) if name == "sf"),
            "{mated:?}"
        );
        sf.best_move(None, &[], &SearchLimits::nodes(500))
            .await
            .expect("still serves");
        assert_eq!(sf.restarts(), 0);
        sf.shutdown().await;
    }

    #[tokio::test]
    async fn stockfish_skill_level_zero_is_applied() {
        let Some(spec) = stockfish("sf-weak") else {
            return;
        };
        let weak = EngineHandle::spawn(spec.option("Skill Level", "0"))
            .await
            .expect("stockfish starts");
        // At full strength a fixed-node search always gives the same move (see the determinism test);
        // Skill Level 0 picks randomly among weaker candidates, so repeated searches disagree.
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..16 {
            weak.new_game().await.expect("ucinewgame");
            let best = weak
                .best_move(None, &[], &SearchLimits::depth(6))
                .await
                .expect("a move");
            assert_legal(None, &[], &best.uci);
            seen.insert(best.uci);
        }
        assert!(seen.len() > 1, "skill level 0 always played {seen:?}");
        weak.shutdown().await;
    }

    #[tokio::test]
    async fn stockfish_fixed_nodes_are_deterministic_across_processes() {
        let Some(spec) = stockfish("sf") else { return };
        let fen = Some("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        let limits = SearchLimits::nodes(2000);
        let mut answers = Vec::new();
        for _ in 0..2 {
            let sf = EngineHandle::spawn(spec.clone())
                .await
                .expect("stockfish starts");
            answers.push(sf.best_move(fen, &[], &limits).await.expect("a move"));
            sf.shutdown().await;
        }
        // The same move and search, in whatever time each took.
        assert_eq!(
            (&answers[0].uci, &answers[0].info),
            (&answers[1].uci, &answers[1].info)
        );
    }

    #[tokio::test]
    async fn abandoned_search_is_stopped_without_restart() {
        let Some(spec) = stockfish("sf") else { return };
        let sf = EngineHandle::spawn(spec).await.expect("stockfish starts");
        let limits = SearchLimits::movetime_ms(20_000);
        let long = sf.best_move(None, &[], &limits);
        assert!(
            timeout(Duration::from_millis(300), long).await.is_err(),
            "the search is still running"
        );
        let best = timeout(
            Duration::from_secs(10),
            sf.best_move(None, &[], &SearchLimits::nodes(500)),
        )
        .await
        .expect("the abandoned search was stopped")
        .expect("a move");
        assert_legal(None, &[], &best.uci);
        assert_eq!(sf.restarts(), 0);
        sf.shutdown().await;
    }

    #[tokio::test]
    async fn options_are_sent_in_order_between_uciok_and_isready() {
        let (spec, state) = fixture("crash_after_go.py", &["1000"]);
        let spec = spec
            .option("Hash", "32")
            .option("Skill Level", "0")
            .option("Threads", "1");
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        assert_eq!(engine.id_name(), Some("FakeEngine crash"));
        engine.shutdown().await;
        let log =
            std::fs::read_to_string(state.path().join("commands.log")).expect("the fixture logs");
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(
            lines,
            [
                "uci",
                "setoption name Hash value 32",
                "setoption name Skill Level value 0",
                "setoption name Threads value 1",
                "isready",
                "quit"
            ]
        );
    }

    #[tokio::test]
    async fn multipv_is_set_only_when_a_request_needs_another_value() {
        let (spec, state) = fixture("crash_after_go.py", &["1000"]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let limits = SearchLimits::depth(1);
        let analysis = engine
            .analyse(fen, &limits, 3, &[])
            .await
            .expect("an analysis");
        assert_eq!(analysis.best.as_deref(), Some("e2e4"));
        assert_eq!(analysis.lines.len(), 1, "the fixture prints one line");
        assert_eq!(analysis.lines[0].score, Some(Score::Cp(12)));
        engine
            .analyse(fen, &limits, 3, &moves(&["d2d4"]))
            .await
            .expect("an analysis");
        engine.best_move(None, &[], &limits).await.expect("a move");
        engine.shutdown().await;
        let log =
            std::fs::read_to_string(state.path().join("commands.log")).expect("the fixture logs");
        let lines: Vec<&str> = log
            .lines()
            .skip_while(|l| *l != "isready")
            .skip(1)
            .collect();
        assert_eq!(
            lines,
            [
                "setoption name MultiPV value 3",
                &format!("position fen {fen}"),
                "go depth 1",
                &format!("position fen {fen}"),
                "go depth 1 searchmoves d2d4",
                "setoption name MultiPV value 1",
                "position startpos",
                "go depth 1",
                "quit"
            ]
        );
    }

    #[tokio::test]
    async fn a_request_reaches_the_engine_in_one_write() {
        let (spec, state) = fixture("crash_after_go.py", &["1000"]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let limits = SearchLimits::depth(1);
        engine.new_game().await.expect("ucinewgame");
        engine
            .analyse(fen, &limits, 3, &[])
            .await
            .expect("an analysis");
        engine.best_move(None, &[], &limits).await.expect("a move");
        engine.shutdown().await;
        let reads =
            std::fs::read_to_string(state.path().join("reads.log")).expect("the fixture logs");
        let reads: Vec<&str> = reads.lines().collect();
        // uci; isready (the fixture has no options); then one read per request: ucinewgame + isready,
        // setoption MultiPV + position + go (twice); then quit. A request split over several
        // writes can still arrive in one read, but never the other way round.
        assert_eq!(reads, ["1", "1", "2", "3", "3", "1"]);
    }

    #[tokio::test]
    async fn crashed_engine_is_restarted_for_the_next_request() {
        let (spec, state) = fixture("crash_after_go.py", &["2"]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let limits = SearchLimits::nodes(10);
        let first = engine
            .best_move(None, &[], &limits)
            .await
            .expect("the first go is answered");
        assert_eq!(first.uci, "e2e4");
        assert_eq!(first.ponder.as_deref(), Some("e7e5"));
        assert_eq!(
            first.info.as_ref().and_then(|i| i.score),
            Some(Score::Cp(12))
        );

        let err = engine
            .best_move(None, &[], &limits)
            .await
            .expect_err("the second go crashes");
        let EngineError::Crashed { name, detail } = &err else {
            panic!("expected a crash, got {err:?}")
        };
        assert_eq!(name, "crash_after_go.py");
        assert!(
            detail.contains("exit status: 3") || detail.contains("closed"),
            "{detail}"
        );
        assert!(
            err.to_string()
                .starts_with("engine `crash_after_go.py` crashed"),
            "{err}"
        );

        let again = engine
            .best_move(None, &[], &limits)
            .await
            .expect("the replacement answers");
        assert_eq!(again.uci, "e2e4");
        assert_eq!(engine.restarts(), 1);
        assert_eq!(starts(&state), 2);
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn hung_engine_times_out_and_is_restarted() {
        let (spec, state) = fixture("hang_on_go.py", &[]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let err = engine
            .best_move(None, &[], &SearchLimits::movetime_ms(50))
            .await
            .expect_err("the engine hangs");
        let EngineError::Timeout { name, after } = &err else {
            panic!("expected a timeout, got {err:?}")
        };
        assert_eq!(name, "hang_on_go.py");
        assert_eq!(*after, Duration::from_millis(450));

        let best = engine
            .best_move(None, &[], &SearchLimits::movetime_ms(50))
            .await
            .expect("the replacement answers");
        assert_eq!(best.uci, "e2e4");
        assert_eq!(engine.restarts(), 1);
        assert_eq!(starts(&state), 2);
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn garbage_bestmove_is_a_protocol_error_and_restarts() {
        let (spec, state) = fixture("bad_bestmove.py", &[]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let err = engine
            .best_move(None, &[], &SearchLimits::depth(1))
            .await
            .expect_err("garbage");
        let EngineError::Protocol { name, line } = &err else {
            panic!("expected a protocol error, got {err:?}")
        };
        assert_eq!(
            (name.as_str(), line.as_str()),
            ("bad_bestmove.py", "bestmove xyz")
        );

        let best = engine
            .best_move(None, &[], &SearchLimits::depth(1))
            .await
            .expect("the replacement answers");
        assert_eq!(best.uci, "e2e4");
        assert_eq!(engine.restarts(), 1);
        assert_eq!(starts(&state), 2);
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn engine_that_exits_while_idle_is_restarted() {
        let (spec, state) = fixture("exit_when_idle.py", &[]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        engine
            .best_move(None, &[], &SearchLimits::depth(1))
            .await
            .expect("the first go is answered");
        // The process exits after its answer; the actor notices while idle and replaces it on demand.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let best = engine
            .best_move(None, &[], &SearchLimits::depth(1))
            .await
            .expect("the replacement answers");
        assert_eq!(best.uci, "e2e4");
        assert_eq!(engine.restarts(), 1);
        assert_eq!(starts(&state), 2);
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn silent_engine_times_out_at_start() {
        let (mut spec, _state) = fixture("never_uciok.py", &[]);
        spec.init_timeout = Duration::from_millis(500);
        let err = EngineHandle::spawn(spec).await.expect_err("no uciok");
        assert!(
            matches!(&err, EngineError::Timeout { name, after } if name == "never_uciok.py" && *after == Duration::from_millis(500)),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn missing_binary_and_empty_limits_are_reported() {
        let err = EngineHandle::spawn(EngineSpec::new("ghost", "no-such-engine-xyz"))
            .await
            .expect_err("missing");
        assert!(matches!(err, EngineError::NotFound { .. }), "{err:?}");

        let (spec, _state) = fixture("bad_bestmove.py", &[]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let err = engine
            .best_move(None, &[], &SearchLimits::default())
            .await
            .expect_err("no limit");
        assert!(matches!(err, EngineError::NoLimit { .. }), "{err:?}");
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn clones_see_shutdown() {
        let (spec, _state) = fixture("crash_after_go.py", &["1000"]);
        let engine = EngineHandle::spawn(spec).await.expect("fixture starts");
        let clone = engine.clone();
        engine.shutdown().await;
        let err = clone
            .best_move(None, &[], &SearchLimits::depth(1))
            .await
            .expect_err("shut down");
        assert!(
            matches!(&err, EngineError::Shutdown { name } if name == "crash_after_go.py"),
            "{err:?}"
        );
    }
}
