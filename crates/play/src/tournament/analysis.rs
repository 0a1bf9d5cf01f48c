//! Engine analysis alongside play: a background task that analyses each game as soon as it
//! finishes (or all of them after the last game), on one [`AnalysisPool`].
//!
//! Play never waits for it: finished games are handed over through an unbounded queue, and the
//! pool's permits cap the engine searches at the script's `processes`. Up to `processes` games are
//! analysed at once, each fanning its segments out over the pool. Failures are logged and stored as events and never fail the tournament; a
//! game whose analysis failed or was cut short by a kill is picked up by the next run, because the
//! worker starts from [`Analyser::pending`].

use std::{
    collections::{HashSet, VecDeque},
    sync::Arc,
};

use futures_util::{StreamExt, stream::FuturesUnordered};
use tokio::{sync::mpsc, task::JoinHandle};

use super::{progress::Progress, worker::Worker};
use crate::spec::AnalysisSpec;
use crate::{
    analysis::{Analyser, AnalysisPool},
    store::{GameRow, LeaseKind, Store},
};

/// What the background analysis did in one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnalysisReport {
    /// Games whose analysis completed in this run.
    pub analysed: usize,
    /// Games whose analysis failed (they are retried by the next run).
    pub failed: usize,
    /// Searches retried on a fresh engine process after a fault.
    pub engine_retries: u64,
    /// Whether the analysis engine could not be started at all.
    pub unavailable: bool,
}

/// The handle of the background analysis of one tournament.
#[derive(Debug)]
pub(crate) struct AnalysisWorker {
    queue: mpsc::UnboundedSender<GameRow>,
    task: JoinHandle<AnalysisReport>,
}

impl AnalysisWorker {
    /// Starts analysing the tournament's finished games that lack an analysis. With `during_play`
    /// the engines start now and games handed over by [`game_finished`](Self::game_finished) are
    /// analysed at once; without it nothing runs until [`finish`](Self::finish).
    pub fn start(
        store: Arc<Store>,
        tournament: i64,
        spec: AnalysisSpec,
        progress: Arc<Progress>,
        worker: Worker,
    ) -> AnalysisWorker {
        let (queue, games) = mpsc::unbounded_channel();
        let task = tokio::spawn(work(store, tournament, spec, progress, worker, games));
        AnalysisWorker { queue, task }
    }

    /// Hands over a game that just finished.
    pub(crate) fn game_finished(&self, game: GameRow) {
        // A worker that stopped (no engine) has said why already; the game stays pending.
        let _ = self.queue.send(game);
    }

    /// Stops at once (a second Ctrl-C); the games left unanalysed are analysed by the next run.
    pub fn abort(self) {
        self.task.abort();
    }

    /// Analyses whatever is still pending, waits for it, and stops the engines.
    pub async fn finish(self) -> AnalysisReport {
        drop(self.queue);
        match self.task.await {
            Ok(report) => report,
            Err(e) => {
                tracing::error!("the analysis task failed: {e}");
                AnalysisReport::default()
            }
        }
    }
}

