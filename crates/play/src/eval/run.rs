//! Running an evaluation script: every task's items asked of every player, several at a time,
//! each reply stored before it is parsed and each scored item stored, so a killed run resumes
//! where it stopped (finished items are skipped, a half-done puzzle re-reads its stored replies).
//! Re-scoring ([`rescore`]) runs the same item logic over a stored run's replies with other
//! task options or another scoring, and never calls a player.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::Mutex,
};

use futures_util::{StreamExt, stream};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{
    EvalError,
    basic::Scoring,
    datasets::{BasicItem, Puzzle},
    items::{self, ReconstructionItem},
    puzzles::{Failure, Outcome, PuzzleSession, SessionState},
    respond::{Answerer, Native, Recorder, Reply, ReplyError, ReplySource},
    scoring::{self, PuzzleResult},
    spec::{EvalSettings, TaskKind, TaskSpec},
    task::{EvalHost, Evaluation, Parsed, Task},
};
use crate::{
    llm::{ChatMessage, PriceTable},
    script::{CheckErrors, ScriptError},
    spec::{PlayerSpec, TournamentSettings, TournamentSpec},
    store::{EvalResultRow, EvalRunRow, Store, StoreError},
    table::Table,
    tournament::{
        endpoint_line::endpoint_lines,
        players::{Participant, Roster, SetupError},
    },
};

/// Errors of a run, a re-scoring or a report.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The script does not load.
    #[error("{0}")]
    Script(#[from] CheckErrors),
    /// A task hook failed.
    #[error("task script: {0}")]
    Hook(#[from] ScriptError),
    /// A player cannot take part.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Data could not be read, built or scored.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// No such stored run; the names of the runs there are, so the message can list them.
    #[error("the store has no evaluation run named `{name}`; {}", there_are(.known))]
    UnknownRun {
        /// The name asked for.
        name: String,
        /// The runs the store holds.
        known: Vec<String>,
    },
    /// A batch that cannot be used: a player without a batch API, or a batch that could not be
    /// submitted, polled or read (its items stay open and resume on the next run).
    #[error("batch: {0}")]
    Batch(String),
    /// Stored settings this build cannot read.
    #[error("evaluation run `{run}` has unreadable settings: {message}")]
    BadSettings {
        /// The run.
        run: String,
        /// The parse error.
        message: String,
    },
}

/// A player as the store remembers it: enough to re-score its replies.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PlayerInfo {
    /// The name.
    pub name: String,
    /// `llm`, `engine` or `random`.
    pub kind: String,
    /// The play mode of an LLM player (`blitz`, `bullet`...).
    pub mode: Option<String>,
}

/// What a run stores as its settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct RunSettings {
    /// The evaluation's settings.
    pub settings: EvalSettings,
    /// The tasks, options as the script gave them.
    pub tasks: Vec<TaskSpec>,
    /// The players.
    pub players: Vec<PlayerInfo>,
}

/// How to run.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The evaluation script.
    pub script: PathBuf,
    /// The store.
    pub db: PathBuf,
    /// Items answered at once (default: the script's, else 4).
    pub concurrency: Option<usize>,
    /// Send the models' calls through their providers' batch APIs first (see
    /// [`super::batch`]); `None` asks every call one by one.
    pub batch: Option<super::batch::BatchOptions>,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct EvalSummary {
    /// The run's name.
    pub run: String,
    /// One table per task.
    pub tables: Vec<Table>,
    /// Items scored now (not skipped as done).
    pub scored: usize,
    /// Items left open, with why (they resume on the next run).
    pub open: Vec<String>,
    /// Rows of data files that could not be used.
    pub warnings: Vec<String>,
}

/// One task of a run, ready to ask.
pub(super) struct TaskRun {
    spec: TaskSpec,
    pub(super) label: String,
    pub(super) items: Vec<(String, String)>,
    script: Mutex<Box<dyn Task>>,
    scoring: Scoring,
}

