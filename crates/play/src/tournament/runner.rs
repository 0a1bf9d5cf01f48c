//! The tournament loop: load, check, schedule, play games concurrently, resume what is unfinished.

use std::{
    collections::{BTreeMap, HashMap, hash_map::Entry},
    path::PathBuf,
    sync::Arc,
};

use tokio::{
    signal::unix::{Signal, SignalKind, signal},
    sync::watch,
    task::JoinSet,
};

use super::{
    GameError, TournamentError,
    adjudicate::Adjudication,
    analysis::{AnalysisReport, AnalysisWorker},
    budget::{self, LiveLedger, Reached},
    env::GameEnv,
    game::{self, GameOutcome},
    players::Roster,
    progress::Progress,
    reload,
    rules::{Rules, ScriptHost},
    schedule::{self, FormatAnalysis, FormatError, FormatGame, FormatState},
    versions,
    worker::Worker,
};
use crate::{
    board::book::Opening,
    store::{
        ErrorKind, Fence, GameRow, GameStatus, LeaseKind, PlayerRecord, Store, current_attempts,
    },
};

/// Games played at once when neither the script nor the command line says.
const DEFAULT_CONCURRENCY: usize = 2;

/// How to run a tournament script.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The tournament script.
    pub script: PathBuf,
    /// The store file.
    pub db: PathBuf,
    /// Games at once (overrides the script).
    pub concurrency: Option<usize>,
    /// Reload scripts when they change.
    pub watch: bool,
    /// This process among the workers that share the store: a game is played by the worker
    /// that holds its lease.
    pub worker: Worker,
    /// Start a new version of the tournament (`NAME@v2`, ...) in the store instead of resuming
    /// the newest one: see [`super::versions`].
    pub new_version: bool,
}

/// How a run was stopped before its schedule was complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// One Ctrl-C: no new game started and the running ones finished.
    Interrupted,
    /// A second Ctrl-C: the running games were abandoned where they stood (every stored move
    /// and reply is kept, and the next run resumes them, as after a kill).
    Aborted,
}

/// What a run did.
#[derive(Debug)]
pub struct RunSummary {
    /// The tournament's id in the store.
    pub tournament: i64,
    /// Games finished in this run.
    pub finished: usize,
    /// Games set aside in this run (resumable): schedule number and error.
    pub errored: Vec<(u32, GameError)>,
    /// Whether, and how, the run was stopped (Ctrl-C) before the schedule was complete.
    pub stopped: Option<Stop>,
    /// What the engine analysis did, when the script asks for one.
    pub analysis: Option<AnalysisReport>,
    /// The budgets that kept games from starting, each with the games it kept back (they stay
    /// scheduled and start on a later run once the budget is raised).
    pub budget_stops: Vec<BudgetStop>,
    /// Replays scheduled at the start of this run, one per game a harness fault made void in an
    /// earlier run: (the replay's number, the void game's number).
    pub replays: Vec<(u32, u32)>,
    /// Games a harness fault (an engine that crashed or hung) made void in this run: number and
    /// reason. They count for nobody, and the next run plays their slots again.
    pub voided: Vec<(u32, String)>,
    /// Games this worker stopped because another worker took them over while it stalled past
    /// its lease (its writes were refused): number and the refusal. The other worker plays them.
    pub lost: Vec<(u32, String)>,
}

/// A budget that was reached during a run, and the games it kept from starting.
#[derive(Debug, Clone)]
pub struct BudgetStop {
    /// The budget and the spend at the end of the run (the store's, including the calls of
    /// the games that were still running when the budget was reached).
    pub reached: Reached,
    /// Schedule numbers of the games not started because of it.
    pub games: Vec<u32>,
}

