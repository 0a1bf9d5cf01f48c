//! The game record: start position, moves in UCI and SAN, repetition history, and the end-of-game
//! rules that shakmaty's `outcome()` leaves out (fivefold repetition, the seventy-five-move rule,
//! a ply limit, forfeits and adjudications).
//!
//! Only the automatic FIDE endings are applied; threefold repetition and the fifty-move rule need a
//! claim, and no player in the arena claims, so they are deliberately absent.

use std::{fmt, str::FromStr};

use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, Move, Position, fen::Fen, san::SanPlus,
    uci::UciMove, zobrist::Zobrist64,
};

use super::BoardError;

/// The halfmove clock at which the seventy-five-move rule ends the game (75 moves by each side).
const SEVENTY_FIVE_MOVES_IN_PLIES: u32 = 150;

/// How often a position must occur for the fivefold-repetition rule.
const FIVEFOLD: usize = 5;

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
    /// The tournament's adjudication engine found one side lost (cutechess's resign rule): its
    /// score stayed at or below the threshold for the set number of its own moves.
    AdjudicationResign,
    /// The tournament's adjudication engine found the game drawn (cutechess's draw rule): after
    /// the set move number, both sides' scores stayed near zero for the set number of moves.
    AdjudicationDraw,
}

impl Termination {
    /// Every termination, in declaration order.
    pub const ALL: [Termination; 14] = [
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
        Termination::AdjudicationResign,
        Termination::AdjudicationDraw,
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
            Termination::AdjudicationResign => "adjudication_resign",
            Termination::AdjudicationDraw => "adjudication_draw",
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
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// UCI notation, castling as the king's two-square move (`e1g1`).
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
    start: Chess,
    start_fen: String,
    position: Chess,
    uci: Vec<String>,
    san: Vec<String>,
    /// Hashes of every position so far, the start included, for the repetition rule.
    hashes: Vec<Zobrist64>,
    max_plies: u32,
    /// Plies at the start that the move limit does not count (an opening line from a book).
    book_plies: u32,
    end: Option<GameEnd>,
}

/// Parses a FEN into a playable position, rejecting positions whose game is already decided.
pub(crate) fn playable_position(fen: &str) -> Result<Chess, BoardError> {
    let invalid = |reason: String| BoardError::InvalidFen {
        fen: fen.to_owned(),
        reason,
    };
    let parsed: Fen = fen.trim().parse().map_err(|e| invalid(format!("{e}")))?;
    let pos: Chess = parsed
        .into_position(CastlingMode::Standard)
        .map_err(|e| invalid(format!("{e}")))?;
    if let Some(termination) = immediate_end(&pos) {
        return Err(invalid(format!("the game is already over ({termination})")));
    }
    Ok(pos)
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
pub(crate) fn fen_of(pos: &Chess) -> String {
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
        let start = match start_fen {
            Some(fen) => playable_position(fen)?,
            None => Chess::default(),
        };
        Ok(Game {
            start_fen: fen_of(&start),
            hashes: vec![start.zobrist_hash(EnPassantMode::Legal)],
            position: start.clone(),
            start,
            uci: Vec::new(),
            san: Vec::new(),
            max_plies,
            book_plies: 0,
            end: None,
        })
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
    pub fn counted_plies(&self) -> u32 {
        self.ply().saturating_sub(self.book_plies)
    }

    /// The FEN of the start position (normalized by shakmaty).
    pub fn start_fen(&self) -> String {
        self.start_fen.clone()
    }

    /// The start position.
    pub fn start_position(&self) -> &Chess {
        &self.start
    }

    /// Whether the game started from the standard initial position (move counters included).
    pub fn starts_from_initial(&self) -> bool {
        self.start_fen == fen_of(&Chess::default())
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
        let uci = mv.to_uci(CastlingMode::Standard).to_string();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.position, *mv).to_string();
        self.hashes
            .push(self.position.zobrist_hash(EnPassantMode::Legal));
        self.uci.push(uci.clone());
        self.san.push(san.clone());
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
    /// every rule beats the arbitrary ply limit.
    fn detect_end(&self) -> Option<GameEnd> {
        let pos = &self.position;
        let termination = immediate_end(pos).or_else(|| {
            let current = self
                .hashes
                .last()
                .expect("the start position is always hashed");
            let occurrences = self.hashes.iter().filter(|h| *h == current).count();
            if occurrences >= FIVEFOLD {
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
pub(crate) fn parse_uci_in(pos: &Chess, text: &str) -> Result<Move, MoveError> {
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
    uci.to_move(pos).map_err(|_| MoveError::Illegal {
        text: trimmed.to_owned(),
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
