//! The snapshot a play mode sees on each call, and the decision it returns.

use serde::Serialize;

use crate::llm::ChatMessage;

/// A read-only view of the game for one call of a play-mode hook (`ctx` in Lua).
#[derive(Debug, Clone, Serialize)]
pub struct TurnContext {
    /// The position to move in.
    pub fen: String,
    /// Where the game started (after the opening line was played).
    pub start_fen: String,
    /// `"white"` or `"black"`: the side the player moves for.
    pub side: &'static str,
    /// Plies played so far in the game (0 before the first move).
    pub ply: u32,
    /// The full-move number of the position.
    pub move_number: u32,
    /// Legal moves in UCI, sorted.
    pub legal_uci: Vec<String>,
    /// Legal moves in SAN, sorted.
    pub legal_san: Vec<String>,
    /// Every move of the game so far, in UCI.
    pub history_uci: Vec<String>,
    /// Every move of the game so far, in SAN.
    pub history_san: Vec<String>,
    /// The opponent's last move in UCI, if any.
    pub last_move: Option<String>,
    /// Which attempt at this ply the call belongs to (1-based).
    pub attempt: u32,
    /// Attempts allowed before forfeit.
    pub max_attempts: u32,
    /// The player's name.
    pub player: String,
    /// The opponent's name.
    pub opponent: String,
    /// The game's number in the tournament schedule.
    pub game: u32,
    /// The mode's options: its defaults overlaid with the player's settings.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The messages exchanged at this ply so far (for the reply hook: including the reply).
    pub dialog: Vec<ChatMessage>,
    /// The whole dialog of this player's previous move in this game (its final attempt, reply
    /// included); empty on its first move. Modes that keep one conversation per game (blindfold)
    /// build on it.
    pub previous_dialog: Vec<ChatMessage>,
    /// Reasoning text the provider returned beside the answer, if any (reply hook only).
    pub reasoning: Option<String>,
}

/// What a play mode decided after reading a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The action.
    pub action: Action,
    /// The outcome label counted in the statistics (`move`, `no_move_found`, `unparseable`,
    /// `illegal`, `ambiguous`, `forbidden_reasoning`, or a mode's own label).
    pub outcome: Option<String>,
}

/// The action part of a [`Decision`].
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Play this move (UCI).
    Move(String),
    /// Ask again; the attempt is spent.
    Retry(RetryAction),
    /// Continue the dialog without spending an attempt (an agentic action's answer).
    Say(String),
    /// Give the game up.
    Forfeit(String),
}

/// How to ask again.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryAction {
    /// `{retry = "text"}`: append the feedback as a user message after the reply.
    Feedback(String),
    /// `{retry = true, reset = true}`: start the ply's dialog over without feedback (the rule of
    /// ChessArena's bullet mode).
    Reset,
}