/// Seconds between two readings of the spend for the progress line.
const SPEND_REFRESH: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs (or resumes) the tournament of `options.script`, its scripts loaded by `host`.
///
/// # Errors
/// Problems found before play (script, players, openings, store); problems during play set single
/// games aside and are reported in [`RunSummary::errored`].
pub async fn run(
    options: RunOptions,
    host: Arc<dyn ScriptHost>,
) -> Result<RunSummary, TournamentError> {
    let checked = check_before_play(&options, host.as_ref())?;
    let roster = Arc::new(Roster::prepare(&checked.spec).await?);
    let adjudication = Adjudication::prepare(&checked.spec).await?.map(Arc::new);
    let store = Arc::new(Store::open(&options.db)?);
    let (tournament, replays) = register(&store, &options, &checked)?;
    let (generations, _watcher) = watch_scripts(options.watch, &host, &checked.first);
    let services = Services::start(
        &options,
        &checked,
        &store,
        tournament,
        &roster,
        adjudication.as_ref(),
    )?;
    let mut summary = RunSummary {
        tournament,
        finished: 0,
        errored: Vec::new(),
        stopped: None,
        analysis: None,
        budget_stops: Vec::new(),
        replays,
        voided: Vec::new(),
        lost: Vec::new(),
    };
    let round = Round {
        env: &services.env,
        scripts: Scripts {
            host: host.as_ref(),
            generations: &generations,
        },
        budgets: Budgets {
            spec: &checked.spec,
            prices: &checked.prices,
            ledger: &services.ledger,
        },
        openings: &checked.openings,
        concurrency: options
            .concurrency
            .or(checked.spec.settings.concurrency)
            .unwrap_or(DEFAULT_CONCURRENCY)
            .max(1),
        workers: Workers {
            play: &options.worker,
            analysis: services.analysis.as_ref(),
        },
    };
    play_rounds(&round, &mut summary).await?;
    services
        .wind_down(
            &checked.prices,
            &roster,
            adjudication.as_ref(),
            &mut summary,
        )
        .await;
    Ok(summary)
}

/// What is read and checked before any endpoint is contacted.
struct Checked {
    /// The scripts' first generation, and the tournament it describes.
    first: Arc<dyn Rules>,
    spec: crate::spec::TournamentSpec,
    openings: Vec<Opening>,
    /// The name the tournament is stored under (see [`choose_version`]).
    stored_name: String,
    prices: crate::llm::PriceTable,
}

/// Loads the scripts and the openings, and checks what can be checked before any endpoint is
/// contacted: a finished tournament whose scripts changed is not run again under its old name
/// (`--new-version` picks the next version's), and a dollar budget must be measurable.
fn check_before_play(
    options: &RunOptions,
    host: &dyn ScriptHost,
) -> Result<Checked, TournamentError> {
    let first = host.load(&options.script, 1)?;
    let spec = first.spec().clone();
    let settings = &spec.settings;
    let at = spec.defined_at.get("").cloned().unwrap_or_default();
    let openings = schedule::load_openings(
        settings.openings.as_ref(),
        first.script_dir(),
        settings.seed,
    )
    .map_err(|source| TournamentError::Openings { at, source })?;
    let stored_name = if crate::store::location_exists(&options.db) {
        let store = Store::open(&options.db)?;
        choose_version(&store, first.as_ref(), openings.len(), options.new_version)?
    } else {
        settings.name.clone()
    };
    let prices = budget::price_table(settings);
    budget::check_priced(&spec, &prices)?;
    Ok(Checked {
        first,
        spec,
        openings,
        stored_name,
        prices,
    })
}

/// Opens the tournament in the store with its players and scripts, and schedules again the
/// slots that a harness fault made void in an earlier run (not in the run that voided them: a
/// fault that recurs must not loop). Returns the tournament's id and the replays, each as
/// (replay, the game it plays again).
fn register(
    store: &Store,
    options: &RunOptions,
    checked: &Checked,
) -> Result<(i64, Vec<(u32, u32)>), TournamentError> {
    let settings_json = serde_json::to_string(&checked.spec.settings)?;
    let tournament = store.open_tournament(
        &checked.stored_name,
        &options.script.display().to_string(),
        &settings_json,
    )?;
    for player in &checked.spec.players {
        // The spec as written, plus the mode's effective options, so that reports can tell how
        // the player played (mode, legal moves shown) without re-running scripts.
        let mut settings = serde_json::to_value(player)?;
        if let (Some(object), Some(options)) = (
            settings.as_object_mut(),
            checked.first.mode_options(player.name()),
        ) {
            object.insert(
                "mode_options".into(),
                serde_json::Value::Object(options.clone()),
            );
        }
        store.upsert_player(
            tournament.id,
            &PlayerRecord {
                name: player.name().to_string(),
                kind: player.kind().to_string(),
                settings_json: settings.to_string(),
            },
        )?;
    }
    save_scripts(store, checked.first.as_ref())?;
    let games = store.games(tournament.id)?;
    let replays: Vec<(u32, u32)> = store
        .schedule_replays(tournament.id)?
        .iter()
        .map(|r| {
            let of = games.iter().find(|g| Some(g.id) == r.replay_of);
            (r.index, of.map_or(r.slot, |g| g.index))
        })
        .collect();
    for (replay, of) in &replays {
        tracing::info!("game {of} was void by a harness fault: game {replay} plays it again");
    }
    Ok((tournament.id, replays))
}

