//! The players of a running tournament: their specs joined with live resources (an HTTP endpoint,
//! an engine pool), prepared and checked before the first game starts.

use std::{collections::BTreeMap, time::Duration};

use futures_util::{StreamExt, stream};
use thiserror::Error;

use crate::spec::{EnginePlayerSpec, ModelSpec, PlayerSpec, TournamentSpec};
use crate::{
    engine::{self, EnginePool, EngineSpec, SearchLimits},
    llm::{Endpoint, LlmClient, LlmError, RetryPolicy},
};

/// A player that cannot take part, found before any game starts.
#[derive(Debug, Error)]
#[error("{at}: player `{player}`: {problem}")]
pub struct SetupError {
    /// `file:line` of the player's definition.
    pub at: String,
    /// The player's name.
    pub player: String,
    /// What is wrong and how to fix it.
    pub problem: SetupProblem,
}

/// What keeps a player from taking part.
#[derive(Debug, Error)]
pub enum SetupProblem {
    /// The shared HTTP client cannot be built.
    #[error("cannot create the HTTP client: {0}")]
    Client(Box<LlmError>),
    /// The model settings name no known wire format.
    #[error(transparent)]
    Provider(Box<LlmError>),
    /// The API key variable is unset or empty.
    #[error("the environment variable `{0}` (api_key_env) is not set")]
    KeyUnset(String),
    /// The endpoint does not answer its probe.
    #[error(
        "the model endpoint {url} does not answer: {source}. Is the server running (for the local model: scripts/local-llm.sh start)?"
    )]
    Unreachable {
        /// The endpoint's base URL.
        url: String,
        /// The probe's failure.
        source: Box<LlmError>,
    },
    /// The engine cannot be found or started, or does not speak UCI.
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    /// A node-limited engine does not stop on its node limit.
    #[error(
        "the engine ignores the nodes limit: `go nodes 1` did not finish within {0}s (Toga II \
         and GNU Chess search until stopped); give it `depth` or `movetime_ms` instead"
    )]
    IgnoresNodeLimit(u64),
    /// The tournament plays Chess960 and the engine cannot.
    #[error(
        "the tournament plays Chess960 (`openings.chess960`), but this engine does not \
         advertise the UCI option `UCI_Chess960`, so it cannot castle in Chess960; use an \
         engine that plays Chess960 (Stockfish does)"
    )]
    NoChess960,
    /// One proposer of a mixture of agents cannot take part.
    #[error("proposer {index}: {problem}")]
    Proposer {
        /// Its 1-based position.
        index: usize,
        /// What is wrong with it.
        problem: Box<SetupProblem>,
    },
    /// The synthesizer of a mixture of agents cannot take part.
    #[error("synthesizer: {0}")]
    Synthesizer(Box<SetupProblem>),
}

/// A player with its live resources.
pub enum Participant {
    /// A language model.
    Llm {
        /// The endpoint requests go to.
        endpoint: Endpoint,
    },
    /// A UCI engine: processes leased per game.
    Engine {
        /// Processes of this engine, one leased per running game.
        pool: EnginePool,
        /// Search limits per move.
        limits: SearchLimits,
        /// A seeded share of random moves instead of searches (`random_move_p`).
        random: Option<RandomMoves>,
    },
    /// A mixture of agents: one endpoint per proposer, and the synthesizer's.
    Moa {
        /// The proposers' endpoints, in script order.
        proposers: Vec<Endpoint>,
        /// The synthesizer's endpoint.
        synthesizer: Endpoint,
    },
    /// A seeded uniform random mover.
    Random {
        /// The player's own seed.
        seed: u64,
    },
    /// A person: moves are read from the store, where `arena serve` writes them.
    Human,
}

/// An engine player's seeded share of uniformly random moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomMoves {
    /// The probability of a random move at each ply.
    pub p: f64,
    /// The player's seed, mixed with the tournament seed, game and ply.
    pub seed: u64,
}

/// All participants, by name, and the shared HTTP client.
pub struct Roster {
    /// Participants by player name.
    pub players: BTreeMap<String, Participant>,
    /// The one HTTP client all LLM players share.
    pub client: LlmClient,
}

