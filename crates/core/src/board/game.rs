//! The game record: start position, moves in UCI and SAN, repetition history, and the end-of-game
//! rules that shakmaty's `outcome()` leaves out (fivefold repetition, the seventy-five-move rule,
//! a ply limit, forfeits and adjudications).
//!
//! Which draws end a game is a setting ([`Endings`]): the automatic FIDE endings only (fivefold
//! repetition, the seventy-five-move rule), which is what ChessArena and LLM Chess apply, or also
//! threefold repetition and the fifty-move rule, ending the game as soon as either can be
//! claimed, as cutechess and fastchess play engine matches (the claim both players make).
//!
//! A game is standard chess or Chess960 ([`Variant`]). A Chess960 game's positions are built with
//! shakmaty's `CastlingMode::Chess960`, so its moves are written in UCI with castling as the king
//! taking its own rook (`e1h1`, what engines with `UCI_Chess960` read and write) and its FENs in
//! X-FEN (`KQkq` while the castling rook is the outermost one, the rook's file otherwise), which
//! is what shakmaty writes and python-chess reads and writes by default.

use std::{fmt, str::FromStr, sync::Arc};

use shakmaty::{
    Bitboard, Board, CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Move, Position, Rank,
    Setup, fen::Fen, san::SanPlus, uci::UciMove, zobrist::Zobrist64,
};

use super::BoardError;

/// The halfmove clock at which the seventy-five-move rule ends the game (75 moves by each side).
const SEVENTY_FIVE_MOVES_IN_PLIES: u32 = 150;

/// How often a position must occur for the fivefold-repetition rule.
const FIVEFOLD: usize = 5;

/// The halfmove clock at which the fifty-move rule can be claimed (50 moves by each side).
const FIFTY_MOVES_IN_PLIES: u32 = 100;

/// How often a position must occur for threefold repetition to be claimed.
const THREEFOLD: usize = 3;

/// Which draws that depend on the game's history end a game.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Endings {
    /// The automatic FIDE endings only: fivefold repetition and the seventy-five-move rule (as
    /// ChessArena and LLM Chess play; no player ever claims a draw).
    #[default]
    Automatic,
    /// Threefold repetition and the fifty-move rule end the game the moment they can be claimed,
    /// as if both players always claimed: cutechess's and fastchess's rule for engine games. A
    /// mate or stalemate on the move that reaches either still decides the game.
    Claimed,
}

impl Endings {
    /// The setting's name in scripts and in the book (`automatic`, `claimed`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Endings::Automatic => "automatic",
            Endings::Claimed => "claimed",
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    /// The side to move is checkmated.
    Checkmate,
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// Neither side can possibly checkmate.
    InsufficientMaterial,
    /// The same position occurred for the fifth time.
    FivefoldRepetition,
    /// 75 moves by each side without a capture or a pawn move.
    SeventyFiveMoveRule,
    /// The arena's ply limit was reached (scored as a draw).
    MoveLimit,
    /// A player lost by breaking the protocol: its play mode gave the game up.
    Forfeit,
    /// A player lost by using up its failed attempts at one ply (unparseable answers, wrong
    /// actions, illegal moves): LLM Chess's "too many wrong actions".
    TooManyWrongActions,
    /// A player lost by using up its dialog turns at one ply without moving: LLM Chess's "max
    /// turns in a single dialog".
    MaxTurns,
    /// An engine or the harness failed; the game carries no chess meaning.
    EngineFailure,
    /// The provider refused a player's request because the prompt exceeds the model's context
    /// window. Void unless the player counts it as a forfeit.
    ContextExceeded,
    /// The provider refused a player's request for good (an invalid dialog, a flagged prompt).
    /// Void unless the player counts it as a forfeit.
    RequestRejected,
    /// A player's clock ran out (or one move took longer than the per-move limit): a loss, or a
    /// draw when the opponent has too little material to mate.
    TimeForfeit,
    /// The tournament's adjudication engine found one side lost (cutechess's resign rule): its
    /// score stayed at or below the threshold for the set number of its own moves.
    AdjudicationResign,
    /// The tournament's adjudication engine found the game drawn (cutechess's draw rule): after
    /// the set move number, both sides' scores stayed near zero for the set number of moves.
    AdjudicationDraw,
    /// A person resigned (through `arena serve`'s play page).
    Resignation,
    /// The same position occurred for the third time, under [`Endings::Claimed`].
    ThreefoldRepetition,
    /// 50 moves by each side without a capture or a pawn move, under [`Endings::Claimed`].
    FiftyMoveRule,
}

impl Termination {
    /// Every termination, in declaration order.
    pub const ALL: [Termination; 18] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::InsufficientMaterial,
        Termination::FivefoldRepetition,
        Termination::SeventyFiveMoveRule,
        Termination::MoveLimit,
        Termination::Forfeit,
        Termination::TooManyWrongActions,
        Termination::MaxTurns,
        Termination::EngineFailure,
        Termination::ContextExceeded,
        Termination::RequestRejected,
        Termination::TimeForfeit,
        Termination::AdjudicationResign,
        Termination::AdjudicationDraw,
        Termination::Resignation,
        Termination::ThreefoldRepetition,
        Termination::FiftyMoveRule,
    ];

    /// The stable snake_case name used in storage and in Lua.
    pub const fn as_str(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::InsufficientMaterial => "insufficient_material",
            Termination::FivefoldRepetition => "fivefold_repetition",
            Termination::SeventyFiveMoveRule => "seventy_five_move_rule",
            Termination::MoveLimit => "move_limit",
            Termination::Forfeit => "forfeit",
            Termination::TooManyWrongActions => "too_many_wrong_actions",
            Termination::MaxTurns => "max_turns",
            Termination::EngineFailure => "engine_failure",
            Termination::ContextExceeded => "context_exceeded",
            Termination::RequestRejected => "request_rejected",
            Termination::TimeForfeit => "time_forfeit",
            Termination::AdjudicationResign => "adjudication_resign",
            Termination::AdjudicationDraw => "adjudication_draw",
            Termination::Resignation => "resignation",
            Termination::ThreefoldRepetition => "threefold_repetition",
            Termination::FiftyMoveRule => "fifty_move_rule",
        }
    }

    /// Whether the game was lost by a protocol failure of the loser (forfeit, too many wrong
    /// actions, max turns, or a rejected request counted as a forfeit) rather than decided on
    /// the board: LLM Chess's "interrupted" games.
    pub const fn is_protocol_failure(self) -> bool {
        matches!(
            self,
            Termination::Forfeit
                | Termination::TooManyWrongActions
                | Termination::MaxTurns
                | Termination::ContextExceeded
                | Termination::RequestRejected
        )
    }

    /// Whether the game was ended by a fault of the harness (an engine that crashed, hung or
    /// answered an illegal move), not by either player's chess or protocol: such a game is void
    /// and its schedule slot is played again on the next run. A model's own limits
    /// (`context_exceeded`, `request_rejected`) are not: a replay would end the same way.
    pub const fn is_harness_fault(self) -> bool {
        matches!(self, Termination::EngineFailure)
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rules a game is played under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Standard chess.
    #[default]
    Standard,
    /// Chess960 (Fischer random chess): a shuffled back rank, castling to the standard squares
    /// with the rook the king castles with.
    Chess960,
}