/// The scripts' generations: the first one, and with `watch` each newer one the watcher
/// loads when a script changes (the watcher must live as long as the run).
fn watch_scripts(
    watch: bool,
    host: &Arc<dyn ScriptHost>,
    first: &Arc<dyn Rules>,
) -> (
    watch::Receiver<Arc<dyn Rules>>,
    Option<reload::ScriptWatcher>,
) {
    if watch {
        match reload::watch(host.clone(), first.clone()) {
            Ok((rx, w)) => return (rx, Some(w)),
            Err(e) => tracing::warn!("scripts will not be reloaded: cannot watch them: {e}"),
        }
    }
    (watch::channel(first.clone()).1, None)
}

/// What runs beside the games for the whole run: the progress line and the spend it shows,
/// the engine analysis, and the renewal of this worker's leases.
struct Services {
    env: Arc<GameEnv>,
    progress: Arc<Progress>,
    /// One ledger for the progress line and the budgets, read incrementally.
    ledger: Arc<LiveLedger>,
    spend_ticker: tokio::task::JoinHandle<()>,
    renewal: tokio::task::JoinHandle<()>,
    analysis: Option<AnalysisWorker>,
}

impl Services {
    fn start(
        options: &RunOptions,
        checked: &Checked,
        store: &Arc<Store>,
        tournament: i64,
        roster: &Arc<Roster>,
        adjudication: Option<&Arc<Adjudication>>,
    ) -> Result<Services, TournamentError> {
        let settings = &checked.spec.settings;
        let totals = store.totals(tournament)?;
        let progress = Arc::new(Progress::new(
            totals.games_scheduled,
            totals.games_finished,
            totals.plies,
            totals.llm_calls,
            totals.prompt_tokens + totals.completion_tokens,
        ));
        progress.watch_endpoints(roster.client.clone());
        let env = Arc::new(GameEnv {
            store: store.clone(),
            roster: roster.clone(),
            tournament,
            seed: settings.seed,
            seed_by_round: settings.pair_seeds,
            progress: progress.clone(),
            adjudication: adjudication.cloned(),
        });
        let ledger = Arc::new(LiveLedger::new(tournament));
        progress.set_spend(ledger.read(store, &checked.prices)?.total);
        let spend_ticker = tokio::spawn({
            let (store, progress) = (store.clone(), progress.clone());
            let (prices, ledger) = (checked.prices.clone(), ledger.clone());
            async move {
                let mut tick = tokio::time::interval(SPEND_REFRESH);
                loop {
                    tick.tick().await;
                    if let Ok(ledger) = ledger.read(&store, &prices) {
                        progress.set_spend(ledger.total);
                    }
                }
            }
        });
        let analysis = settings.analysis.clone().map(|spec| {
            let worker = options.worker.clone();
            AnalysisWorker::start(store.clone(), tournament, spec, progress.clone(), worker)
        });
        Ok(Services {
            // Leases are renewed from the start: a game is claimed before it starts.
            renewal: options.worker.keep_renewing(store.clone(), LeaseKind::Play),
            env,
            progress,
            ledger,
            spend_ticker,
            analysis,
        })
    }

    /// After the last game: the final spend into the budget stops (games that ran past a
    /// budget's check kept calling, and the stops report what the store holds now, as the
    /// standings do), the players and the adjudication engine shut down, and the analysis
    /// finished (or, after an abort, left for the next run or `arena analyze`).
    async fn wind_down(
        self,
        prices: &crate::llm::PriceTable,
        roster: &Roster,
        adjudication: Option<&Arc<Adjudication>>,
        summary: &mut RunSummary,
    ) {
        self.spend_ticker.abort();
        self.renewal.abort();
        match self.ledger.read(&self.env.store, prices) {
            Ok(ledger) => {
                self.progress.set_spend(ledger.total);
                for stop in &mut summary.budget_stops {
                    stop.reached.settle(&ledger);
                }
            }
            Err(e) => tracing::warn!("cannot read the final spend: {e}"),
        }
        roster.shutdown().await;
        if let Some(a) = adjudication {
            a.shutdown().await;
        }
        if summary.stopped == Some(Stop::Aborted) {
            if let Some(worker) = self.analysis {
                worker.abort();
            }
        } else if let Some(worker) = self.analysis {
            tracing::info!("play is over; waiting for the engine analysis to finish");
            summary.analysis = Some(worker.finish().await);
        }
        self.progress.finish();
    }
}

/// What every round of play shares.
struct Round<'a> {
    env: &'a Arc<GameEnv>,
    scripts: Scripts<'a>,
    budgets: Budgets<'a>,
    openings: &'a [Opening],
    concurrency: usize,
    workers: Workers<'a>,
}

