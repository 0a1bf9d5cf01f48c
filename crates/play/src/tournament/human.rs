//! A person's side of a game: `arena run` waits for the moves `arena serve` stores.
//!
//! The person plays in the browser; the server checks each move against the stored game and
//! writes it into the store ([`Store::record_human_action`]); the run, which owns the game,
//! reads it from there every [`POLL`], checks it again and plays it through the same loop as
//! any player's move (clock, adjudication, result). Nothing lives only in a process: a run
//! killed while it waits resumes the game from its stored plies and finds the move the person
//! made meanwhile; a server or page closed and opened again reads the game back from the store.
//!
//! Rules, as the book's serve page documents them:
//! - **Clock**: a person's move is charged the time the run waited for it. The time a run was
//!   down is not charged (a harness fault is never scored as chess), so a restarted run gives the
//!   person the whole of the move's allowance again.
//! - **Resignation**: at any time; the run ends the game at its next ply (after the move it is
//!   busy with, if the opponent is thinking), as a loss by [`Termination::Resignation`].
//! - **Draw offers**: declined, by every kind of opponent. A model is not asked (no play mode
//!   has a protocol for it, and it would be a paid call outside the game's dialog), an engine or
//!   a random mover has no opinion, and a fixed answer keeps games comparable. The offer and its
//!   answer stay in the game's log.

use std::time::{Duration, Instant};

use shakmaty::Move;

use super::{GameError, env::GameEnv};
use crate::{
    board::{Game, GameEnd, GameResult, Termination},
    store::{GameRow, HumanAction, HumanActionRow, Leased},
};

/// How often the run looks for the person's move.
pub(crate) const POLL: Duration = Duration::from_millis(200);

/// How a person's turn ended.
pub(super) enum HumanTurn {
    /// A legal move, after waiting this long for it.
    Move { mv: Move, waited_ms: u64 },
    /// The person resigned.
    Resigned(GameEnd),
    /// The person's clock ran out while the run waited: charge this much.
    OutOfTime { charged_ms: u64 },
}

/// Waits for the move of `name` (a person, to move in `game`), answering draw offers and
/// watching for a resignation while it waits.
///
/// # Errors
/// A store failure.
pub(super) async fn wait_for_move(
    env: &GameEnv,
    row: &GameRow,
    game: &Game,
    name: &str,
    allowance_ms: Option<u64>,
    lease: Leased<'_>,
) -> Result<HumanTurn, GameError> {
    let started = Instant::now();
    let ply = game.ply();
    let mut refused: Vec<i64> = Vec::new();
    loop {
        let actions = env.store.human_actions(env.tournament, row.id)?;
        if let Some(end) = settle(env, row, game, &actions)? {
            return Ok(HumanTurn::Resigned(end));
        }
        let waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        for a in &actions {
            let HumanAction::Move(uci) = &a.action else {
                continue;
            };
            if a.player != name || a.ply != ply || refused.contains(&a.id) {
                continue;
            }
            match game.parse_uci(uci) {
                Ok(mv) => return Ok(HumanTurn::Move { mv, waited_ms }),
                Err(e) => {
                    // The server checks every move first: only another writer can store this.
                    refused.push(a.id);
                    lease.record_event(
                        env.tournament,
                        "warn",
                        "human_illegal",
                        &format!(
                            "`{name}`'s stored move `{uci}` at ply {} is not legal: {e}",
                            ply + 1
                        ),
                    )?;
                }
            }
        }
        if let Some(allowed) = allowance_ms
            && waited_ms > allowed
        {
            return Ok(HumanTurn::OutOfTime {
                charged_ms: waited_ms,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Before a ply of a game a person plays: answers the draw offers not yet answered, and returns
/// the game's end if a person resigned.
///
/// # Errors
/// A store failure.
pub(super) fn before_ply(
    env: &GameEnv,
    row: &GameRow,
    game: &Game,
) -> Result<Option<GameEnd>, GameError> {
    let actions = env.store.human_actions(env.tournament, row.id)?;
    settle(env, row, game, &actions)
}

fn settle(
    env: &GameEnv,
    row: &GameRow,
    game: &Game,
    actions: &[HumanActionRow],
) -> Result<Option<GameEnd>, GameError> {
    if let Some(resign) = actions
        .iter()
        .find(|a| a.action == HumanAction::Resign && a.ply <= game.ply())
    {
        let result = if resign.player == row.white {
            GameResult::BlackWins
        } else {
            GameResult::WhiteWins
        };
        return Ok(Some(GameEnd::decided(
            result,
            Termination::Resignation,
            Some(format!("`{}` resigns", resign.player)),
        )));
    }
    for offer in actions
        .iter()
        .filter(|a| a.action == HumanAction::DrawOffer)
    {
        let answered = actions.iter().any(|a| {
            a.action == HumanAction::DrawDeclined && a.ply == offer.ply && a.id > offer.id
        });
        if !answered {
            env.store.record_human_action(
                env.tournament,
                row.id,
                &offer.player,
                offer.ply,
                &HumanAction::DrawDeclined,
            )?;
        }
    }
    Ok(None)
}