impl Variant {
    /// The stable snake_case name used in storage and in Lua: `standard` or `chess960`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Chess960 => "chess960",
        }
    }

    /// Whether this is Chess960.
    pub const fn is_chess960(self) -> bool {
        matches!(self, Variant::Chess960)
    }

    /// The castling mode positions of this variant are built with.
    pub const fn castling_mode(self) -> CastlingMode {
        match self {
            Variant::Standard => CastlingMode::Standard,
            Variant::Chess960 => CastlingMode::Chess960,
        }
    }

    /// The value of PGN's `Variant` tag, `None` for standard chess (which has no tag).
    pub const fn pgn_tag(self) -> Option<&'static str> {
        match self {
            Variant::Standard => None,
            Variant::Chess960 => Some("Chess960"),
        }
    }

    /// The variant a PGN `Variant` tag names: Chess960 under the names other tools write
    /// (`Chess960`, lichess's `Chess960`, cutechess's `fischerandom`, `Fischer Random`...),
    /// standard chess for `Standard` or no tag; `None` for any other variant.
    pub(crate) fn from_pgn_tag(tag: Option<&str>) -> Option<Variant> {
        let Some(tag) = tag else {
            return Some(Variant::Standard);
        };
        let folded: String = tag
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match folded.as_str() {
            "" | "standard" | "chess" => Some(Variant::Standard),
            "chess960" | "960" | "fischerandom" | "fischerrandom" | "fischerrandomchess"
            | "frc" => Some(Variant::Chess960),
            _ => None,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Variant {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "standard" => Ok(Variant::Standard),
            "chess960" => Ok(Variant::Chess960),
            _ => Err(UnknownName {
                what: "variant",
                name: s.to_owned(),
            }),
        }
    }
}

/// How many Chess960 start positions there are (numbered 0 to 959).
pub const CHESS960_POSITIONS: u32 = 960;

/// The Chess960 start position number `number` in Scharnagl's numbering (518 is the standard
/// position, 0 is `bbqnnrkr`), White to move with all four castling rights, as X-FEN.
///
/// # Errors
///
/// [`BoardError::Chess960Number`] for a number above 959.
pub fn chess960_fen(number: u32) -> Result<String, BoardError> {
    Ok(fen_of(&chess960_position(number)?))
}

/// The Chess960 start position `number` (see [`chess960_fen`]), in Chess960 castling mode.
///
/// # Errors
///
/// [`BoardError::Chess960Number`] for a number above 959.
pub fn chess960_position(number: u32) -> Result<Chess, BoardError> {
    if number >= CHESS960_POSITIONS {
        return Err(BoardError::Chess960Number(number));
    }
    let board = Board::chess960(number);
    let back_ranks = Bitboard::from(Rank::First) | Bitboard::from(Rank::Eighth);
    let mut setup = Setup::empty();
    setup.castling_rights = board.rooks() & back_ranks;
    setup.board = board;
    let pos = setup
        .position(CastlingMode::Chess960)
        .expect("every Chess960 start position is legal");
    Ok(pos)
}

/// A name that matches no variant of an enum parsed from storage.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`")]
pub struct UnknownName {
    /// What was being parsed ("termination", "game result").
    pub what: &'static str,
    /// The text that did not match.
    pub name: String,
}

impl FromStr for Termination {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Termination::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownName {
                what: "termination",
                name: s.to_owned(),
            })
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// 1-0.
    WhiteWins,
    /// 0-1.
    BlackWins,
    /// 1/2-1/2.
    Draw,
}

impl GameResult {
    /// The win for `color`.
    pub const fn win_for(color: Color) -> GameResult {
        match color {
            Color::White => GameResult::WhiteWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// The PGN result token: `1-0`, `0-1` or `1/2-1/2`.
    pub const fn as_pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// The score of `color`: 1 for a win, 0.5 for a draw, 0 for a loss.
    pub fn score_for(self, color: Color) -> f64 {
        match (self, color) {
            (GameResult::Draw, _) => 0.5,
            (GameResult::WhiteWins, Color::White) | (GameResult::BlackWins, Color::Black) => 1.0,
            _ => 0.0,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_pgn())
    }
}

impl FromStr for GameResult {
    type Err = UnknownName;

    /// Parses a PGN result token (`1-0`, `0-1`, `1/2-1/2`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "1-0" => Ok(GameResult::WhiteWins),
            "0-1" => Ok(GameResult::BlackWins),
            "1/2-1/2" => Ok(GameResult::Draw),
            _ => Err(UnknownName {
                what: "game result",
                name: s.to_owned(),
            }),
        }
    }
}

/// How and why a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameEnd {
    /// The result; `None` for a *void* game: one that ended without a result and counts for
    /// nobody (stored as `*`, PGN's "no result"), such as a game whose requests a provider
    /// refused. Any termination may be void: see [`GameEnd::void`].
    pub result: Option<GameResult>,
    /// The rule or event that ended the game.
    pub termination: Termination,
    /// Free text for forfeits and adjudications (for example the last parse error).
    pub reason: Option<String>,
}

impl GameEnd {
    /// An end with a result.
    pub fn decided(result: GameResult, termination: Termination, reason: Option<String>) -> Self {
        GameEnd {
            result: Some(result),
            termination,
            reason,
        }
    }