impl Roster {
    /// Prepares every player and checks that it can play: API key variables set, endpoints
    /// answering, engine binaries present and speaking UCI.
    ///
    /// # Errors
    /// The first player that cannot play, named with its definition's `file:line`.
    pub async fn prepare(spec: &TournamentSpec) -> Result<Roster, SetupError> {
        let client = LlmClient::new().map_err(|e| SetupError {
            at: spec.defined_at.get("").cloned().unwrap_or_default(),
            player: "-".into(),
            problem: SetupProblem::Client(Box::new(e)),
        })?;
        let mut players = BTreeMap::new();
        let chess960 = spec
            .settings
            .openings
            .as_ref()
            .is_some_and(crate::spec::OpeningsSpec::is_chess960);
        // Engines start side by side, as many at a time as there are cores: each may spend a good
        // part of a second loading its network (Stockfish), and none needs another to start; more
        // at once would only stretch every start-up towards its `init_timeout`. Results come in
        // script order, so the error reported is the same as when they started one by one.
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let mut engines: Vec<_> = stream::iter(spec.players.iter().map(|player| async move {
            match player {
                PlayerSpec::Engine(e) => Some(prepare_engine(spec, e, chess960).await),
                _ => None,
            }
        }))
        .buffered(cores)
        .collect()
        .await;
        for (index, player) in spec.players.iter().enumerate() {
            for route in player.key_routes() {
                tracing::info!("{route}");
            }
            let at = spec
                .defined_at
                .get(player.name())
                .cloned()
                .unwrap_or_default();
            let fail = |problem: SetupProblem| SetupError {
                at: at.clone(),
                player: player.name().to_string(),
                problem,
            };
            let participant = match player {
                PlayerSpec::Llm(llm) => {
                    let endpoint = checked_endpoint(&client, &llm.model_spec(), &llm.name)
                        .await
                        .map_err(fail)?;
                    Participant::Llm { endpoint }
                }
                PlayerSpec::Moa(moa) => {
                    let mut proposers = Vec::new();
                    for (i, p) in moa.proposers.iter().enumerate() {
                        let endpoint =
                            checked_endpoint(&client, p, &moa.name).await.map_err(|m| {
                                fail(SetupProblem::Proposer {
                                    index: i + 1,
                                    problem: Box::new(m),
                                })
                            })?;
                        proposers.push(endpoint);
                    }
                    let synthesizer = checked_endpoint(&client, &moa.synthesizer, &moa.name)
                        .await
                        .map_err(|m| fail(SetupProblem::Synthesizer(Box::new(m))))?;
                    Participant::Moa {
                        proposers,
                        synthesizer,
                    }
                }
                PlayerSpec::Engine(_) => engines[index]
                    .take()
                    .expect("every engine player was prepared")
                    .map_err(fail)?,
                PlayerSpec::Random(r) => Participant::Random { seed: r.seed },
                PlayerSpec::Human(_) => Participant::Human,
            };
            players.insert(player.name().to_string(), participant);
        }
        Ok(Roster { players, client })
    }

    /// Stops every engine process.
    pub async fn shutdown(&self) {
        for p in self.players.values() {
            if let Participant::Engine { pool, .. } = p {
                pool.shutdown().await;
            }
        }
    }
}

/// Starts an engine player's first process and checks it: a binary that is not a UCI engine
/// fails here, before any game, rather than as a forfeit in the middle of the tournament.
async fn prepare_engine(
    spec: &TournamentSpec,
    e: &EnginePlayerSpec,
    chess960: bool,
) -> Result<Participant, SetupProblem> {
    let engine_spec = engine_spec(e)?;
    let pool = EnginePool::new(engine_spec);
    let limits = limits(e, spec.time_control_of(&e.name).is_some());
    let lease = pool.lease().await?;
    if chess960 && !lease.supports_chess960() {
        return Err(SetupProblem::NoChess960);
    }
    probe_node_limit(&lease, &limits).await?;
    drop(lease);
    let random = e.random_move_p.map(|p| RandomMoves { p, seed: e.seed });
    Ok(Participant::Engine {
        pool,
        limits,
        random,
    })
}

