//! What a running tournament shows: a progress bar on a terminal, plain lines otherwise.
//!
//! Log lines are printed through [`LogWriter`], which lifts the bar out of the way first, so logs
//! and the bar never garble each other.

use std::{
    io::{self, IsTerminal, Write},
    sync::{
        Mutex, OnceLock, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar currently on screen, if any, for [`LogWriter`].
static ACTIVE_BAR: OnceLock<ProgressBar> = OnceLock::new();

/// Counters of a running tournament.
pub struct Progress {
    total: AtomicU64,
    done: AtomicU64,
    running: AtomicU64,
    plies: AtomicU64,
    llm_calls: AtomicU64,
    tokens: AtomicU64,
    /// Games analysed and games to analyse; the counter shows once analysis is on.
    analysed: AtomicU64,
    to_analyse: AtomicU64,
    analysis_on: AtomicBool,
    /// Spend so far (see [`Progress::set_spend`]); shown once a call was made.
    spend: Mutex<Option<super::budget::Spend>>,
    done_at_start: u64,
    started: Instant,
    bar: Option<ProgressBar>,
    /// The client whose endpoints get a line each (see [`Progress::watch_endpoints`]).
    client: OnceLock<crate::llm::LlmClient>,
    /// A sequential experiment's line (see [`Progress::set_experiment`]).
    experiment: Mutex<Option<String>>,
}

impl Progress {
    /// Starts counting; `done`, `plies`, `llm_calls` and `tokens` carry over from a resumed run.
    pub fn new(total: u64, done: u64, plies: u64, llm_calls: u64, tokens: u64) -> Progress {
        let bar = io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:24.cyan/blue}] {pos}/{len} games · {msg}",
                )
                .expect("the progress template is valid")
                .progress_chars("=> "),
            );
            bar.set_position(done);
            bar.enable_steady_tick(Duration::from_millis(500));
            let _ = ACTIVE_BAR.set(bar.clone());
            bar
        });
        let progress = Progress {
            total: AtomicU64::new(total),
            done: AtomicU64::new(done),
            running: AtomicU64::new(0),
            plies: AtomicU64::new(plies),
            llm_calls: AtomicU64::new(llm_calls),
            tokens: AtomicU64::new(tokens),
            analysed: AtomicU64::new(0),
            to_analyse: AtomicU64::new(0),
            analysis_on: AtomicBool::new(false),
            spend: Mutex::new(None),
            done_at_start: done,
            started: Instant::now(),
            bar,
            client: OnceLock::new(),
            experiment: Mutex::new(None),
        };
        progress.refresh();
        progress
    }

    /// Shows a line per model endpoint and key of `client` (calls in flight, limits and how
    /// close the last minute came to them, 429s: see [`super::endpoint_line`]) under the bar,
    /// and after each plain progress line.
    pub(crate) fn watch_endpoints(&self, client: crate::llm::LlmClient) {
        let _ = self.client.set(client);
        self.refresh();
    }

    /// The endpoint lines, one per endpoint and key used so far.
    fn endpoint_lines(&self) -> Vec<String> {
        self.client
            .get()
            .map(|c| super::endpoint_line::endpoint_lines(&c.load()))
            .unwrap_or_default()
    }

    /// A sequential experiment's standing after the games finished so far: pairs played and
    /// each arm's LLR against its bounds (see [`experiment_line`]). Under the bar it is a line
    /// of its own; in plain output it is printed whenever it changes.
    pub(crate) fn set_experiment(&self, line: String) {
        let changed = {
            let mut shown = self
                .experiment
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let changed = shown.as_deref() != Some(line.as_str());
            *shown = Some(line.clone());
            changed
        };
        match &self.bar {
            Some(_) => self.refresh(),
            None if changed => eprintln!("[{}] {line}", clock(self.started.elapsed())),
            None => {}
        }
    }

    /// More games were scheduled.
    pub(crate) fn set_total(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.set_length(total);
        }
    }

    /// A game started.
    pub(crate) fn game_started(&self) {
        self.running.fetch_add(1, Ordering::Relaxed);
        self.refresh();
    }

    /// A game ended (finished or set aside); `summary` describes it for the plain-line display.
    pub(crate) fn game_ended(&self, finished: bool, summary: &str) {
        self.running.fetch_sub(1, Ordering::Relaxed);
        if finished {
            self.done.fetch_add(1, Ordering::Relaxed);
        }
        match &self.bar {
            Some(bar) => {
                bar.set_position(self.done.load(Ordering::Relaxed));
                bar.println(summary);
                self.refresh();
            }
            None => {
                eprintln!(
                    "[{}] {summary} · {}",
                    clock(self.started.elapsed()),
                    self.line()
                );
                for line in self.endpoint_lines() {
                    eprintln!("{line}");
                }
            }
        }
    }

    /// A move was played.
    pub fn ply(&self) {
        self.plies.fetch_add(1, Ordering::Relaxed);
        self.refresh();
    }

    /// An LLM call returned, using `tokens` tokens.
    pub(crate) fn llm_call(&self, tokens: u64) {
        self.llm_calls.fetch_add(1, Ordering::Relaxed);
        self.tokens.fetch_add(tokens, Ordering::Relaxed);
        self.refresh();
    }

    /// The tournament's spend so far, read from the store (it counts calls of resumed games
    /// too, and estimates calls without reported usage).
    pub(crate) fn set_spend(&self, spend: super::budget::Spend) {
        *self.spend.lock().unwrap_or_else(PoisonError::into_inner) = Some(spend);
        self.refresh();
    }

    /// Engine analysis is on: `analysed` of `total` finished games are analysed so far.
    pub(crate) fn analysis_started(&self, analysed: u64, total: u64) {
        self.analysed.store(analysed, Ordering::Relaxed);
        self.to_analyse.store(total, Ordering::Relaxed);
        self.analysis_on.store(true, Ordering::Relaxed);
        self.refresh();
    }

    /// One more game waits for its analysis.
    pub(crate) fn analysis_queued(&self) {
        self.to_analyse.fetch_add(1, Ordering::Relaxed);
        self.refresh();
    }

    /// A game's analysis ended (`done`: it is complete); `summary` describes it for the
    /// plain-line display.
    pub(crate) fn game_analysed(&self, done: bool, summary: &str) {
        if done {
            self.analysed.fetch_add(1, Ordering::Relaxed);
        }
        match &self.bar {
            Some(_) => self.refresh(),
            None => eprintln!(
                "[{}] {summary} · {}",
                clock(self.started.elapsed()),
                self.analysis_counter()
            ),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn refresh(&self) {
        if let Some(bar) = &self.bar {
            let mut message = format!("{} · ETA {}", self.counters(), self.eta());
            if let Some(line) = &*self
                .experiment
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
            {
                message.push('\n');
                message.push_str(line);
            }
            for line in self.endpoint_lines() {
                message.push('\n');
                message.push_str(&line);
            }
            bar.set_message(message);
        }
    }

    /// Time left at the pace of the games finished in this run; `-` until one has finished
    /// (resumed games would make any earlier guess meaningless).
    fn eta(&self) -> String {
        let done = self.done.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        let done_here = done.saturating_sub(self.done_at_start);
        if done_here == 0 || total <= done {
            return "-".into();
        }
        let per_game = self.started.elapsed().as_secs_f64() / done_here as f64;
        clock(Duration::from_secs_f64(per_game * (total - done) as f64))
    }

    fn counters(&self) -> String {
        let mut counters = format!(
            "{} running · {} plies · {} LLM calls · {} tokens",
            self.running.load(Ordering::Relaxed),
            self.plies.load(Ordering::Relaxed),
            self.llm_calls.load(Ordering::Relaxed),
            human(self.tokens.load(Ordering::Relaxed)),
        );
        if let Some(spend) = *self.spend.lock().unwrap_or_else(PoisonError::into_inner)
            && spend.calls > 0
        {
            counters.push_str(" · ");
            counters.push_str(&spend_text(&spend));
        }
        if self.analysis_on.load(Ordering::Relaxed) {
            counters.push_str(" · ");
            counters.push_str(&self.analysis_counter());
        }
        counters
    }

    fn analysis_counter(&self) -> String {
        format!(
            "analysed {}/{} games",
            self.analysed.load(Ordering::Relaxed),
            self.to_analyse.load(Ordering::Relaxed)
        )
    }

    /// Counters plus progress and ETA, for plain-line output.
    fn line(&self) -> String {
        let done = self.done.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        format!(
            "{done}/{total} games · {} · elapsed {} · ETA {}",
            self.counters(),
            clock(self.started.elapsed()),
            self.eta()
        )
    }
}

/// A sequential experiment's live line: for each arm its pairs counted so far (of the cap), its
/// LLR and the bounds that stop it, or its verdict once decided, e.g.
/// `experiment: listed 12/60 pairs, LLR 1.31 in (-2.94, 4.54) · null 12/60 pairs, LLR -0.40 in
/// (-2.94, 2.94)`.
pub(crate) fn experiment_line(
    design: &super::experiment::Design,
    status: &super::experiment::ExperimentStatus,
) -> String {
    use crate::{rating::sprt::Verdict, table::fixed};
    let cap = design.cap();
    let arms: Vec<String> = status
        .arms
        .iter()
        .map(|a| {
            let mut part = format!("{} {}/{cap} pairs", a.variant, a.pairs);
            match (a.verdict, a.llr, a.lower_bound, a.upper_bound) {
                (Verdict::Undecided, Some(llr), Some(lower), Some(upper)) => {
                    part.push_str(&format!(
                        ", LLR {} in ({}, {})",
                        fixed(llr, 2),
                        fixed(lower, 2),
                        fixed(upper, 2)
                    ))
                }
                (Verdict::H1, Some(llr), _, Some(upper)) => part.push_str(&format!(
                    ", H1: LLR {} reached {}",
                    fixed(llr, 2),
                    fixed(upper, 2)
                )),
                (Verdict::H0, Some(llr), Some(lower), _) => part.push_str(&format!(
                    ", H0: LLR {} reached {}",
                    fixed(llr, 2),
                    fixed(lower, 2)
                )),
                _ => {}
            }
            part
        })
        .collect();
    format!("experiment: {}", arms.join(" · "))
}

/// `spent $0.0123`: `~` when some calls had no reported usage (their tokens are estimated),
/// `+?` when some calls went to models without a price, `$?` when none had one.
fn spend_text(spend: &super::budget::Spend) -> String {
    let approx = if spend.estimated_calls > 0 { "~" } else { "" };
    if spend.unpriced_calls == spend.calls {
        return "spent $? (no price)".into();
    }
    let unpriced = if spend.unpriced_calls > 0 { "+?" } else { "" };
    format!("spent {approx}${:.4}{unpriced}", spend.usd)
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn human(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A `tracing` writer that prints above the progress bar.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match ACTIVE_BAR.get() {
            Some(bar) if !bar.is_finished() => bar.suspend(|| io::stderr().write_all(buf))?,
            _ => io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LogWriter
    }
}