/// Plays round after round: the format (of the newest generation) is asked for more games, and
/// the games not yet tried in this run are played, until the format has no more, a Ctrl-C
/// stops the run, or every game on offer is held back by a budget.
async fn play_rounds(round: &Round<'_>, summary: &mut RunSummary) -> Result<(), TournamentError> {
    let store = &round.env.store;
    let tournament = summary.tournament;
    let mut tried = std::collections::HashSet::new();
    // One listener for the whole run: a Ctrl-C that lands between two waits is kept, not lost.
    let mut interrupt = match signal(SignalKind::interrupt()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("Ctrl-C will stop arena at once (cannot listen for it: {e})");
            None
        }
    };
    loop {
        let Some(pairings) = schedule_more(round, tournament)? else {
            continue; // another worker added games meanwhile: ask the format again
        };
        let pending: Vec<GameRow> = store
            .games(tournament)?
            .into_iter()
            .filter(|g| g.status != GameStatus::Finished && !tried.contains(&g.id))
            .collect();
        round
            .env
            .progress
            .set_total(store.totals(tournament)?.games_scheduled);
        if pending.is_empty() {
            match pairings {
                // Done, or the format waits for games that cannot be played in this run (set
                // aside earlier): asking again would give the same answer.
                Pairings::Complete | Pairings::Waiting => return Ok(()),
                Pairings::Scheduled => continue,
            }
        }
        tried.extend(pending.iter().map(|g| g.id));
        let played = play_all(round, pending, summary, &mut interrupt).await;
        if played.stopped.is_some() {
            summary.stopped = played.stopped;
            return Ok(());
        }
        if !played.held_elsewhere.is_empty() {
            // Games another worker plays: offer them again, and wait a little when nothing
            // else could start, until they are finished or their leases expire.
            for id in &played.held_elsewhere {
                tried.remove(id);
            }
            if played.started == 0 {
                tokio::select! {
                    () = tokio::time::sleep(round.workers.play.poll_interval()) => {}
                    () = interrupted(&mut interrupt) => {
                        summary.stopped = Some(Stop::Interrupted);
                        return Ok(());
                    }
                }
            }
            continue;
        }
        if played.started == 0 && !summary.budget_stops.is_empty() {
            // Every game on offer is held back by a budget: asking an incremental format for
            // more would only schedule more games that cannot start.
            return Ok(());
        }
    }
}

/// What the format answered when asked for more games.
enum Pairings {
    /// It has no more: the tournament is complete once the games scheduled are played.
    Complete,
    /// It pairs nothing until games still unplayed are played.
    Waiting,
    /// It paired new games, now scheduled.
    Scheduled,
}

/// Asks the format (of the newest generation) for more games and schedules them; `None` when
/// another worker added games since the schedule was read (ask again). A sequential
/// experiment's progress line shows where each arm stands.
fn schedule_more(round: &Round<'_>, tournament: i64) -> Result<Option<Pairings>, TournamentError> {
    let store = &round.env.store;
    let spec = round.budgets.spec;
    let current = round.scripts.generations.borrow().clone();
    let format = current.format().map_err(FormatError::from)?;
    let stored = store.games(tournament)?;
    let state = FormatState {
        analysis: format_analysis(store, tournament),
        spend: round
            .budgets
            .ledger
            .read(store, round.budgets.prices)
            .ok()
            .map(|ledger| super::budget::format_spend(spec, &ledger)),
        ..FormatState::new(
            spec,
            current_attempts(&stored)
                .into_iter()
                .map(FormatGame::from_row)
                .collect(),
            round.openings.len() as u32,
            format.options().clone(),
        )
    };
    if let Some(design) = super::experiment::design_of(&state).filter(|d| d.sprt.is_some())
        && let Ok(status) = super::experiment::status_of(&design, &state)
    {
        round
            .env
            .progress
            .set_experiment(super::progress::experiment_line(&design, &status));
    }
    let pairings = schedule::next_pairings(format.as_ref(), &state)?;
    if let Some(pairings) = &pairings {
        let first_index = stored.len() as u32 + 1;
        let games = schedule::to_scheduled(pairings, first_index, round.openings, spec)?;
        if !store.schedule_games_after(tournament, stored.len(), &games)? {
            return Ok(None);
        }
    }
    Ok(Some(match pairings {
        None => Pairings::Complete,
        Some(new) if new.is_empty() => Pairings::Waiting,
        Some(_) => Pairings::Scheduled,
    }))
}