/// The HTTP endpoint of a model.
///
/// # Errors
/// An unknown provider name.
pub fn endpoint(model: &ModelSpec) -> Result<Endpoint, crate::llm::LlmError> {
    Ok(Endpoint {
        provider: model.provider()?,
        base_url: model.base_url.clone(),
        api_key_env: model.api_key_env.clone(),
        max_concurrency: model.max_concurrency,
        rate: model.rate.unwrap_or_default(),
        paced: true,
        lane: String::new(),
        timeout: Duration::from_secs_f64(model.timeout_s.max(1.0)),
        retry: RetryPolicy {
            give_up_after: Duration::from_secs_f64(model.outage_s.max(0.0)),
            decode_retries: model.decode_retries,
            ..RetryPolicy::default()
        },
        api_version: model.api_version.clone(),
        azure: model.azure,
        headers: model
            .headers
            .iter()
            .flatten()
            .map(|(name, env)| (name.clone(), env.clone()))
            .collect(),
        stream: model.stream,
        stream_idle_timeout: Duration::from_secs_f64(model.stream_idle_s.max(0.001)),
    })
}

/// The endpoint of `model` for the player `lane`, checked: its key variable set and the server
/// answering.
async fn checked_endpoint(
    client: &LlmClient,
    model: &ModelSpec,
    lane: &str,
) -> Result<Endpoint, SetupProblem> {
    let mut endpoint = endpoint(model).map_err(|e| SetupProblem::Provider(Box::new(e)))?;
    endpoint.lane = lane.to_owned();
    if let Some(var) = &model.api_key_env
        && std::env::var(var)
            .map(|v| v.trim().is_empty())
            .unwrap_or(true)
    {
        return Err(SetupProblem::KeyUnset(var.clone()));
    }
    client
        .probe(&endpoint)
        .await
        .map_err(|source| SetupProblem::Unreachable {
            url: model.base_url.clone(),
            source: Box::new(source),
        })?;
    Ok(endpoint)
}

fn engine_spec(e: &EnginePlayerSpec) -> Result<EngineSpec, engine::EngineError> {
    let command = engine::locate(&e.command)?;
    let mut spec = EngineSpec::new(e.name.clone(), command.display().to_string());
    spec.args = e.args.clone();
    for (name, value) in &e.options {
        spec = spec.option(name.clone(), value.to_string());
    }
    Ok(spec)
}

/// How long a one-node search may take before the engine counts as ignoring the node limit.
const NODE_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Checks that a node-limited engine stops on its node limit, with a one-node search from the
/// start position. Some UCI engines ignore `go nodes` and search forever; without this check every
/// one of their moves would wait for the hang deadline and lose the game. Time-limited players
/// need no check: `movetime` ends every search.
pub(super) async fn probe_node_limit(
    engine: &engine::EngineHandle,
    limits: &SearchLimits,
) -> Result<(), SetupProblem> {
    if limits.nodes.is_none() || limits.movetime_ms.is_some() {
        return Ok(());
    }
    let probe = SearchLimits {
        nodes: Some(1),
        ..*limits
    };
    // Dropping the request on timeout makes the engine actor send `stop` and resynchronise, so
    // the process stays usable (and the next lease starts with `ucinewgame` anyway).
    match tokio::time::timeout(NODE_PROBE_TIMEOUT, engine.best_move(None, &[], &probe)).await {
        Ok(Ok(_)) => Ok(()),
        // Only the hang is the probe's business: other faults (a crash, a bad bestmove) are
        // handled per game, where they cost the faulty engine that game and restart it.
        Ok(Err(e)) => {
            tracing::warn!(engine = %engine.name(), error = %e, "one-node test search failed");
            Ok(())
        }
        Err(_) => Err(SetupProblem::IgnoresNodeLimit(NODE_PROBE_TIMEOUT.as_secs())),
    }
}

/// The engine's search limits per move; with none given, a fixed effort, unless it plays on a
/// clock (`timed`): then the clock alone ends its searches.
fn limits(e: &EnginePlayerSpec, timed: bool) -> SearchLimits {
    let l = &e.limits;
    if l.nodes.is_none() && l.depth.is_none() && l.movetime_ms.is_none() && !timed {
        // A bare engine entry plays at a fixed, reproducible effort.
        return SearchLimits {
            nodes: Some(10_000),
            depth: None,
            movetime_ms: None,
        };
    }
    SearchLimits {
        nodes: l.nodes,
        depth: l.depth,
        movetime_ms: l.movetime_ms,
    }
}