fn scoring_of(task: &TaskSpec) -> Result<Scoring, EvalError> {
    match task.scoring.as_deref() {
        None => Ok(Scoring::Strict),
        Some(name) => Scoring::from_name(name).ok_or_else(|| EvalError::Data {
            task: task.label(),
            message: format!("unknown scoring `{name}` (strict or chessarena)"),
        }),
    }
}

fn player_info(p: &PlayerSpec) -> PlayerInfo {
    PlayerInfo {
        name: p.name().to_owned(),
        kind: p.kind().to_owned(),
        mode: match p {
            PlayerSpec::Llm(l) => Some(l.mode.clone()),
            _ => None,
        },
    }
}

/// Runs (or resumes) the evaluation a script describes, its scripts loaded by `host`, and
/// returns its tables.
///
/// # Errors
/// A script, setup, data or store failure; an item whose player fails is left open instead.
pub async fn run(options: EvalOptions, host: &dyn EvalHost) -> Result<EvalSummary, RunError> {
    let scripts = host.load_evaluation(&options.script)?;
    let spec = scripts.spec();
    if options.batch.is_some() {
        let problems = super::batch::check_players(&spec.players);
        if !problems.is_empty() {
            return Err(RunError::Batch(problems.join("; ")));
        }
    }
    let store = Store::open(&options.db)?;
    let settings = RunSettings {
        settings: spec.settings.clone(),
        tasks: spec.tasks.clone(),
        players: spec.players.iter().map(player_info).collect(),
    };
    let run = store.open_eval_run(
        &spec.settings.name,
        &options.script.display().to_string(),
        &serde_json::to_string(&settings).expect("settings serialize"),
        None,
    )?;
    let roster = Roster::prepare(&TournamentSpec {
        settings: TournamentSettings {
            name: spec.settings.name.clone(),
            format: "round_robin".to_owned(),
            games_per_pair: 0,
            max_plies: 0,
            max_plies_include_book: false,
            seed: spec.settings.seed,
            pair_seeds: false,
            concurrency: None,
            openings: None,
            format_options: None,
            analysis: None,
            budget: None,
            time_control: None,
            prices: Default::default(),
            adjudication: None,
            endings: None,
        },
        players: spec.players.clone(),
        defined_at: spec.defined_at.clone(),
    })
    .await?;
    let result = run_with(scripts.as_ref(), &store, &run, &roster, &settings, &options).await;
    roster.shutdown().await;
    result
}