    /// A void end: the game is over, with no result, and counts for nobody.
    pub fn void(termination: Termination, reason: Option<String>) -> Self {
        GameEnd {
            result: None,
            termination,
            reason,
        }
    }

    /// The result as stored and written in PGN: `1-0`, `0-1`, `1/2-1/2`, or `*` when void.
    pub fn result_token(&self) -> &'static str {
        self.result.map_or("*", GameResult::as_pgn)
    }
}

/// A move as it was recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedMove {
    /// UCI notation; castling as the king's two-square move (`e1g1`) in standard chess, as the
    /// king taking its own rook (`e1h1`) in Chess960.
    pub uci: String,
    /// SAN with its check or mate suffix (`Qxf7#`).
    pub san: String,
}

/// Why a move given as UCI text cannot be played.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The text is not UCI notation at all.
    #[error("`{text}` is not a move in UCI notation (like e2e4 or e7e8q)")]
    Malformed {
        /// The text as given.
        text: String,
    },
    /// `0000`, which UCI engines use to pass; never allowed in a game.
    #[error("`0000` (a null move) is never a legal move")]
    NullMove,
    /// Well-formed but not legal here, including moves of the opponent's pieces.
    #[error("`{text}` is not a legal move in this position")]
    Illegal {
        /// The text as given.
        text: String,
    },
    /// The game has already ended.
    #[error("the game is already over")]
    GameOver,
}

impl MoveError {
    /// A stable snake_case name for statistics: `malformed`, `null_move`, `illegal`, `game_over`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            MoveError::Malformed { .. } => "malformed",
            MoveError::NullMove => "null_move",
            MoveError::Illegal { .. } => "illegal",
            MoveError::GameOver => "game_over",
        }
    }
}

/// One game: its start, every move, and how it ended.
#[derive(Clone, Debug)]
pub struct Game {
    variant: Variant,
    start_fen: String,
    position: Chess,
    /// The moves in UCI and SAN, shared with the play modes' `ctx` of each ply
    /// ([`Game::uci_history`]) rather than copied for every one: a push copies them only
    /// while a `ctx` still holds them.
    uci: Arc<Vec<String>>,
    san: Arc<Vec<String>>,
    /// Hashes of every position so far, the start included, for the repetition rule.
    hashes: Vec<Zobrist64>,
    max_plies: u32,
    /// Plies at the start that the move limit does not count (an opening line from a book).
    book_plies: u32,
    /// Which history-dependent draws end the game.
    endings: Endings,
    end: Option<GameEnd>,
}

/// Parses a FEN into a playable position of `variant` (X-FEN and Shredder-FEN castling rights both
/// read), rejecting positions whose game is already decided.
pub(crate) fn playable_position_in(variant: Variant, fen: &str) -> Result<Chess, BoardError> {
    let invalid = |reason: String| BoardError::InvalidFen {
        fen: fen.to_owned(),
        reason,
    };
    let parsed: Fen = fen.trim().parse().map_err(|e| invalid(format!("{e}")))?;
    let pos: Chess = parsed
        .into_position(variant.castling_mode())
        .map_err(|e| invalid(format!("{e}")))?;
    if let Some(termination) = immediate_end(&pos) {
        return Err(invalid(format!("the game is already over ({termination})")));
    }
    Ok(pos)
}

/// [`playable_position_in`] for standard chess.
pub(crate) fn playable_position(fen: &str) -> Result<Chess, BoardError> {
    playable_position_in(Variant::Standard, fen)
}

/// Parses a FEN of a position of `variant` (a stored one: no check that the game goes on).
///
/// # Errors
///
/// [`BoardError::InvalidFen`] when the FEN does not parse or is not a legal position.
pub fn position_from_fen(variant: Variant, fen: &str) -> Result<Chess, BoardError> {
    let invalid = |reason: String| BoardError::InvalidFen {
        fen: fen.to_owned(),
        reason,
    };
    let parsed: Fen = fen.trim().parse().map_err(|e| invalid(format!("{e}")))?;
    parsed
        .into_position(variant.castling_mode())
        .map_err(|e| invalid(format!("{e}")))
}

/// The UCI text of `mv` in `pos`, castling written as the position's castling mode says:
/// the king's two-square move in standard chess, the king taking its rook in Chess960.
pub fn uci_of(pos: &Chess, mv: &Move) -> String {
    // Appended, not formatted: the legal moves of every prompt go through here.
    let mut uci = String::with_capacity(5);
    mv.to_uci(pos.castles().mode()).append_to_string(&mut uci);
    uci
}

/// The automatic endings that depend on the position alone (not on its history).
fn immediate_end(pos: &Chess) -> Option<Termination> {
    if pos.is_checkmate() {
        Some(Termination::Checkmate)
    } else if pos.is_stalemate() {
        Some(Termination::Stalemate)
    } else if pos.is_insufficient_material() {
        Some(Termination::InsufficientMaterial)
    } else if pos.halfmoves() >= SEVENTY_FIVE_MOVES_IN_PLIES {
        Some(Termination::SeventyFiveMoveRule)
    } else {
        None
    }
}

/// The FEN of a position as the arena writes it: en passant square only when a capture is legal.
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

impl Game {
    /// Starts a game from `start_fen` (the initial position when `None`), ending as a draw after
    /// `max_plies` plies (`0` means no limit).
    ///
    /// # Errors
    ///
    /// [`BoardError::InvalidFen`] when the FEN does not parse, is not a legal position, or the game
    /// is already over in it.
    pub fn new(start_fen: Option<&str>, max_plies: u32) -> Result<Game, BoardError> {
        Game::new_in(Variant::Standard, start_fen, max_plies)
    }

    /// Starts a game of `variant` from `start_fen` (the standard initial position when `None`,
    /// which is Chess960's number 518), as [`Game::new`] does.
    ///
    /// # Errors
    ///
    /// As [`Game::new`].
    pub fn new_in(
        variant: Variant,
        start_fen: Option<&str>,
        max_plies: u32,
    ) -> Result<Game, BoardError> {
        let start = match (start_fen, variant) {
            (Some(fen), _) => playable_position_in(variant, fen)?,
            (None, Variant::Standard) => Chess::default(),
            (None, Variant::Chess960) => chess960_position(518)?,
        };
        Ok(Game {
            variant,
            start_fen: fen_of(&start),
            hashes: vec![start.zobrist_hash(EnPassantMode::Legal)],
            position: start,
            uci: Arc::default(),
            san: Arc::default(),
            max_plies,
            book_plies: 0,
            endings: Endings::Automatic,
            end: None,
        })
    }