/// The name the run stores its tournament under: the newest version's (the script's own name
/// when none is stored), or the next version's with `new_version`.
///
/// # Errors
/// [`TournamentError::ScriptsChanged`] when the newest version is finished and its scripts
/// changed since its last game started; a store or format failure.
fn choose_version(
    store: &Store,
    current: &dyn Rules,
    openings: usize,
    new_version: bool,
) -> Result<String, TournamentError> {
    let spec = current.spec();
    let name = &spec.settings.name;
    let Some((version, row)) = versions::versions(store, name)?.pop() else {
        return Ok(name.clone());
    };
    let change = versions::changes(store, &row, current)?;
    if new_version {
        let next = versions::version_name(name, version + 1);
        let changed = change.map_or_else(
            || "the scripts are unchanged".to_string(),
            |c| format!("changed: {}", c.file_lines().join("; ")),
        );
        tracing::info!(
            "tournament `{name}`: version {} starts as `{next}` in the same store ({changed})",
            version + 1
        );
        return Ok(next);
    }
    let Some(change) = change else {
        return Ok(row.name);
    };
    if finished(store, &row, current, openings)? {
        return Err(TournamentError::ScriptsChanged(Box::new(change)));
    }
    tracing::warn!(
        "tournament `{}`: the scripts changed since its last game started ({}); the games still to play use the new ones",
        row.name,
        change.file_lines().join("; ")
    );
    Ok(row.name)
}

/// Whether the stored tournament `row` has nothing left to play: every game finished (none void
/// and waiting for its replay), and the format asks for no more.
fn finished(
    store: &Store,
    row: &crate::store::TournamentRow,
    current: &dyn Rules,
    openings: usize,
) -> Result<bool, TournamentError> {
    let games = store.games(row.id)?;
    let attempts = current_attempts(&games);
    let open = |g: &&GameRow| g.status != GameStatus::Finished || g.result.as_deref() == Some("*");
    if attempts.is_empty() || attempts.iter().any(open) {
        return Ok(false);
    }
    let format = current.format().map_err(FormatError::from)?;
    let prices = super::budget::price_table(&current.spec().settings);
    let state = FormatState {
        analysis: format_analysis(store, row.id),
        spend: super::budget::Ledger::read(store, row.id, &prices)
            .ok()
            .map(|ledger| super::budget::format_spend(current.spec(), &ledger)),
        ..FormatState::new(
            current.spec(),
            attempts.into_iter().map(FormatGame::from_row).collect(),
            openings as u32,
            format.options().clone(),
        )
    };
    let pairings = schedule::next_pairings(format.as_ref(), &state)?;
    Ok(pairings.is_none_or(|p| p.is_empty()))
}

/// Each analysed player's totals for the format, `None` before any analysis (or when the store
/// cannot say, which only costs the format that information).
fn format_analysis(store: &Store, tournament: i64) -> Option<BTreeMap<String, FormatAnalysis>> {
    let read = || -> Result<_, crate::store::StoreError> {
        let rows = store.analysis_summary(tournament)?;
        let standings = store.standings(tournament)?;
        Ok(rows
            .iter()
            .filter(|r| r.plies > 0)
            .map(|r| {
                let legal = standings
                    .iter()
                    .find(|s| s.player == r.player)
                    .and_then(|s| s.legal_move_rate());
                let state = FormatAnalysis::from_row(r, legal);
                (r.player.clone(), state)
            })
            .collect::<BTreeMap<_, _>>())
    };
    match read() {
        Ok(map) if !map.is_empty() => Some(map),
        Ok(_) => None,
        Err(e) => {
            tracing::warn!("the format sees no analysis: {e}");
            None
        }
    }
}

/// Where a game's scripts come from: the newest generation, or one rebuilt by the host.
#[derive(Clone, Copy)]
struct Scripts<'a> {
    host: &'a dyn ScriptHost,
    generations: &'a watch::Receiver<Arc<dyn Rules>>,
}

/// The spend of a run: what budgets are checked against before a game starts, and what the
/// progress line shows.
#[derive(Clone, Copy)]
struct Budgets<'a> {
    spec: &'a crate::spec::TournamentSpec,
    prices: &'a crate::llm::PriceTable,
    ledger: &'a LiveLedger,
}

impl Budgets<'_> {
    /// Reads the spend up to the last stored call into the progress line.
    fn show_spend(&self, store: &Store, progress: &Progress) {
        match self.ledger.read(store, self.prices) {
            Ok(ledger) => progress.set_spend(ledger.total),
            Err(e) => tracing::warn!("cannot read the spend: {e}"),
        }
    }

    /// The budget that keeps `row` from starting, if one does. The spend is brought up to date
    /// first, so it includes the calls of the games still running.
    fn blocking(&self, store: &Store, row: &GameRow) -> Option<Reached> {
        let any = self.spec.settings.budget.is_some()
            || [&row.white, &row.black]
                .iter()
                .any(|p| self.spec.player(p).and_then(|p| p.budget()).is_some());
        if !any {
            return None;
        }
        match self.ledger.read(store, self.prices) {
            Ok(ledger) => budget::blocking(self.spec, &ledger, &row.white, &row.black),
            Err(e) => {
                // Without the spend a budget cannot be honoured: hold the game back rather than
                // risk spending past it.
                tracing::error!("game {} not started: cannot read the spend: {e}", row.index);
                Some(Reached {
                    player: None,
                    limit: "unknown",
                    budget: 0.0,
                    spent: 0.0,
                    estimated_calls: 0,
                })
            }
        }
    }
}

