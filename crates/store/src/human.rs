//! A person's moves, resignations and draw offers, as `arena serve` writes them for `arena run`
//! to read.
//!
//! The server and the run are two processes (possibly on two machines sharing a PostgreSQL
//! store), so the store is their mailbox. Each action is one row of the `events` table, of kind
//! [`HumanAction::kind`], level `info`, its message a small JSON object (`{"ply":4,"uci":"e2e4"}`):
//! rows are only ever added, so a killed server, a killed run or a closed page loses nothing,
//! and the game's log keeps every offer and its answer. Using `events` needs no new table: its
//! `(tournament_id, id)` index already narrows a poll to one tournament's rows.

use serde::{Deserialize, Serialize};

use super::{
    Context, Store, StoreError,
    db::{DbResult, params},
};

/// What a person did at one ply of a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HumanAction {
    /// A move, in UCI notation (checked legal by the server, and again by the run).
    Move(String),
    /// The person gives the game up.
    Resign,
    /// The person offers a draw.
    DrawOffer,
    /// The run's answer to a draw offer: declined (see `arena::tournament::human`).
    DrawDeclined,
}

impl HumanAction {
    /// The `events.kind` the action is stored under.
    pub fn kind(&self) -> &'static str {
        match self {
            HumanAction::Move(_) => "human_move",
            HumanAction::Resign => "human_resign",
            HumanAction::DrawOffer => "human_draw_offer",
            HumanAction::DrawDeclined => "human_draw_declined",
        }
    }

    fn from_row(kind: &str, message: &Message) -> Option<HumanAction> {
        Some(match kind {
            "human_move" => HumanAction::Move(message.uci.clone()?),
            "human_resign" => HumanAction::Resign,
            "human_draw_offer" => HumanAction::DrawOffer,
            "human_draw_declined" => HumanAction::DrawDeclined,
            _ => return None,
        })
    }
}

/// One stored action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanActionRow {
    /// The event's id: actions are read in this order.
    pub id: i64,
    /// The player who acted.
    pub player: String,
    /// The ply the action was made at (the number of plies played before it).
    pub ply: u32,
    /// What was done.
    pub action: HumanAction,
    /// When it was stored (RFC 3339, UTC).
    pub created_at: String,
}

/// The stored message of an action.
#[derive(Debug, Serialize, Deserialize)]
struct Message {
    player: String,
    ply: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uci: Option<String>,
}

const KINDS: &str = "('human_move', 'human_resign', 'human_draw_offer', 'human_draw_declined')";

impl Store {
    /// Stores what `player` did at `ply` of game `game_id` of `tournament`, and returns the
    /// row's id.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure (a read-only store among them).
    pub fn record_human_action(
        &self,
        tournament: i64,
        game_id: i64,
        player: &str,
        ply: u32,
        action: &HumanAction,
    ) -> Result<i64, StoreError> {
        let message = Message {
            player: player.to_owned(),
            ply,
            uci: match action {
                HumanAction::Move(uci) => Some(uci.clone()),
                _ => None,
            },
        };
        let message = serde_json::to_string(&message).expect("a message serializes");
        self.conn()
            .prepare_cached(
                "INSERT INTO events (tournament_id, game_id, level, kind, message)
                 VALUES (?1, ?2, 'info', ?3, ?4) RETURNING id",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![tournament, game_id, action.kind(), message], |r| {
                    r.get(0)
                })
            })
            .context(|| format!("record `{}` of game {game_id}", action.kind()))
    }

    /// Every person's action stored for game `game_id` of `tournament`, oldest first.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn human_actions(
        &self,
        tournament: i64,
        game_id: i64,
    ) -> Result<Vec<HumanActionRow>, StoreError> {
        let what = || format!("read the person's actions in game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT id, kind, message, created_at FROM events
                 WHERE tournament_id = ?1 AND game_id = ?2 AND kind IN {KINDS} ORDER BY id"
            ))
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament, game_id], |r| {
                let row: (i64, String, String, String) =
                    (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
                Ok(row)
            })
            .context(what)?;
        let rows: Vec<_> = rows.collect::<DbResult<_>>().context(what)?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, kind, message, created_at)| {
                // A row another tool wrote under one of these kinds, unreadable: not an action.
                let message: Message = serde_json::from_str(&message).ok()?;
                Some(HumanActionRow {
                    id,
                    ply: message.ply,
                    action: HumanAction::from_row(&kind, &message)?,
                    player: message.player,
                    created_at,
                })
            })
            .collect())
    }
}