    /// Plays the game under `endings` (the default is [`Endings::Automatic`]); see
    /// [`Game::set_endings`].
    #[must_use]
    #[cfg(test)]
    pub(crate) fn with_endings(mut self, endings: Endings) -> Game {
        self.set_endings(endings);
        self
    }

    /// Plays the rest of the game under `endings`, and applies them to the current position at
    /// once: a start position whose halfmove clock already allows a claim ends the game before
    /// any move under [`Endings::Claimed`], as cutechess ends it, and so does a replayed game
    /// whose last stored move reached a claim (a run killed before it recorded the end). Moves
    /// replayed before the setting (under the default, which ends no game earlier) are kept.
    pub fn set_endings(&mut self, endings: Endings) {
        self.endings = endings;
        if self.end.is_none() {
            self.end = self.detect_end();
        }
    }

    /// Which history-dependent draws end the game.
    pub fn endings(&self) -> Endings {
        self.endings
    }

    /// The draw a player could claim in the current position, whatever the game's [`Endings`]:
    /// [`Termination::FiftyMoveRule`] when the halfmove clock is at least 100 and
    /// [`Termination::ThreefoldRepetition`] when the position has occurred three times (the
    /// fifty-move rule first, as cutechess checks it), or `None` (also in a mate or stalemate).
    pub fn claimable_draw(&self) -> Option<Termination> {
        let pos = &self.position;
        if pos.is_checkmate() || pos.is_stalemate() {
            return None;
        }
        if pos.halfmoves() >= FIFTY_MOVES_IN_PLIES {
            Some(Termination::FiftyMoveRule)
        } else if self.occurrences() >= THREEFOLD {
            Some(Termination::ThreefoldRepetition)
        } else {
            None
        }
    }

    /// How often the current position has occurred in the game, this time included.
    fn occurrences(&self) -> usize {
        let current = self
            .hashes
            .last()
            .expect("the start position is always hashed");
        self.hashes.iter().filter(|h| *h == current).count()
    }

    /// The first `plies` plies of the game are an opening line (book plies): the move limit
    /// counts only the plies after them. Set it before the book plies are played. The ply count
    /// ([`Game::ply`]) and the record keep every ply.
    #[must_use]
    pub fn with_book_plies(mut self, plies: u32) -> Game {
        self.book_plies = plies;
        self
    }

    /// Plies played after the book plies: what the move limit counts.
    pub(crate) fn counted_plies(&self) -> u32 {
        self.ply().saturating_sub(self.book_plies)
    }

    /// The FEN of the start position (normalized by shakmaty).
    pub fn start_fen(&self) -> String {
        self.start_fen.clone()
    }

    /// Whether the game is standard chess from the standard initial position (move counters
    /// included). A Chess960 game never is, whatever its start: its start is always written out.
    pub fn starts_from_initial(&self) -> bool {
        self.variant == Variant::Standard && self.start_fen == fen_of(&Chess::default())
    }

    /// The rules the game is played under.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The current position.
    pub fn position(&self) -> &Chess {
        &self.position
    }

    /// The FEN of the current position (en passant square only when a capture is legal).
    pub fn fen(&self) -> String {
        fen_of(&self.position)
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.position.turn()
    }

    /// Plies played so far.
    pub fn ply(&self) -> u32 {
        u32::try_from(self.uci.len()).expect("a game never has more than u32::MAX plies")
    }

    /// The ply limit (`0` = none), counted after the book plies ([`Game::with_book_plies`]).
    pub fn max_plies(&self) -> u32 {
        self.max_plies
    }

    /// The moves so far in UCI notation.
    pub fn uci_moves(&self) -> &[String] {
        &self.uci
    }

    /// The moves so far in SAN, with check and mate suffixes.
    pub fn san_moves(&self) -> &[String] {
        &self.san
    }

    /// [`Game::uci_moves`], shared: a handle, not a copy.
    pub fn uci_history(&self) -> Arc<Vec<String>> {
        Arc::clone(&self.uci)
    }

    /// [`Game::san_moves`], shared: a handle, not a copy.
    pub fn san_history(&self) -> Arc<Vec<String>> {
        Arc::clone(&self.san)
    }

    /// How the game ended, if it has.
    pub fn end(&self) -> Option<&GameEnd> {
        self.end.as_ref()
    }

    /// Parses a UCI move and checks that it is legal in the current position. The promotion
    /// letter may be upper case (`e7e8Q`); surrounding whitespace is ignored.
    ///
    /// # Errors
    ///
    /// [`MoveError::Malformed`] for text that is not UCI, [`MoveError::NullMove`] for `0000`,
    /// [`MoveError::Illegal`] for a move that is not legal for the side to move.
    pub fn parse_uci(&self, text: &str) -> Result<Move, MoveError> {
        parse_uci_in(&self.position, text)
    }

    /// Plays a legal move, records it and applies the end-of-game rules.
    ///
    /// # Panics
    ///
    /// If the move is not legal in the current position or the game is over; both are bugs in the
    /// caller, which must get its moves from [`Game::parse_uci`] or the legal move list.
    pub fn play(&mut self, mv: &Move) -> PlayedMove {
        assert!(self.end.is_none(), "a move was played after the game ended");
        assert!(
            self.position.is_legal(*mv),
            "an illegal move was played: {mv:?}"
        );
        let uci = uci_of(&self.position, mv);
        let san = SanPlus::from_move_and_play_unchecked(&mut self.position, *mv).to_string();
        self.hashes
            .push(self.position.zobrist_hash(EnPassantMode::Legal));
        Arc::make_mut(&mut self.uci).push(uci.clone());
        Arc::make_mut(&mut self.san).push(san.clone());
        self.end = self.detect_end();
        PlayedMove { uci, san }
    }

    /// Parses and plays a UCI move.
    ///
    /// # Errors
    ///
    /// As [`Game::parse_uci`], plus [`MoveError::GameOver`] once the game has ended.
    pub fn play_uci(&mut self, text: &str) -> Result<PlayedMove, MoveError> {
        if self.end.is_some() {
            return Err(MoveError::GameOver);
        }
        let mv = self.parse_uci(text)?;
        Ok(self.play(&mv))
    }