async fn run_with(
    scripts: &dyn Evaluation,
    store: &Store,
    run: &EvalRunRow,
    roster: &Roster,
    settings: &RunSettings,
    options: &EvalOptions,
) -> Result<EvalSummary, RunError> {
    let spec = scripts.spec();
    let script_dir = match options.script.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut warnings = Vec::new();
    let mut tasks = Vec::new();
    for task in &spec.tasks {
        let label = task.label();
        let wanted = task
            .limit
            .or(task.build.as_ref().map(|b| b.count))
            .unwrap_or(usize::MAX);
        let mut stored = store.eval_items(run.id, &label)?;
        if stored.len() < wanted {
            eprintln!("{label}: preparing items");
            let (loaded, w) = items::load(task, &script_dir, spec.settings.seed).await?;
            warnings.extend(w);
            stored = store.add_eval_items(run.id, &label, &loaded)?;
        }
        stored.truncate(wanted);
        tasks.push(TaskRun {
            spec: task.clone(),
            label,
            items: stored,
            script: Mutex::new(scripts.task(task)?),
            scoring: scoring_of(task)?,
        });
    }
    let concurrency = options
        .concurrency
        .or(spec.settings.concurrency)
        .unwrap_or(4)
        .max(1);
    if let Some(batch) = options.batch {
        super::batch::run_rounds(store, run, roster, &tasks, &spec.players, batch).await?;
    }
    let mut jobs = Vec::new();
    for task in &tasks {
        let done: BTreeSet<(String, u32)> = store
            .eval_results(run.id, &task.label)?
            .into_iter()
            .map(|r| (r.player, r.idx))
            .collect();
        for player in &spec.players {
            for idx in 0..task.items.len() as u32 {
                if !done.contains(&(player.name().to_owned(), idx)) {
                    jobs.push((task, player, idx));
                }
            }
        }
    }
    let total = jobs.len();
    eprintln!(
        "evaluation `{}`: {total} item answer(s) to get, {concurrency} at a time",
        run.name
    );
    let outcomes: Vec<Result<(), String>> = stream::iter(jobs)
        .map(|(task, player, idx)| async move {
            let answerer = match (&roster.players[player.name()], player) {
                (Participant::Llm { endpoint }, PlayerSpec::Llm(spec)) => Answerer::Llm {
                    spec,
                    endpoint,
                    client: &roster.client,
                },
                (Participant::Engine { pool, limits, .. }, _) => Answerer::Engine { pool, limits },
                (Participant::Random { seed }, _) => Answerer::Random {
                    seed: seed ^ settings.settings.seed,
                },
                // An evaluation script with a person does not load (see `lua::task`).
                _ => unreachable!("the roster is built from these specs"),
            };
            let stored = store
                .eval_replies(run.id, &task.label, player.name(), idx)
                .map_err(|e| e.to_string())?;
            let source = ReplySource {
                stored,
                next: 0,
                answerer,
                recorder: Some(Recorder {
                    store,
                    run_id: run.id,
                    task: &task.label,
                    player: player.name(),
                    idx,
                }),
                salt: (task.label.clone(), player.name().to_owned(), idx),
            };
            let info = player_info(player);
            match answer_item(task, &info, idx, source).await {
                Ok(row) => store
                    .record_eval_result(run.id, &task.label, &row)
                    .map_err(|e| e.to_string()),
                Err(e) => Err(format!(
                    "{} item {idx} for `{}`: {e}",
                    task.label,
                    player.name()
                )),
            }
        })
        .buffer_unordered(concurrency)
        .enumerate()
        .map(|(n, r)| {
            if (n + 1) % 25 == 0 || n + 1 == total {
                eprintln!("[{}/{total}] answers scored", n + 1);
                for line in endpoint_lines(&roster.client.load()) {
                    eprintln!("{line}");
                }
            }
            r
        })
        .collect()
        .await;
    let scored = outcomes.iter().filter(|o| o.is_ok()).count();
    let open: Vec<String> = outcomes.into_iter().filter_map(Result::err).collect();
    for line in super::batch::spend_lines(store, run, &spec.players, &PriceTable::built_in())? {
        eprintln!("{line}");
    }
    let tables = report_tables(store, run, settings)?;
    Ok(EvalSummary {
        run: run.name.clone(),
        tables,
        scored,
        open,
        warnings,
    })
}