/// Notes that `reached` kept game `index` from starting.
fn hold_back(summary: &mut RunSummary, reached: Reached, index: u32) {
    match summary
        .budget_stops
        .iter_mut()
        .find(|s| s.reached.player == reached.player && s.reached.limit == reached.limit)
    {
        Some(stop) => {
            stop.reached = reached;
            stop.games.push(index);
        }
        None => summary.budget_stops.push(BudgetStop {
            reached,
            games: vec![index],
        }),
    }
}

/// The workers a run hands games to: this process's player (its leases) and its analysis.
#[derive(Clone, Copy)]
struct Workers<'a> {
    play: &'a Worker,
    analysis: Option<&'a AnalysisWorker>,
}

/// What [`play_all`] did.
struct Played {
    /// How a Ctrl-C stopped it, if one did.
    stopped: Option<Stop>,
    /// Games it started.
    started: usize,
    /// Unfinished games it left because another worker holds them.
    held_elsewhere: Vec<i64>,
}

/// Plays `pending` with at most `concurrency` games at once; each game takes the newest generation
/// when it starts (or, when resumed, the one it started with), unless a budget holds it back or
/// another worker holds its lease. A game is re-read once claimed: another worker may have
/// played on (or finished) it since `pending` was listed.
async fn play_all(
    round: &Round<'_>,
    pending: Vec<GameRow>,
    summary: &mut RunSummary,
    interrupt: &mut Option<Signal>,
) -> Played {
    let mut play = Playing {
        queue: pending.into_iter(),
        running: JoinSet::new(),
        pinned: HashMap::new(),
        stopping: false,
        started: 0,
        held_elsewhere: Vec::new(),
        first_set_aside: HashMap::new(),
        rescripted: false,
    };
    loop {
        play.start_more(round, summary);
        let joined = tokio::select! {
            joined = play.running.join_next() => joined,
            _ = interrupted(interrupt) => {
                if play.stopping {
                    // Second Ctrl-C: quit now. Dropping `running` abandons the games where they
                    // stand; everything played so far is stored and resumes.
                    tracing::warn!("quitting now: {} running game(s) resume on the next run", play.running.len());
                    return play.done(Some(Stop::Aborted));
                }
                // First Ctrl-C: start nothing new and let the running games finish.
                play.stopping = true;
                tracing::warn!(
                    "stopping: {} running game(s) will finish, no new game starts; Ctrl-C again to quit now",
                    play.running.len()
                );
                continue;
            }
        };
        match joined {
            None => break,
            Some(Ok((row, outcome))) => play.ended(round, summary, row, outcome),
            // Its lease lapses: a later run (or another worker) takes the game up.
            Some(Err(e)) => tracing::error!("a game task failed: {e}"),
        }
    }
    let stopped = play.stopping.then_some(Stop::Interrupted);
    play.done(stopped)
}

/// The games of one [`play_all`] under way.
struct Playing {
    queue: std::vec::IntoIter<GameRow>,
    running: JoinSet<(GameRow, GameOutcome)>,
    /// Older generations rebuilt for resumed games, by their scripts' hash.
    pinned: HashMap<String, Arc<dyn Rules>>,
    /// After a first Ctrl-C: nothing new starts.
    stopping: bool,
    started: usize,
    held_elsewhere: Vec<i64>,
    /// The first game each distinct fault set aside, by kind and cause.
    first_set_aside: HashMap<(ErrorKind, String), u32>,
    /// Whether a game set aside by its scripts was moved onto the newest ones yet (said once).
    rescripted: bool,
}

impl Playing {
    fn done(self, stopped: Option<Stop>) -> Played {
        Played {
            stopped,
            started: self.started,
            held_elsewhere: self.held_elsewhere,
        }
    }