    /// Ends the game as a loss for `loser`. Has no effect on a game that already ended, so a
    /// result reached on the board is never overwritten.
    pub fn forfeit(&mut self, loser: Color, reason: String) {
        self.adjudicate(GameEnd::decided(
            GameResult::win_for(loser.other()),
            Termination::Forfeit,
            Some(reason),
        ));
    }

    /// Ends the game with an externally decided result. Has no effect on a game that already ended.
    pub fn adjudicate(&mut self, end: GameEnd) {
        if self.end.is_none() {
            self.end = Some(end);
        }
    }

    /// Ends the game with an adjudication that also overrules the move limit reached by the same
    /// ply (as in cutechess, where resign and draw adjudication are checked before the maximum
    /// game length). Has no effect on a game that ended by any other rule.
    pub fn adjudicate_before_move_limit(&mut self, end: GameEnd) {
        match &self.end {
            None => self.end = Some(end),
            Some(current) if current.termination == Termination::MoveLimit => {
                self.end = Some(end);
            }
            Some(_) => {}
        }
    }

    /// The end-of-game rules, in precedence order: a mate on the 150th halfmove still wins, and
    /// every rule beats the arbitrary ply limit. Under [`Endings::Claimed`] the claimable draws
    /// come after mate, stalemate and insufficient material (cutechess's order: mate, stalemate,
    /// material, fifty moves, threefold), and being reached first they leave the automatic ones
    /// nothing to end.
    fn detect_end(&self) -> Option<GameEnd> {
        let pos = &self.position;
        let claimed = || match self.endings {
            Endings::Claimed => self.claimable_draw(),
            Endings::Automatic => None,
        };
        let termination = immediate_end(pos).or_else(claimed).or_else(|| {
            if self.occurrences() >= FIVEFOLD {
                Some(Termination::FivefoldRepetition)
            } else if self.max_plies != 0 && self.counted_plies() >= self.max_plies {
                Some(Termination::MoveLimit)
            } else {
                None
            }
        })?;
        let result = match termination {
            Termination::Checkmate => GameResult::win_for(pos.turn().other()),
            _ => GameResult::Draw,
        };
        Some(GameEnd::decided(result, termination, None))
    }
}

/// Parses `text` as a UCI move legal in `pos`; shared with the notation module.
///
/// Castling is read as the king taking its own rook (`e1h1`) in every game, and as the king's
/// two-square move (`e1g1`) in standard chess. In a Chess960 position the king's move to its
/// castled square (the g- or c-file) is read as castling too, but only when it is unambiguous:
/// when the king moves there by castling and not also by an ordinary legal king move (a king on
/// f1 next to an empty g1 moves to g1 without castling, so `f1g1` is that move, and castling is
/// then `f1h1`).
pub fn parse_uci_in(pos: &Chess, text: &str) -> Result<Move, MoveError> {
    let trimmed = text.trim();
    if trimmed == "0000" {
        return Err(MoveError::NullMove);
    }
    let malformed = || MoveError::Malformed {
        text: trimmed.to_owned(),
    };
    // shakmaty accepts drops (`Q@f7`), which standard chess never has: only squares and a
    // promotion piece are UCI here.
    let bytes = trimmed.as_bytes();
    let shaped = matches!(bytes.len(), 4 | 5)
        && matches!(bytes[0], b'a'..=b'h')
        && matches!(bytes[1], b'1'..=b'8')
        && matches!(bytes[2], b'a'..=b'h')
        && matches!(bytes[3], b'1'..=b'8')
        && bytes.get(4).is_none_or(|c| b"qrbnQRBN".contains(c));
    if !shaped {
        return Err(malformed());
    }
    let uci: UciMove = trimmed
        .to_ascii_lowercase()
        .parse()
        .map_err(|_| malformed())?;
    let illegal = || MoveError::Illegal {
        text: trimmed.to_owned(),
    };
    match uci.to_move(pos) {
        Ok(mv) => Ok(mv),
        Err(_) if pos.castles().mode().is_chess960() => {
            castle_by_king_destination(pos, &uci).ok_or_else(illegal)
        }
        Err(_) => Err(illegal()),
    }
}