/// Why one item could not be scored.
#[derive(Debug, thiserror::Error)]
pub(super) enum ItemError {
    #[error(transparent)]
    Reply(#[from] ReplyError),
    #[error(transparent)]
    Hook(#[from] ScriptError),
    #[error(transparent)]
    Eval(#[from] EvalError),
}

fn ctx_base(task: &TaskRun, player: &PlayerInfo) -> serde_json::Map<String, Value> {
    hook_ctx(&task.label, player.mode.as_deref(), &player.name)
}

/// What every task hook finds in `ctx`: the task's label, the player's play mode (`blitz` for
/// players without one) and name. [`item_ctx`] and [`puzzle_ctx`] add the rest.
pub fn hook_ctx(label: &str, mode: Option<&str>, player: &str) -> serde_json::Map<String, Value> {
    let mut ctx = serde_json::Map::new();
    ctx.insert("task".into(), label.into());
    ctx.insert("mode".into(), mode.unwrap_or("blitz").into());
    ctx.insert("player".into(), player.into());
    ctx
}

/// `ctx` for the `parse` hook: with `reasoning`, the text the provider returned beside the reply
/// (ChessArena's scripts read `reasoning_content + content`, so its readers need it).
fn with_reasoning(mut ctx: Value, reply: &Reply) -> Value {
    if let (Value::Object(map), Some(reasoning)) = (&mut ctx, &reply.reasoning) {
        map.insert("reasoning".into(), reasoning.clone().into());
    }
    ctx
}

/// The `ctx` of a one-answer item (every task but puzzles): `base` and its single attempt.
pub fn item_ctx(mut base: serde_json::Map<String, Value>) -> Value {
    base.insert("attempt".into(), 1.into());
    base.insert("max_attempts".into(), 1.into());
    Value::Object(base)
}

/// The `ctx` of a puzzle's move `step`: `base` with the position the solver is to move in, the
/// moves since the puzzle's FEN, the legal moves and the attempt at this move.
pub fn puzzle_ctx(
    mut base: serde_json::Map<String, Value>,
    session: &PuzzleSession,
    step: usize,
    max_attempts: u32,
) -> Value {
    base.insert("fen".into(), session.fen().into());
    base.insert("history".into(), json!(session.history()));
    base.insert(
        "legal_uci".into(),
        json!(crate::board::render::legal_uci(session.position())),
    );
    base.insert(
        "legal_san".into(),
        json!(crate::board::render::legal_san(session.position())),
    );
    base.insert("step".into(), step.into());
    base.insert("attempt".into(), (session.attempts() + 1).into());
    base.insert("max_attempts".into(), max_attempts.into());
    Value::Object(base)
}

fn parsed_json(p: &Parsed) -> Value {
    match p {
        Parsed::Answer(a) => json!({ "answer": a }),
        Parsed::Failed(e) => json!({ "error": e }),
    }
}

/// Asks one item of one player (from stored replies first) and scores it.
pub(super) async fn answer_item(
    task: &TaskRun,
    player: &PlayerInfo,
    idx: u32,
    mut source: ReplySource<'_>,
) -> Result<EvalResultRow, ItemError> {
    let item_json = &task.items[idx as usize].1;
    let item: Value = serde_json::from_str(item_json).map_err(|e| EvalError::Data {
        task: task.label.clone(),
        message: format!("stored item {idx} does not read back: {e}"),
    })?;
    let kind = task.spec.task;
    if kind == TaskKind::Puzzles {
        return answer_puzzle(task, player, idx, &item, source).await;
    }
    let ctx = item_ctx(ctx_base(task, player));
    let messages = if source.answerer.reads_prompts() {
        task.script
            .lock()
            .expect("task script lock")
            .prompt(&item, &ctx)?
    } else {
        Vec::new()
    };
    let data_error = |e: serde_json::Error| EvalError::Data {
        task: task.label.clone(),
        message: format!("stored item {idx} does not read back: {e}"),
    };
    let basic: Option<BasicItem>;
    let recon: Option<ReconstructionItem>;
    let native = match kind {
        TaskKind::BasicUnderstanding => {
            basic = Some(serde_json::from_value(item.clone()).map_err(data_error)?);
            Native::Basic(basic.as_ref().expect("set above"))
        }
        TaskKind::BoardReconstruction => {
            recon = Some(serde_json::from_value(item.clone()).map_err(data_error)?);
            Native::Reconstruction(recon.as_ref().expect("set above"))
        }
        _ => Native::Move(item.get("fen").and_then(Value::as_str).unwrap_or("")),
    };
    let reply = source.reply(&messages, native).await?;
    let parsed = task.script.lock().expect("task script lock").parse(
        &reply.text,
        &item,
        &with_reasoning(ctx, &reply),
    )?;
    let answer = match &parsed {
        Parsed::Answer(a) => Some(a),
        Parsed::Failed(_) => None,
    };
    let score = scoring::score_single(kind, item_json, answer, task.scoring)?;
    Ok(EvalResultRow {
        idx,
        player: player.name.clone(),
        calls: source.calls() as u32,
        parsed_json: json!([parsed_json(&parsed)]).to_string(),
        score_json: score.to_string(),
    })
}

/// Plays one puzzle: a fresh dialog per solver move, feedback after a refused answer.
async fn answer_puzzle(
    task: &TaskRun,
    player: &PlayerInfo,
    idx: u32,
    item: &Value,
    mut source: ReplySource<'_>,
) -> Result<EvalResultRow, ItemError> {
    let puzzle: Puzzle = serde_json::from_value(item.clone()).map_err(|e| EvalError::Data {
        task: task.label.clone(),
        message: format!("stored puzzle {idx} does not read back: {e}"),
    })?;
    let max_attempts = task.spec.max_attempts.unwrap_or(5);
    let mut session = PuzzleSession::new(&puzzle, max_attempts)?;
    let mut dialog: Vec<ChatMessage> = Vec::new();
    let mut parsed_all = Vec::new();
    while let SessionState::Awaiting { step } = session.state().clone() {
        let fen = session.fen();
        let ctx = puzzle_ctx(ctx_base(task, player), &session, step, max_attempts);
        if dialog.is_empty() && source.answerer.reads_prompts() {
            dialog = task
                .script
                .lock()
                .expect("task script lock")
                .prompt(item, &ctx)?;
        }
        let reply = source.reply(&dialog, Native::Move(&fen)).await?;
        let parsed = task.script.lock().expect("task script lock").parse(
            &reply.text,
            item,
            &with_reasoning(ctx.clone(), &reply),
        )?;
        parsed_all.push(parsed_json(&parsed));
        let (outcome, error) = match &parsed {
            Parsed::Answer(a) => {
                let uci = a.get("uci").and_then(Value::as_str).unwrap_or("");
                let outcome = session.submit_uci(uci);
                let error = match &outcome {
                    Outcome::Retry(r) => Some(json!({"kind": "illegal", "message": r.message})),
                    _ => None,
                };
                (outcome, error)
            }
            Parsed::Failed(e) => {
                let message = e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no move found")
                    .to_owned();
                (session.refuse_reply(message), Some(e.clone()))
            }
        };
        match outcome {
            Outcome::Retry(_) => {
                if source.answerer.reads_prompts() {
                    let err = error.unwrap_or(Value::Null);
                    let text = task
                        .script
                        .lock()
                        .expect("task script lock")
                        .feedback(&err, item, &ctx)?;
                    dialog.push(ChatMessage::new("assistant", reply.text));
                    dialog.push(ChatMessage::new("user", text));
                }
            }
            Outcome::Continue { .. } => dialog.clear(),
            Outcome::Finished(_) => break,
        }
    }
    let (solved, by_alternative_mate, failed_step, failure) = match session.state() {
        SessionState::Solved {
            by_alternative_mate,
        } => (true, *by_alternative_mate, None, None),
        SessionState::Failed(f) => (
            false,
            false,
            Some(f.step()),
            Some(match f {
                Failure::NoValidMove { .. } => "no_valid_move".to_owned(),
                Failure::WrongMove { .. } => "wrong_move".to_owned(),
            }),
        ),
        SessionState::Awaiting { .. } => unreachable!("the loop runs until the puzzle ends"),
    };
    let result = PuzzleResult {
        rating: puzzle.rating,
        solved,
        by_alternative_mate,
        failed_step,
        failure,
        solver_moves: session.solver_moves(),
    };
    Ok(EvalResultRow {
        idx,
        player: player.name.clone(),
        calls: source.calls() as u32,
        parsed_json: Value::Array(parsed_all).to_string(),
        score_json: serde_json::to_string(&result).expect("results serialize"),
    })
}

fn read_settings(run: &EvalRunRow) -> Result<RunSettings, RunError> {
    serde_json::from_str(&run.settings_json).map_err(|e| RunError::BadSettings {
        run: run.name.clone(),
        message: e.to_string(),
    })
}

/// The tables of a stored run, one per task.
///
/// # Errors
/// A store failure or stored data this build cannot read.
pub(crate) fn report_tables(
    store: &Store,
    run: &EvalRunRow,
    settings: &RunSettings,
) -> Result<Vec<Table>, RunError> {
    let players: Vec<String> = settings.players.iter().map(|p| p.name.clone()).collect();
    let mut tables = Vec::new();
    for task in &settings.tasks {
        let label = task.label();
        let rows = store.eval_results(run.id, &label)?;
        let mut table = scoring::task_table(&label, task.task, &rows, &players)?;
        let items = store.eval_items(run.id, &label)?.len();
        table.notes.push(format!(
            "run `{}`: {items} item(s); scoring {}; task options {}",
            run.name,
            task.scoring.as_deref().unwrap_or("strict"),
            Value::Object(task.options.clone())
        ));
        tables.push(table);
    }
    Ok(tables)
}

/// [`RunError::UnknownRun`] for `name`, with the runs the store holds.
fn unknown_run<T>(store: &Store, name: &str) -> Result<T, RunError> {
    let known = store.eval_runs()?.into_iter().map(|r| r.name).collect();
    Err(RunError::UnknownRun {
        name: name.to_owned(),
        known,
    })
}

/// The end of [`RunError::UnknownRun`]'s message: the runs there are.
fn there_are(known: &[String]) -> String {
    if known.is_empty() {
        return "the store has none".to_owned();
    }
    let quoted: Vec<String> = known.iter().map(|n| format!("`{n}`")).collect();
    format!("there are: {}", quoted.join(", "))
}

/// The tables of the run named `name` (with `items`, also every item's parsed answer and score).
///
/// # Errors
/// [`RunError::UnknownRun`], or a store failure.
pub fn report(store: &Store, name: &str, items: bool) -> Result<Vec<Table>, RunError> {
    let run = store
        .find_eval_run(name)?
        .map_or_else(|| unknown_run(store, name), Ok)?;
    let settings = read_settings(&run)?;
    let mut tables = report_tables(store, &run, &settings)?;
    if items {
        for task in &settings.tasks {
            let label = task.label();
            let keys: Vec<String> = store
                .eval_items(run.id, &label)?
                .into_iter()
                .map(|(key, _)| key)
                .collect();
            let results = store.eval_results(run.id, &label)?;
            // The last exchange of each item: what the player was asked and what it answered.
            let mut exchanges = Vec::with_capacity(results.len());
            for r in &results {
                let last = store
                    .eval_replies(run.id, &label, &r.player, r.idx)?
                    .into_iter()
                    .max_by_key(|reply| reply.seq);
                let prompt = last
                    .as_ref()
                    .and_then(|l| l.prompt_json.as_deref())
                    .and_then(|json| {
                        serde_json::from_str::<Vec<crate::llm::ChatMessage>>(json).ok()
                    })
                    .and_then(|messages| messages.last().map(|m| m.content.clone()));
                exchanges.push((prompt, last.map(|l| l.reply_text)));
            }
            let details: Vec<scoring::ItemDetail<'_>> = results
                .iter()
                .zip(&exchanges)
                .map(|(r, (prompt, reply))| scoring::ItemDetail {
                    result: r,
                    key: keys.get(r.idx as usize).map_or("", String::as_str),
                    prompt: prompt.as_deref(),
                    reply: reply.as_deref(),
                })
                .collect();
            tables.push(scoring::items_table(&label, &details));
        }
    }
    Ok(tables)
}

/// What to change when re-scoring.
#[derive(Debug, Clone, Default)]
pub struct RescoreOptions {
    /// The `parser` option given to every task script.
    pub parser: Option<String>,
    /// The basic-understanding scoring.
    pub scoring: Option<String>,
    /// The new run's name (default: the source's name with the changes appended).
    pub name: Option<String>,
}

/// What a re-scoring did.
#[derive(Debug, Clone)]
pub struct RescoreSummary {
    /// The new run's name.
    pub run: String,
    /// Its tables.
    pub tables: Vec<Table>,
    /// Items whose stored replies ran out under the new parser (left out of the tables).
    pub unreplayable: Vec<String>,
}

/// Re-scores a stored run: every stored reply goes through the task scripts again (from the
/// script's folder, then the built-ins) with the changed options, into a new run that shares the
/// item sets. No player is called: a puzzle whose new reading needs a reply that was never given
/// is reported as unreplayable.
///
/// # Errors
/// [`RunError::UnknownRun`], a task script that does not load, or a store failure.
pub async fn rescore(
    store: &Store,
    source_name: &str,
    options: &RescoreOptions,
    host: &dyn EvalHost,
) -> Result<RescoreSummary, RunError> {
    let source = store
        .find_eval_run(source_name)?
        .map_or_else(|| unknown_run(store, source_name), Ok)?;
    let mut settings = read_settings(&source)?;
    for task in &mut settings.tasks {
        if let Some(p) = &options.parser {
            task.options.insert("parser".into(), p.clone().into());
        }
        if let Some(s) = &options.scoring
            && task.task == TaskKind::BasicUnderstanding
        {
            task.scoring = Some(s.clone());
        }
    }
    let name = options.name.clone().unwrap_or_else(|| {
        let mut changes = Vec::new();
        if let Some(p) = &options.parser {
            changes.push(format!("parser={p}"));
        }
        if let Some(s) = &options.scoring {
            changes.push(format!("scoring={s}"));
        }
        format!("{source_name}+{}", changes.join(","))
    });
    let run = store.open_eval_run(
        &name,
        &source.script_path,
        &serde_json::to_string(&settings).expect("settings serialize"),
        Some(source.id),
    )?;
    let script_dir = Path::new(&source.script_path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let mut unreplayable = Vec::new();
    for task in &settings.tasks {
        let label = task.label();
        let items = store.add_eval_items(run.id, &label, &store.eval_items(source.id, &label)?)?;
        let task_run = TaskRun {
            spec: task.clone(),
            label: label.clone(),
            items,
            script: Mutex::new(host.task_from_disk(&script_dir, &task.module(), &task.options)?),
            scoring: scoring_of(task)?,
        };
        for original in store.eval_results(source.id, &label)? {
            let player = settings
                .players
                .iter()
                .find(|p| p.name == original.player)
                .cloned()
                .unwrap_or(PlayerInfo {
                    name: original.player.clone(),
                    kind: "llm".into(),
                    mode: None,
                });
            let source_replies =
                store.eval_replies(source.id, &label, &player.name, original.idx)?;
            let replies = ReplySource {
                stored: source_replies,
                next: 0,
                answerer: Answerer::ReplayOnly,
                recorder: None,
                salt: (label.clone(), player.name.clone(), original.idx),
            };
            match answer_item(&task_run, &player, original.idx, replies).await {
                Ok(row) => store.record_eval_result(run.id, &label, &row)?,
                Err(ItemError::Reply(e)) => unreplayable.push(format!(
                    "{label} item {} for `{}`: {e}",
                    original.idx, player.name
                )),
                Err(ItemError::Hook(e)) => return Err(e.into()),
                Err(ItemError::Eval(e)) => return Err(e.into()),
            }
        }
    }
    let tables = report_tables(store, &run, &settings)?;
    Ok(RescoreSummary {
        run: name,
        tables,
        unreplayable,
    })
}