    /// Starts queued games until `concurrency` run, skipping those a budget holds back and
    /// those another worker holds or finished.
    fn start_more(&mut self, round: &Round<'_>, summary: &mut RunSummary) {
        let store = &round.env.store;
        while self.running.len() < round.concurrency && !self.stopping {
            let Some(row) = self.queue.next() else { break };
            if let Some(reached) = round.budgets.blocking(store, &row) {
                tracing::warn!(
                    "game {} {} vs {} not started: {reached}",
                    row.index,
                    row.white,
                    row.black
                );
                hold_back(summary, reached, row.index);
                continue;
            }
            let (row, fence) = match claim(round.env, round.workers.play, &row) {
                Claimed::Mine(fresh, fence) => (*fresh, fence),
                Claimed::Elsewhere => {
                    self.held_elsewhere.push(row.id);
                    continue;
                }
                Claimed::Finished => continue,
            };
            self.started += 1;
            let generation = self.generation_for(round, &row, &fence);
            if let Err(e) = save_scripts(store, generation.as_ref()) {
                tracing::error!(
                    "cannot store the scripts of generation {}: {e}",
                    generation.number()
                );
            }
            let env = round.env.clone();
            env.progress.game_started();
            self.running.spawn(async move {
                let outcome = game::play(&env, &row, generation, &fence).await;
                (row, outcome)
            });
        }
    }

    /// The scripts `row` plays under: the newest generation for a new game, the one it started
    /// with for a resumed one, and the newest again for a game set aside by its scripts.
    fn generation_for(
        &mut self,
        round: &Round<'_>,
        row: &GameRow,
        fence: &Fence,
    ) -> Arc<dyn Rules> {
        let store = &round.env.store;
        let current = round.scripts.generations.borrow().clone();
        match &row.script_hash {
            Some(hash) if hash != current.hash() && set_aside_by_its_scripts(row) => {
                let first = !self.rescripted;
                self.rescripted = true;
                rescript(store, fence, row, hash, &current, first);
                current
            }
            Some(hash) if hash != current.hash() => pinned_generation(
                round.scripts.host,
                store,
                &current,
                hash,
                row.generation,
                &mut self.pinned,
            ),
            _ => current,
        }
    }

    /// Records how a game this worker ran ended: in the summary, the progress line and (for a
    /// finished game) the analysis queue; its lease is released unless it was lost.
    fn ended(
        &mut self,
        round: &Round<'_>,
        summary: &mut RunSummary,
        row: GameRow,
        outcome: GameOutcome,
    ) {
        let (env, worker) = (round.env, round.workers.play);
        let title = format!("game {} {} vs {}", row.index, row.white, row.black);
        if let GameOutcome::LeaseLost(error) = &outcome {
            // Nothing to release: the lease is another worker's, and so is the game.
            tracing::warn!(
                "{title}: stopped by worker `{}` without asking any model again, since another worker took it over: {error}",
                worker.id()
            );
            env.progress
                .game_ended(false, &format!("{title}: taken over by another worker"));
            summary.lost.push((row.index, error.to_string()));
            return;
        }
        worker.release(&env.store, LeaseKind::Play, row.id);
        // The line printed for this game shows the spend of every call stored so far, not the
        // last periodic reading's: the last line of a run then says what the store says.
        round.budgets.show_spend(&env.store, &env.progress);
        match outcome {
            GameOutcome::Finished(end) => finished_game(round, summary, &row, &title, &end),
            GameOutcome::LeaseLost(_) => unreachable!("handled above"),
            GameOutcome::Errored(error) => {
                self.report_set_aside(env, &row, &title, &error);
                summary.errored.push((row.index, error));
            }
        }
    }

    /// Says why a game was set aside. A broken line of a script fails every game that reaches
    /// it: said once, in full, then each further game names the first.
    fn report_set_aside(&mut self, env: &GameEnv, row: &GameRow, title: &str, error: &GameError) {
        let kind = error.kind();
        match self.first_set_aside.entry((kind, error.cause())) {
            Entry::Occupied(first) => env.progress.game_ended(
                false,
                &format!(
                    "{title}: set aside: the same {} error as game {}",
                    kind.as_str(),
                    first.get()
                ),
            ),
            Entry::Vacant(first) => {
                first.insert(row.index);
                let advice = if kind == ErrorKind::Script {
                    "; further games that meet it are set aside without repeating it. Save a fix: the games that start after it use it, and the ones set aside resume under it on the next run"
                } else {
                    "; it resumes on the next run"
                };
                tracing::error!(
                    "{title} set aside: {} error: {error}{advice}",
                    kind.as_str()
                );
                env.progress.game_ended(
                    false,
                    &format!(
                        "{title}: set aside: {} error (reported above)",
                        kind.as_str()
                    ),
                );
            }
        }
    }
}