/// The castling whose king lands on `uci`'s target square, in a Chess960 position, when no
/// ordinary king move goes there (see [`parse_uci_in`]).
fn castle_by_king_destination(pos: &Chess, uci: &UciMove) -> Option<Move> {
    let UciMove::Normal {
        from,
        to,
        promotion: None,
    } = *uci
    else {
        return None;
    };
    let legal = pos.legal_moves();
    let ordinary = legal
        .iter()
        .any(|m| !m.is_castle() && m.from() == Some(from) && m.to() == to);
    if ordinary {
        return None;
    }
    legal.into_iter().find(|m| match *m {
        Move::Castle { king, rook } => {
            king == from
                && king != to
                && CastlingSide::from_king_side(king < rook).king_to(pos.turn()) == to
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play_all(game: &mut Game, moves: &[&str]) {
        for m in moves {
            game.play_uci(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        }
    }

    #[test]
    fn names_round_trip() {
        for t in Termination::ALL {
            assert_eq!(t.as_str().parse::<Termination>(), Ok(t));
        }
        assert_eq!(
            Termination::SeventyFiveMoveRule.as_str(),
            "seventy_five_move_rule"
        );
        assert!("Checkmate".parse::<Termination>().is_err());
        for r in [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
        ] {
            assert_eq!(r.as_pgn().parse::<GameResult>(), Ok(r));
        }
        assert_eq!(GameResult::BlackWins.score_for(Color::Black), 1.0);
        assert_eq!(GameResult::BlackWins.score_for(Color::White), 0.0);
        assert_eq!(GameResult::Draw.score_for(Color::White), 0.5);
    }

    #[test]
    fn fools_mate_is_checkmate_with_suffix() {
        let mut game = Game::new(None, 0).unwrap();
        assert!(game.starts_from_initial());
        play_all(&mut game, &["f2f3", "e7e5", "g2g4"]);
        let last = game.play_uci("d8h4").unwrap();
        assert_eq!(last.san, "Qh4#");
        let end = game.end().unwrap();
        assert_eq!(end.result, Some(GameResult::BlackWins));
        assert_eq!(end.termination, Termination::Checkmate);
        assert_eq!(game.san_moves(), ["f3", "e5", "g4", "Qh4#"]);
        assert_eq!(game.play_uci("e1f2"), Err(MoveError::GameOver));
    }

    #[test]
    fn parse_errors_have_kinds() {
        let game = Game::new(None, 0).unwrap();
        assert_eq!(game.parse_uci("0000"), Err(MoveError::NullMove));
        assert!(matches!(
            game.parse_uci("e2e5"),
            Err(MoveError::Illegal { .. })
        ));
        // Black's pawn while White is to move.
        assert!(matches!(
            game.parse_uci("e7e5"),
            Err(MoveError::Illegal { .. })
        ));
        assert!(matches!(
            game.parse_uci("e2"),
            Err(MoveError::Malformed { .. })
        ));
        assert!(matches!(
            game.parse_uci("Q@e4"),
            Err(MoveError::Malformed { .. })
        ));
        assert!(matches!(
            game.parse_uci("e2e4x"),
            Err(MoveError::Malformed { .. })
        ));
        assert!(game.parse_uci(" e2e4\n").is_ok());
        assert_eq!(MoveError::NullMove.as_str(), "null_move");
    }

    #[test]
    fn upper_case_promotion_and_castling() {
        let mut game = Game::new(Some("4k3/P7/8/8/8/8/8/R3K2R w KQ - 0 1"), 0).unwrap();
        assert!(!game.starts_from_initial());
        let castle = game.clone().play_uci("e1g1").unwrap();
        assert_eq!(castle.san, "O-O");
        let castle = game.clone().play_uci("e1c1").unwrap();
        assert_eq!(
            (castle.uci.as_str(), castle.san.as_str()),
            ("e1c1", "O-O-O")
        );
        let promo = game.play_uci("a7a8Q").unwrap();
        assert_eq!(promo.uci, "a7a8q");
        assert_eq!(promo.san, "a8=Q+");
    }

    #[test]
    fn rejects_bad_and_finished_starts() {
        assert!(matches!(
            Game::new(Some("not a fen"), 0),
            Err(BoardError::InvalidFen { .. })
        ));
        // Kings missing.
        assert!(Game::new(Some("8/8/8/8/8/8/8/8 w - - 0 1"), 0).is_err());
        // Fool's mate final position.
        let err = Game::new(
            Some("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),
            0,
        )
        .unwrap_err();
        assert!(err.to_string().contains("checkmate"), "{err}");
        assert!(Game::new(Some("8/8/8/4k3/8/8/8/4K3 w - - 0 1"), 0).is_err());
        assert!(Game::new(Some("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), 0).is_err());
    }

    #[test]
    fn capture_to_bare_kings_is_insufficient_material() {
        let mut game = Game::new(Some("8/8/8/4k3/8/8/3q4/3K4 w - - 0 1"), 0).unwrap();
        game.play_uci("d1d2").unwrap();
        let end = game.end().unwrap();
        assert_eq!(end.termination, Termination::InsufficientMaterial);
        assert_eq!(end.result, Some(GameResult::Draw));
    }

    #[test]
    fn fivefold_repetition_counts_the_start_position() {
        let mut game = Game::new(None, 0).unwrap();
        let cycle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        for round in 0..4 {
            play_all(&mut game, &cycle);
            if round < 3 {
                assert!(game.end().is_none(), "ended after round {round}");
            }
        }
        // The start position has now occurred five times.
        let end = game.end().unwrap();
        assert_eq!(end.termination, Termination::FivefoldRepetition);
        assert_eq!(game.ply(), 16);
    }

    #[test]
    fn claimed_endings_end_a_knight_shuffle_at_the_third_occurrence() {
        let cycle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        let mut game = Game::new(None, 0).unwrap().with_endings(Endings::Claimed);
        play_all(&mut game, &cycle);
        assert!(game.end().is_none(), "the start position twice is no claim");
        play_all(&mut game, &cycle);
        let end = game.end().unwrap();
        assert_eq!(end.termination, Termination::ThreefoldRepetition);
        assert_eq!(end.result, Some(GameResult::Draw));
        assert_eq!(game.ply(), 8);
        // The same moves under the automatic endings go on: the fifth occurrence ends them.
        let mut game = Game::new(None, 0).unwrap();
        play_all(&mut game, &cycle);
        play_all(&mut game, &cycle);
        assert!(game.end().is_none());
        assert_eq!(
            game.claimable_draw(),
            Some(Termination::ThreefoldRepetition)
        );
    }

    #[test]
    fn claimed_endings_end_at_the_hundredth_halfmove_but_mate_still_wins() {
        let fen = "7k/8/8/8/8/8/R7/K7 w - - 99 80";
        let mut game = Game::new(Some(fen), 0)
            .unwrap()
            .with_endings(Endings::Claimed);
        play_all(&mut game, &["a2b2"]);
        assert_eq!(game.end().unwrap().termination, Termination::FiftyMoveRule);
        assert_eq!(game.ply(), 1);
        let mut game = Game::new(Some(fen), 0).unwrap();
        play_all(&mut game, &["a2b2"]);
        assert!(game.end().is_none());
        // A pawn move resets the clock: no claim.
        let mut game = Game::new(Some("7k/8/8/8/8/8/P7/K7 w - - 99 80"), 0)
            .unwrap()
            .with_endings(Endings::Claimed);
        play_all(&mut game, &["a2a3"]);
        assert!(game.end().is_none());
        // Mate delivered on the 100th halfmove wins (cutechess looks for mate first).
        let mut game = Game::new(Some("6k1/R7/6K1/8/8/8/8/8 w - - 99 100"), 0)
            .unwrap()
            .with_endings(Endings::Claimed);
        play_all(&mut game, &["a7a8"]);
        assert_eq!(game.end().unwrap().termination, Termination::Checkmate);
        // A start whose clock already allows the claim ends before any move.
        let game = Game::new(Some("7k/8/8/8/8/8/R7/K7 w - - 100 80"), 0)
            .unwrap()
            .with_endings(Endings::Claimed);
        assert_eq!(game.end().unwrap().termination, Termination::FiftyMoveRule);
        assert_eq!(game.ply(), 0);
    }

    /// The ending of `moves` from `fen` under `endings`, for python-chess to check: the ply it
    /// ended at and how.
    fn ending_of(fen: &str, moves: &[String], endings: Endings) -> (usize, Option<Termination>) {
        let mut game = Game::new(Some(fen), 0).unwrap().with_endings(endings);
        for (i, m) in moves.iter().enumerate() {
            if game.end().is_some() {
                return (i, game.end().map(|e| e.termination));
            }
            game.play_uci(m).unwrap();
        }
        (moves.len(), game.end().map(|e| e.termination))
    }

    /// Random games from sparse positions (where random play repeats itself and lets the clocks
    /// run), each under both settings, checked against python-chess: the game ends at the first
    /// position where python-chess finds mate, stalemate or insufficient material, then (under
    /// `claimed`) `is_fifty_moves()` or `is_repetition(3)`, then the seventy-five-move rule or
    /// fivefold repetition, and by that rule.
    #[test]
    fn endings_agree_with_python_chess_on_random_games() {
        use rand::{RngExt, SeedableRng, rngs::StdRng};
        let test = "endings_agree_with_python_chess_on_random_games";
        if !crate::test_parts::python_chess(test) {
            return;
        }
        let starts = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
            "r3k3/8/8/8/8/8/8/4K2R w Kq - 80 60",
            "4k3/8/3n4/8/8/3N4/8/4K3 w - - 0 1",
            "4k3/4p3/8/8/8/8/4P3/4K3 w - - 97 70",
            "7k/8/8/8/8/8/R7/K7 w - - 99 80",
        ];
        let mut rng = StdRng::seed_from_u64(38);
        let mut cases: Vec<(String, Vec<String>)> = Vec::new();
        for start in starts {
            for _ in 0..25 {
                // Play up to 400 random plies under the automatic endings (which end last).
                let mut game = Game::new(Some(start), 0).unwrap();
                let mut moves = Vec::new();
                while game.end().is_none() && moves.len() < 400 {
                    let legal = game.position().legal_moves();
                    let mv = legal[rng.random_range(0..legal.len())];
                    moves.push(game.play(&mv).uci);
                }
                cases.push((start.to_owned(), moves));
            }
        }
        let input: String = cases
            .iter()
            .map(|(fen, moves)| format!("{fen};{}\n", moves.join(" ")))
            .collect();
        let script = r#"
import sys, chess
def end(board, claimed):
    if board.is_checkmate(): return "checkmate"
    if board.is_stalemate(): return "stalemate"
    if board.is_insufficient_material(): return "insufficient_material"
    if claimed:
        if board.is_fifty_moves(): return "fifty_move_rule"
        if board.is_repetition(3): return "threefold_repetition"
    if board.is_seventyfive_moves(): return "seventy_five_move_rule"
    if board.is_fivefold_repetition(): return "fivefold_repetition"
    return None
for line in sys.stdin:
    fen, moves = line.rstrip("\n").split(";")
    moves = moves.split()
    out = []
    for claimed in (False, True):
        board = chess.Board(fen)
        ply, why = len(moves), None
        for i in range(len(moves) + 1):
            why = end(board, claimed)
            if why is not None or i == len(moves):
                ply = i
                break
            board.push_uci(moves[i])
        out.append(f"{ply} {why}")
    print(";".join(out))
"#;
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        let lines: Vec<String> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(lines.len(), cases.len());
        let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
        for ((fen, moves), line) in cases.iter().zip(&lines) {
            let ours: Vec<String> = [Endings::Automatic, Endings::Claimed]
                .into_iter()
                .map(|endings| {
                    let (ply, why) = ending_of(fen, moves, endings);
                    let why = why.map_or("None", Termination::as_str);
                    *seen
                        .entry(format!("{}: {why}", endings.as_str()))
                        .or_default() += 1;
                    format!("{ply} {why}")
                })
                .collect();
            assert_eq!(ours.join(";"), *line, "{fen} {}", moves.join(" "));
        }
        // The sample reaches every rule the settings add or keep.
        for rule in [
            "claimed: threefold_repetition",
            "claimed: fifty_move_rule",
            "automatic: fivefold_repetition",
            "automatic: seventy_five_move_rule",
        ] {
            assert!(seen.contains_key(rule), "no game ended by {rule}: {seen:?}");
        }
    }

    #[test]
    fn en_passant_rights_distinguish_positions() {
        // After 1.e4 with a black pawn on d4, the position with en passant available is not the
        // same as the later one without it.
        let mut game = Game::new(Some("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1"), 0).unwrap();
        game.play_uci("e2e4").unwrap();
        let with_ep = *game.hashes.last().unwrap();
        play_all(&mut game, &["e8d8", "e1d1", "d8e8", "d1e1"]);
        assert_ne!(with_ep, *game.hashes.last().unwrap());
        assert!(game.fen().contains(" - "), "{}", game.fen());
    }

    #[test]
    fn seventy_five_move_rule_and_mate_precedence() {
        let mut game = Game::new(Some("7k/8/8/8/8/8/R7/K7 w - - 148 100"), 0).unwrap();
        game.play_uci("a2b2").unwrap();
        assert!(game.end().is_none());
        game.play_uci("h8g8").unwrap();
        assert_eq!(
            game.end().unwrap().termination,
            Termination::SeventyFiveMoveRule
        );

        // Checkmate delivered on the 150th halfmove wins.
        let mut game = Game::new(Some("6k1/R7/6K1/8/8/8/8/8 w - - 149 100"), 0).unwrap();
        game.play_uci("a7a8").unwrap();
        let end = game.end().unwrap();
        assert_eq!(end.termination, Termination::Checkmate);
        assert_eq!(end.result, Some(GameResult::WhiteWins));
    }

    #[test]
    fn move_limit_is_a_draw_but_mate_wins() {
        let mut game = Game::new(None, 2).unwrap();
        play_all(&mut game, &["e2e4"]);
        assert!(game.end().is_none());
        play_all(&mut game, &["e7e5"]);
        let end = game.end().unwrap();
        assert_eq!(
            (end.result, end.termination),
            (Some(GameResult::Draw), Termination::MoveLimit)
        );

        let mut game = Game::new(None, 4).unwrap();
        play_all(&mut game, &["f2f3", "e7e5", "g2g4", "d8h4"]);
        assert_eq!(game.end().unwrap().termination, Termination::Checkmate);
    }

    #[test]
    fn book_plies_do_not_count_toward_the_move_limit() {
        let mut game = Game::new(None, 2).unwrap().with_book_plies(4);
        play_all(&mut game, &["e2e4", "e7e5", "g1f3", "b8c6"]);
        assert_eq!((game.ply(), game.counted_plies()), (4, 0));
        play_all(&mut game, &["f1c4"]);
        assert!(game.end().is_none());
        play_all(&mut game, &["g8f6"]);
        assert_eq!(game.end().unwrap().termination, Termination::MoveLimit);
        assert_eq!((game.ply(), game.counted_plies()), (6, 2));
    }

    #[test]
    fn forfeit_and_adjudication() {
        let mut game = Game::new(None, 0).unwrap();
        game.forfeit(Color::White, "five illegal moves".to_owned());
        let end = game.end().unwrap().clone();
        assert_eq!(end.result, Some(GameResult::BlackWins));
        assert_eq!(end.termination, Termination::Forfeit);
        // The first ending stands.
        game.adjudicate(GameEnd {
            result: Some(GameResult::Draw),
            termination: Termination::EngineFailure,
            reason: None,
        });
        assert_eq!(game.end(), Some(&end));
    }

    #[test]
    fn chess960_start_numbers_are_scharnagls() {
        assert_eq!(
            chess960_fen(518).unwrap(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        );
        assert_eq!(
            chess960_fen(0).unwrap(),
            "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1"
        );
        assert_eq!(
            chess960_fen(959).unwrap(),
            "rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w KQkq - 0 1"
        );
        // Number 1 of the published table.
        assert_eq!(
            chess960_fen(1).unwrap(),
            "bqnbnrkr/pppppppp/8/8/8/8/PPPPPPPP/BQNBNRKR w KQkq - 0 1"
        );
        assert!(matches!(
            chess960_fen(960),
            Err(BoardError::Chess960Number(960))
        ));
        let distinct: std::collections::HashSet<String> =
            (0..960).map(|n| chess960_fen(n).unwrap()).collect();
        assert_eq!(distinct.len(), 960);
    }

    #[test]
    fn chess960_castling_is_king_takes_rook() {
        // 518 is the standard position, but castles as Chess960: `e1h1` in UCI.
        let mut game = Game::new_in(Variant::Chess960, None, 0).unwrap();
        assert_eq!(game.variant(), Variant::Chess960);
        assert!(!game.starts_from_initial());
        play_all(&mut game, &["g1f3", "g8f6", "e2e3", "e7e6", "f1e2", "f8e7"]);
        let mut by_rook = game.clone();
        let castle = by_rook.play_uci("e1h1").unwrap();
        assert_eq!((castle.uci.as_str(), castle.san.as_str()), ("e1h1", "O-O"));
        // The king's two-square move is unambiguous here and is the same castling.
        let castle = game.play_uci("e1g1").unwrap();
        assert_eq!((castle.uci.as_str(), castle.san.as_str()), ("e1h1", "O-O"));
        assert_eq!(game.fen(), by_rook.fen());
        assert!(
            game.fen()
                .starts_with("rnbqk2r/ppppbppp/4pn2/8/8/4PN2/PPPPBPPP/RNBQ1RK1 b kq")
        );
    }

    #[test]
    fn chess960_king_destination_only_when_unambiguous() {
        // King on f1, rook on h1, g1 empty: `f1g1` is an ordinary king move, castling is `f1h1`.
        let fen = "k7/8/8/8/8/8/8/4RK1R w H - 0 1";
        let game = Game::new_in(Variant::Chess960, Some(fen), 0).unwrap();
        let step = game.clone().play_uci("f1g1").unwrap();
        assert_eq!(step.san, "Kg1");
        let castle = game.clone().play_uci("f1h1").unwrap();
        assert_eq!((castle.uci.as_str(), castle.san.as_str()), ("f1h1", "O-O"));
        // King on b1, rook on a1: long castling puts the king on c1, where an ordinary king
        // move goes too, so `b1c1` is that move and castling is `b1a1`.
        let fen = "4k3/8/8/8/8/8/8/RK5R w AH - 0 1";
        let game = Game::new_in(Variant::Chess960, Some(fen), 0).unwrap();
        assert_eq!(game.clone().play_uci("b1c1").unwrap().san, "Kc1");
        assert_eq!(game.clone().play_uci("b1a1").unwrap().san, "O-O-O");
        // King on d1 with the rook on a1: c1 is reachable by an ordinary move, b1 is not the
        // castled square; `d1g1` (three squares) castles short with the h1 rook.
        let fen = "4k3/8/8/8/8/8/8/R2K3R w AH - 0 1";
        let game = Game::new_in(Variant::Chess960, Some(fen), 0).unwrap();
        assert_eq!(game.clone().play_uci("d1g1").unwrap().uci, "d1h1");
        assert_eq!(game.clone().play_uci("d1c1").unwrap().san, "Kc1");
        // X-FEN and Shredder-FEN castling rights read alike; the record is X-FEN.
        let shredder = Game::new_in(
            Variant::Chess960,
            Some("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"),
            0,
        )
        .unwrap();
        assert_eq!(shredder.start_fen(), chess960_fen(0).unwrap());
        // A standard game reads Chess960 rights as an invalid position.
        assert!(Game::new(Some("k7/8/8/8/8/8/8/4RK1R w H - 0 1"), 0).is_err());
    }

    #[test]
    fn variant_names_and_pgn_tags() {
        for v in [Variant::Standard, Variant::Chess960] {
            assert_eq!(v.as_str().parse::<Variant>(), Ok(v));
        }
        assert_eq!(Variant::from_pgn_tag(None), Some(Variant::Standard));
        assert_eq!(
            Variant::from_pgn_tag(Some("Chess960")),
            Some(Variant::Chess960)
        );
        assert_eq!(
            Variant::from_pgn_tag(Some("fischerandom")),
            Some(Variant::Chess960)
        );
        assert_eq!(Variant::from_pgn_tag(Some("Crazyhouse")), None);
    }

    #[test]
    fn black_to_move_start() {
        let mut game = Game::new(
            Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"),
            0,
        )
        .unwrap();
        // The en passant square is dropped because no capture is possible.
        assert_eq!(
            game.start_fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
        assert_eq!(game.turn(), Color::Black);
        game.play_uci("c7c5").unwrap();
        assert_eq!(game.ply(), 1);
        assert_eq!(game.uci_moves(), ["c7c5"]);
    }
}
