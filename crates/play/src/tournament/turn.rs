//! What the game loop needs from a play mode: the [`PlayMode`] trait, the snapshot a mode sees on
//! each call ([`TurnContext`]) and the decision it returns ([`Decision`]).
//!
//! The built-in modes are Lua scripts (`crates/lua` implements [`PlayMode`] for them); the game loop
//! only knows this trait, so it runs the same with a Rust test double.

use std::sync::{Arc, OnceLock};

use serde::{Serialize, ser::SerializeStruct};
use shakmaty::Chess;

use crate::{
    board::{
        Termination,
        render::{self, MoveTexts},
    },
    llm::{ChatMessage, ToolSpec},
    script::ScriptError,
};

/// A play mode bound to one player's options, for one game: it writes the prompts of each ply
/// and reads the model's replies. Rust owns the board, the dialog and the attempt count.
pub trait PlayMode: Send + Sync {
    /// The messages that open a ply's dialog (or restart it after a reset), and extra request
    /// fields for every call of the ply.
    ///
    /// # Errors
    /// A script error: the game is set aside, never scored.
    fn start(&self, ctx: &TurnContext) -> Result<PlyOpening, ScriptError>;

    /// What to do with the model's reply `text` (`ctx.dialog` already ends with it, the tools it
    /// called included).
    ///
    /// # Errors
    /// A script error: the game is set aside, never scored.
    fn reply(&self, ctx: &TurnContext, text: &str) -> Result<Decision, ScriptError>;

    /// The effective options (the mode's defaults overlaid with the player's).
    fn options(&self) -> &serde_json::Map<String, serde_json::Value>;

    /// Failed attempts allowed per ply before the game is lost.
    fn max_attempts(&self) -> u32;

    /// Dialog turns (model calls) allowed per ply, if the mode limits them; the game loop caps
    /// them anyway.
    fn max_turns(&self) -> Option<u32>;

    /// How the game ends when the attempts of one ply are used up (`forfeit` for ChessArena's
    /// modes, `too_many_wrong_actions` for LLM Chess's).
    fn exhausted(&self) -> Termination;
}

/// What [`PlayMode::start`] returns: the opening messages and extra request fields for the ply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlyOpening {
    /// The messages to send.
    pub messages: Vec<ChatMessage>,
    /// Fields merged into the request body for every call of this ply (a grammar built from the
    /// legal moves, say).
    pub request: serde_json::Map<String, serde_json::Value>,
    /// Tools offered to the model at every call of this ply (none: the request offers none).
    pub tools: Vec<ToolSpec>,
}

/// A read-only view of the game for one call of a play-mode hook (`ctx` in Lua).
#[derive(Debug, Clone, Serialize)]
pub struct TurnContext {
    /// The position to move in.
    pub fen: String,
    /// Where the game started (after the opening line was played).
    pub start_fen: String,
    /// The rules of the game: `"standard"` or `"chess960"` (castling in UCI is then king takes
    /// rook, `e1h1`, and FENs are X-FEN).
    pub variant: &'static str,
    /// `"white"` or `"black"`: the side the player moves for.
    pub side: &'static str,
    /// Plies played so far in the game (0 before the first move).
    pub ply: u32,
    /// The full-move number of the position.
    pub move_number: u32,
    /// The legal moves, in UCI and SAN (`legal_uci` and `legal_san` when serialised), each list
    /// made when first read.
    #[serde(flatten)]
    pub legal: Arc<LegalMoves>,
    /// Every move of the game so far, in UCI (shared with the game, not copied per ply).
    pub history_uci: Arc<Vec<String>>,
    /// Every move of the game so far, in SAN (shared with the game, not copied per ply).
    pub history_san: Arc<Vec<String>>,
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
    pub dialog: Arc<Vec<ChatMessage>>,
    /// The whole dialog of this player's previous move in this game (its final attempt, reply
    /// included); empty on its first move. Modes that keep one conversation per game (blindfold)
    /// build on it.
    pub previous_dialog: Arc<Vec<ChatMessage>>,
    /// Reasoning text the provider returned beside the answer, if any (reply hook only).
    pub reasoning: Option<String>,
    /// Why the provider stopped generating the reply, in OpenAI chat terms for every wire
    /// format (`stop`, `length` when it was cut at the token limit, ...), if it said (reply hook
    /// only).
    pub finish_reason: Option<String>,
}

/// The legal moves of the position to move in, in UCI and in SAN, each list made the first time
/// it is read and kept: most hooks read one of them or none (blitz's reply hook reads neither),
/// and SAN is the dearer one to make. Shared by every call of one ply.
#[derive(Debug)]
pub struct LegalMoves {
    /// The position the lists are made from (`None` when they were given).
    position: Option<Chess>,
    uci: OnceLock<MoveTexts>,
    san: OnceLock<MoveTexts>,
}

impl LegalMoves {
    /// The legal moves of `position`, made when first read.
    pub fn of(position: &Chess) -> Self {
        LegalMoves {
            position: Some(position.clone()),
            uci: OnceLock::new(),
            san: OnceLock::new(),
        }
    }

    /// Lists made elsewhere (a test's, or a position the game loop does not hold).
    pub fn given(uci: Vec<String>, san: Vec<String>) -> Self {
        LegalMoves {
            position: None,
            uci: OnceLock::from(uci.into_iter().collect::<MoveTexts>()),
            san: OnceLock::from(san.into_iter().collect::<MoveTexts>()),
        }
    }

    /// The legal moves in UCI, sorted (castling as king takes rook in Chess960).
    pub fn uci(&self) -> &MoveTexts {
        self.uci.get_or_init(|| self.make(render::legal_uci_texts))
    }

    /// The legal moves in SAN with check and mate suffixes, sorted.
    pub fn san(&self) -> &MoveTexts {
        self.san
            .get_or_init(|| self.make(|pos| render::legal_san(pos).into_iter().collect()))
    }

    fn make(&self, list: impl Fn(&Chess) -> MoveTexts) -> MoveTexts {
        // Only `given` leaves the position out, and it fills both lists.
        self.position.as_ref().map(list).unwrap_or_default()
    }
}

/// As the two fields `legal_uci` and `legal_san`, which is how hooks have always seen them.
impl Serialize for LegalMoves {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("LegalMoves", 2)?;
        s.serialize_field("legal_uci", self.uci())?;
        s.serialize_field("legal_san", self.san())?;
        s.end()
    }
}

/// What a play mode decided after reading a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The action.
    pub action: Action,
    /// The outcome label counted in the statistics (`move`, `no_move_found`, `unparseable`,
    /// `illegal`, `ambiguous`, `forbidden_reasoning`, or a mode's own label).
    pub outcome: Option<String>,
    /// The move the mode read in the reply when it refuses it (the illegal `e1g1`), for the
    /// record: stored with the call and shown by the annotated PGN export.
    pub candidate: Option<String>,
    /// When the reply called several tools: the result sent for each call after the first (the
    /// first gets the action's text); `None` sends an empty result.
    pub other_calls: Option<String>,
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