async fn work(
    store: Arc<Store>,
    tournament: i64,
    spec: AnalysisSpec,
    progress: Arc<Progress>,
    worker: Worker,
    mut games: mpsc::UnboundedReceiver<GameRow>,
) -> AnalysisReport {
    let mut report = AnalysisReport::default();
    if !spec.during_play {
        // Analysis waits for the end of play, so that its engines take no CPU from the players.
        while games.recv().await.is_some() {}
    }
    let pool = AnalysisPool::new(spec.engine_spec(), spec.processes());
    let settings = spec.settings();
    let analyser = match Analyser::new(&store, &pool, settings).await {
        Ok(a) => a,
        Err(e) => {
            let message = format!(
                "no game is analysed: the analysis engine `{}` does not start ({e}); `arena analyze` can analyse them later",
                spec.engine
            );
            tracing::error!("{message}");
            event(
                &store,
                tournament,
                None,
                "error",
                "analysis_unavailable",
                &message,
            );
            report.unavailable = true;
            pool.shutdown().await;
            return report;
        }
    };
    tracing::info!(
        "analysing games with `{}` ({}, win model {}, {} process(es))",
        analyser.engine_id(),
        settings.limits.key(),
        settings.win_model.as_str(),
        spec.processes()
    );

    let mut queue: VecDeque<GameRow> = VecDeque::new();
    let mut seen: HashSet<i64> = HashSet::new();
    let analysed_before = store
        .analysed_games(tournament)
        .map_or(0, |g| g.len() as u64);
    let waiting = pending(&analyser, tournament);
    progress.analysis_started(analysed_before, analysed_before + waiting.len() as u64);
    for game in waiting {
        seen.insert(game.id);
        queue.push_back(game);
    }
    // As many games at once as the pool has processes, so that short games keep every process
    // busy; a game's results do not depend on what runs beside it (see `crate::analysis`).
    let capacity = spec.processes().max(1);
    let analyser = &analyser;
    let mut running = FuturesUnordered::new();
    let mut open = true;
    let mut seen_retries = 0;
    // Games whose analysis another worker holds: offered again once play is over.
    let mut held_elsewhere: Vec<GameRow> = Vec::new();
    let renewal = worker.keep_renewing(store.clone(), LeaseKind::Analysis);
    loop {
        while let Ok(game) = games.try_recv() {
            if seen.insert(game.id) {
                progress.analysis_queued();
                queue.push_back(game);
            }
        }
        while running.len() < capacity {
            let Some(game) = queue.pop_front() else { break };
            let lease = match worker.claim(&store, LeaseKind::Analysis, game.id) {
                Ok(Some(fence)) => fence,
                Ok(None) => {
                    held_elsewhere.push(game);
                    continue;
                }
                Err(e) => {
                    tracing::warn!("game {}: cannot claim its analysis: {e}", game.index);
                    held_elsewhere.push(game);
                    continue;
                }
            };
            running.push(async move {
                let result = analyser.analyse_game(&game, Some(&lease)).await;
                (game, result)
            });
        }
        if running.is_empty() && !open {
            if held_elsewhere.is_empty() {
                break;
            }
            // Wait for the other workers: each game is either analysed by them meanwhile (no
            // longer pending) or, when a lease lapses, claimed here.
            tokio::time::sleep(worker.poll_interval()).await;
            let still: HashSet<i64> = pending(analyser, tournament).iter().map(|g| g.id).collect();
            queue.extend(held_elsewhere.drain(..).filter(|g| still.contains(&g.id)));
            continue;
        }
        tokio::select! {
            received = games.recv(), if open => match received {
                Some(game) => {
                    if seen.insert(game.id) {
                        progress.analysis_queued();
                        queue.push_back(game);
                    }
                }
                None => {
                    // Play is over: pick up finished games nobody handed over (a run without
                    // `during_play`, or a game the runner could not read back).
                    open = false;
                    for game in pending(analyser, tournament) {
                        if seen.insert(game.id) {
                            progress.analysis_queued();
                            queue.push_back(game);
                        }
                    }
                }
            },
            Some((game, result)) = running.next(), if !running.is_empty() => {
                worker.release(&store, LeaseKind::Analysis, game.id);
                let title = format!("game {} {} vs {}", game.index, game.white, game.black);
                match result {
                    Ok(r) => {
                        report.analysed += usize::from(r.complete);
                        progress.game_analysed(
                            r.complete,
                            &format!(
                                "analysed {title}: {} plies, {} positions searched, {} from the cache",
                                r.plies, r.searched, r.cached
                            ),
                        );
                    }
                    Err(e) if e.is_lease_lost() => {
                        tracing::warn!("{title}: {e}; its new holder finishes the analysis");
                        progress.game_analysed(false, &format!("{title}: analysis taken over"));
                    }
                    Err(e) => {
                        report.failed += 1;
                        let message =
                            format!("the analysis of {title} failed (the next run retries it): {e}");
                        tracing::error!("{message}");
                        event(
                            &store,
                            tournament,
                            Some(game.id),
                            "error",
                            "analysis_failed",
                            &message,
                        );
                        progress.game_analysed(false, &format!("{title}: analysis failed"));
                    }
                }
                // With several games at once, a fault is attributed to the game that finishes next.
                let retries = pool.retries();
                if retries > seen_retries {
                    let message = format!(
                        "the analysis engine failed {} time(s) during {title}; each failed segment was searched again on a fresh process",
                        retries - seen_retries
                    );
                    event(
                        &store,
                        tournament,
                        Some(game.id),
                        "warn",
                        "analysis_engine_restart",
                        &message,
                    );
                    seen_retries = retries;
                }
            }
        }
    }
    drop(running);
    renewal.abort();
    report.engine_retries = pool.retries();
    pool.shutdown().await;
    report
}

/// The finished games lacking an analysis; none (logged) when the store cannot say.
fn pending(analyser: &Analyser<'_>, tournament: i64) -> Vec<GameRow> {
    analyser.pending(tournament).unwrap_or_else(|e| {
        tracing::error!("cannot list the games to analyse: {e}");
        Vec::new()
    })
}

/// Stores an event; a store that refuses it is only logged, as analysis never fails the run.
fn event(
    store: &Store,
    tournament: i64,
    game: Option<i64>,
    level: &str,
    kind: &str,
    message: &str,
) {
    if let Err(e) = store.record_event(tournament, game, level, kind, message) {
        tracing::error!("cannot store the event `{kind}`: {e}");
    }
}