/// Counts a finished game (and a void one apart), hands it to the analysis, and prints its line.
fn finished_game(
    round: &Round<'_>,
    summary: &mut RunSummary,
    row: &GameRow,
    title: &str,
    end: &crate::board::GameEnd,
) {
    summary.finished += 1;
    if end.result.is_none() && end.termination.is_harness_fault() {
        summary
            .voided
            .push((row.index, end.reason.clone().unwrap_or_default()));
    }
    if let Some(worker) = round.workers.analysis {
        // The stored row carries the result and termination the analysis reads.
        match round.env.store.game(row.id) {
            Ok(finished) => worker.game_finished(finished),
            Err(e) => tracing::warn!(
                "game {} is analysed after play (cannot read it back now: {e})",
                row.index
            ),
        }
    }
    round.env.progress.game_ended(
        true,
        &format!(
            "{title}: {} ({})",
            match end.result {
                Some(result) => result.as_pgn(),
                None => "void",
            },
            end.termination.as_str().replace('_', " ")
        ),
    );
}

/// Whose a pending game is once this worker has tried to claim it.
enum Claimed {
    /// This worker's, as stored now, and the fence its writes carry.
    Mine(Box<GameRow>, Fence),
    /// Another worker holds it (or the store could not say: it is offered again later).
    Elsewhere,
    /// Another worker finished it since it was listed.
    Finished,
}

fn claim(env: &GameEnv, worker: &Worker, row: &GameRow) -> Claimed {
    let store = &env.store;
    match worker.claim(store, LeaseKind::Play, row.id) {
        Ok(Some(fence)) => match store.game(row.id) {
            Ok(fresh) if fresh.status == GameStatus::Finished => {
                worker.release(store, LeaseKind::Play, row.id);
                Claimed::Finished
            }
            Ok(fresh) => Claimed::Mine(Box::new(fresh), fence),
            Err(e) => {
                tracing::warn!(
                    "game {}: cannot read it back after claiming it: {e}",
                    row.index
                );
                worker.release(store, LeaseKind::Play, row.id);
                Claimed::Elsewhere
            }
        },
        Ok(None) => Claimed::Elsewhere,
        Err(e) => {
            tracing::warn!("game {}: cannot claim it: {e}", row.index);
            Claimed::Elsewhere
        }
    }
}

/// Resolves on the next Ctrl-C (never, without a listener).
async fn interrupted(interrupt: &mut Option<Signal>) {
    match interrupt {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}

/// Whether a script error set `row` aside: under its own scripts it would fail again at the
/// same ply, so it resumes under the newest ones instead of the ones it started with.
fn set_aside_by_its_scripts(row: &GameRow) -> bool {
    row.status == GameStatus::Errored && row.error_kind == Some(ErrorKind::Script)
}

/// Records that the game set aside by a script error under `old` scripts resumes under
/// `current`, and says so for the `first` such game of the run (the others follow the same
/// rule; the store keeps an event for each). A store that refuses is reported; the game then
/// still plays under `current`, and its record keeps naming the scripts it started with.
fn rescript(
    store: &Store,
    fence: &Fence,
    row: &GameRow,
    old: &str,
    current: &Arc<dyn Rules>,
    first: bool,
) {
    match store
        .leased(fence)
        .move_to_newer_scripts(current.hash(), current.number())
    {
        Ok(_) if first => tracing::info!(
            "game {} {} vs {}, set aside when its scripts ({old}) failed in play, resumes under the newest ones (generation {}, {}); so does every other game a script error set aside",
            row.index,
            row.white,
            row.black,
            current.number(),
            current.hash()
        ),
        Ok(_) => {}
        Err(e) => tracing::error!(
            "game {}: cannot record that it resumes under scripts {}: {e}",
            row.index,
            current.hash()
        ),
    }
}

/// The generation a resumed game started with, rebuilt from the sources stored with it; the
/// current one when that is impossible (sources missing or no longer valid).
fn pinned_generation(
    host: &dyn ScriptHost,
    store: &Store,
    current: &Arc<dyn Rules>,
    hash: &str,
    number: Option<u64>,
    cache: &mut HashMap<String, Arc<dyn Rules>>,
) -> Arc<dyn Rules> {
    if let Some(g) = cache.get(hash) {
        return g.clone();
    }
    let rebuilt = match store.scripts(hash) {
        Ok(Some(files)) => host
            .rebuild(
                current.entry(),
                number.unwrap_or(0),
                files.into_iter().collect(),
            )
            .map_err(|e| e.to_string()),
        Ok(None) => Err("its scripts are not in the store".to_string()),
        Err(e) => Err(e.to_string()),
    };
    match rebuilt {
        Ok(g) => {
            cache.insert(hash.to_string(), g.clone());
            g
        }
        Err(e) => {
            tracing::warn!(
                "a resumed game started under scripts {hash}, which cannot be rebuilt ({e}); it continues under generation {}",
                current.number()
            );
            current.clone()
        }
    }
}

fn save_scripts(store: &Store, generation: &dyn Rules) -> Result<(), crate::store::StoreError> {
    let files: Vec<(String, String)> = generation
        .sources()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    store.save_scripts(generation.hash(), &files)
}
