//! Reading evaluation data: ChessArena's JSONL files (basic understanding, move selection,
//! puzzles), the Lichess puzzle CSV export, and generating new basic-understanding items.
//!
//! Readers never give up on a whole file for one bad row: they return the good rows together with
//! a `file:line` error for each row that could not be used ([`Loaded`]). Bare `NaN`, `Infinity` and
//! `-Infinity` tokens (which Python's `json.dumps` writes and strict JSON forbids; ChessArena's puzzle
//! files have `"OpeningTags": NaN`) are read as `null`.

use std::{collections::BTreeMap, fmt, fs, path::Path, sync::LazyLock};

use rand::{RngExt, SeedableRng, rngs::StdRng};
use regex::Regex;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::lines::read_to_string_limited;
use serde_json::Value;
use shakmaty::{Position, Square, uci::UciMove};

use super::{EvalError, lenient_position};

/// A row that could not be used, located as `file:line`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RowError {
    /// The file (or another source name) the row came from.
    pub source: String,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with the row.
    pub message: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.source, self.line, self.message)
    }
}

/// The usable rows of a file and the errors of the others.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Loaded<T> {
    /// Rows in file order.
    pub rows: Vec<T>,
    /// One entry per rejected row.
    pub errors: Vec<RowError>,
}

impl<T> Default for Loaded<T> {
    fn default() -> Self {
        Loaded {
            rows: Vec::new(),
            errors: Vec::new(),
        }
    }
}

/// Which of the paper's three cases a basic-understanding item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SquareKind {
    /// A piece of the side to move: the answer lists its legal moves (possibly none).
    OwnPiece,
    /// A piece of the side not to move: the answer names it with no moves.
    OpponentPiece,
    /// No piece: the answer is no piece and no moves.
    Empty,
}

/// One basic-understanding question: what stands on `square` of `fen`, and where can it go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BasicItem {
    /// The position.
    pub fen: String,
    /// The asked square, `a1`..`h8`.
    pub square: String,
    /// The piece symbol as in FEN (`P`, `n`...), `None` for an empty square.
    pub piece: Option<String>,
    /// The piece's legal moves in UCI (empty for an empty square or the side not to move).
    pub legal_moves: Vec<String>,
    /// Which case this is.
    pub kind: SquareKind,
    /// ChessArena's stored system prompt, when the item came from their file.
    pub system: Option<String>,
    /// ChessArena's stored user prompt, when the item came from their file.
    pub prompt: Option<String>,
}

impl BasicItem {
    /// Builds an item with its ground truth computed from the position.
    ///
    /// # Errors
    ///
    /// [`EvalError::InvalidFen`] or [`EvalError::InvalidSquare`].
    pub fn from_position(fen: &str, square: &str) -> Result<BasicItem, EvalError> {
        let pos = lenient_position(fen)?;
        let sq: Square = square
            .trim()
            .parse()
            .map_err(|_| EvalError::InvalidSquare(square.to_owned()))?;
        let piece = pos.board().piece_at(sq);
        let kind = match piece {
            None => SquareKind::Empty,
            Some(p) if p.color == pos.turn() => SquareKind::OwnPiece,
            Some(_) => SquareKind::OpponentPiece,
        };
        let legal_moves = if kind == SquareKind::OwnPiece {
            pos.legal_moves()
                .iter()
                .filter(|m| m.from() == Some(sq))
                .map(|m| UciMove::from_move(*m, shakmaty::CastlingMode::Standard).to_string())
                .collect()
        } else {
            Vec::new()
        };
        Ok(BasicItem {
            fen: fen.trim().to_owned(),
            square: sq.to_string(),
            piece: piece.map(|p| p.char().to_string()),
            legal_moves,
            kind,
            system: None,
            prompt: None,
        })
    }
}

/// The paper's sampling of the asked square: with probability `own` a piece of the side to move,
/// then `opponent` a piece of the other side, and an empty square otherwise (85 % / 7 % / 8 %).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SquareSampling {
    /// Probability of asking about a piece of the side to move.
    pub own: f64,
    /// Probability of asking about a piece of the side not to move.
    pub opponent: f64,
}

impl Default for SquareSampling {
    fn default() -> Self {
        SquareSampling {
            own: 0.85,
            opponent: 0.07,
        }
    }
}

/// Generates one basic-understanding item per position, drawing the square as ChessArena did
/// (one uniform draw decides the case, then a uniform square of that case). The same `seed` and
/// positions give the same items. Positions that do not parse are reported, not fatal.
pub(crate) fn generate_basic_items(
    fens: &[String],
    sampling: SquareSampling,
    seed: u64,
) -> Loaded<BasicItem> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Loaded::default();
    for (i, fen) in fens.iter().enumerate() {
        let pos = match lenient_position(fen) {
            Ok(pos) => pos,
            Err(e) => {
                out.errors.push(RowError {
                    source: "positions".to_owned(),
                    line: i + 1,
                    message: e.to_string(),
                });
                continue;
            }
        };
        let draw: f64 = rng.random();
        let board = pos.board();
        let candidates: Vec<Square> = if draw <= sampling.own {
            board.by_color(pos.turn()).into_iter().collect()
        } else if draw <= sampling.own + sampling.opponent {
            board.by_color(!pos.turn()).into_iter().collect()
        } else {
            (!board.occupied()).into_iter().collect()
        };
        // Both kings are always on the board and at most 32 squares are occupied, so every case
        // has a candidate in a valid position.
        let sq = candidates[rng.random_range(0..candidates.len())];
        match BasicItem::from_position(fen, &sq.to_string()) {
            Ok(item) => out.rows.push(item),
            Err(e) => out.errors.push(RowError {
                source: "positions".to_owned(),
                line: i + 1,
                message: e.to_string(),
            }),
        }
    }
    out
}

/// One move-selection question (ChessArena's `move_choose_evaluation` schema).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveSelectionItem {
    /// The position.
    pub fen: String,
    /// Every legal move in UCI.
    pub legal_moves: Vec<String>,
    /// Stockfish's top moves (top 3 in ChessArena) in UCI.
    pub top_moves: Vec<String>,
    /// Every legal move with its Win% (0–100) as Stockfish evaluated it.
    pub move_with_winrate: Vec<(String, f64)>,
    /// ChessArena's system prompt, when present.
    pub system: Option<String>,
    /// The stored prompt variants (`prompt`, `prompt_pgn`, `prompt_without_legal_moves`...).
    pub prompts: BTreeMap<String, String>,
}

/// A Lichess puzzle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Puzzle {
    /// Lichess puzzle id.
    pub id: String,
    /// The position before the opponent's setup move.
    pub fen: String,
    /// The setup move (the opponent's) followed by the solution, in UCI.
    pub moves: Vec<String>,
    /// Puzzle rating.
    pub rating: i64,
    /// Rating deviation, when given.
    pub rating_deviation: Option<i64>,
    /// Popularity (−100..100), when given.
    pub popularity: Option<i64>,
    /// Number of plays, when given.
    pub nb_plays: Option<i64>,
    /// Theme tags.
    pub themes: Vec<String>,
    /// The source game, when given.
    pub game_url: Option<String>,
    /// Opening tags (empty when absent or `NaN`).
    pub opening_tags: Vec<String>,
}

/// Reads ChessArena's basic-understanding JSONL (`{system, prompt, ground_truth{piece,
/// legal_moves, current_turn, error}, fen}`). The square comes from a `square` field or the
/// prompt's `Position:` line; the FEN from `fen` or the prompt.
///
/// # Errors
///
/// [`EvalError::Io`] when the file cannot be read; bad rows are in [`Loaded::errors`].
pub(crate) fn read_basic_jsonl(path: impl AsRef<Path>) -> Result<Loaded<BasicItem>, EvalError> {
    let (text, source) = read(path.as_ref())?;
    Ok(parse_basic_jsonl(&text, &source))
}

/// [`read_basic_jsonl`] on text already in memory; `source` names it in errors.
pub(crate) fn parse_basic_jsonl(text: &str, source: &str) -> Loaded<BasicItem> {
    jsonl(text, source, basic_from_raw)
}

/// Reads ChessArena's move-selection JSONL.
///
/// # Errors
///
/// [`EvalError::Io`] when the file cannot be read; bad rows are in [`Loaded::errors`].
pub(crate) fn read_move_selection_jsonl(
    path: impl AsRef<Path>,
) -> Result<Loaded<MoveSelectionItem>, EvalError> {
    let (text, source) = read(path.as_ref())?;
    Ok(parse_move_selection_jsonl(&text, &source))
}

/// [`read_move_selection_jsonl`] on text already in memory.
pub(crate) fn parse_move_selection_jsonl(text: &str, source: &str) -> Loaded<MoveSelectionItem> {
    jsonl(text, source, move_selection_from_raw)
}

/// Reads puzzles in Lichess's schema as JSONL (ChessArena's `puzzles_by_rating` files). `Moves`
/// may be a list or a space-separated string.
///
/// # Errors
///
/// [`EvalError::Io`] when the file cannot be read; bad rows are in [`Loaded::errors`].
pub(crate) fn read_puzzles_jsonl(path: impl AsRef<Path>) -> Result<Loaded<Puzzle>, EvalError> {
    let (text, source) = read(path.as_ref())?;
    Ok(parse_puzzles_jsonl(&text, &source))
}

/// [`read_puzzles_jsonl`] on text already in memory.
pub(crate) fn parse_puzzles_jsonl(text: &str, source: &str) -> Loaded<Puzzle> {
    jsonl(text, source, puzzle_from_raw)
}

/// Reads every `puzzles_<lo>_<hi>.jsonl` in a folder (ChessArena's `lite/` layout), in order of
/// rating band.
///
/// # Errors
///
/// [`EvalError::Io`] when the folder or a file cannot be read.
pub(crate) fn read_puzzle_dir(dir: impl AsRef<Path>) -> Result<Loaded<Puzzle>, EvalError> {
    let dir = dir.as_ref();
    let io = |source| EvalError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut files: Vec<(u32, std::path::PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(lo) = name
            .strip_prefix("puzzles_")
            .and_then(|rest| rest.strip_suffix(".jsonl"))
            .and_then(|rest| rest.split('_').next())
            .and_then(|lo| lo.parse().ok())
        {
            files.push((lo, path));
        }
    }
    files.sort();
    let mut all = Loaded::default();
    for (_, path) in files {
        let mut one = read_puzzles_jsonl(&path)?;
        all.rows.append(&mut one.rows);
        all.errors.append(&mut one.errors);
    }
    Ok(all)
}

/// Reads the Lichess puzzle CSV export (`PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,
/// NbPlays,Themes,GameUrl,OpeningTags`). Columns are found by the header when there is one, and
/// taken in that order otherwise.
///
/// # Errors
///
/// [`EvalError::Io`] when the file cannot be read; bad rows are in [`Loaded::errors`].
pub(crate) fn read_puzzles_csv(path: impl AsRef<Path>) -> Result<Loaded<Puzzle>, EvalError> {
    let (text, source) = read(path.as_ref())?;
    Ok(parse_puzzles_csv(&text, &source))
}

const LICHESS_COLUMNS: [&str; 10] = [
    "PuzzleId",
    "FEN",
    "Moves",
    "Rating",
    "RatingDeviation",
    "Popularity",
    "NbPlays",
    "Themes",
    "GameUrl",
    "OpeningTags",
];

/// [`read_puzzles_csv`] on text already in memory.
pub(crate) fn parse_puzzles_csv(text: &str, source: &str) -> Loaded<Puzzle> {
    let mut out = Loaded::default();
    let mut columns: Vec<String> = LICHESS_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_csv(line);
        if i == 0 && fields.first().is_some_and(|f| f == "PuzzleId") {
            columns = fields;
            continue;
        }
        let mut object = serde_json::Map::new();
        for (name, value) in columns.iter().zip(fields) {
            let value = match name.as_str() {
                "Rating" | "RatingDeviation" | "Popularity" | "NbPlays" => value
                    .trim()
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(value)),
                _ if value.is_empty() => Value::Null,
                _ => Value::String(value),
            };
            object.insert(name.clone(), value);
        }
        let row = serde_json::from_value::<RawPuzzle>(Value::Object(object))
            .map_err(|e| e.to_string())
            .and_then(puzzle_from_raw);
        push(&mut out, row, source, i + 1);
    }
    out
}

/// Splits one CSV line, honouring double quotes (`""` inside quotes is a quote).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// The largest data set file read, 256 MiB (the largest reference data set is a few MB).
pub(crate) const MAX_DATASET_BYTES: u64 = 256 << 20;

fn read(path: &Path) -> Result<(String, String), EvalError> {
    let text = fs::File::open(path)
        .and_then(|file| read_to_string_limited(file, MAX_DATASET_BYTES))
        .map_err(|source| EvalError::Io {
            path: path.to_owned(),
            source,
        })?;
    Ok((text, path.display().to_string()))
}

fn push<T>(out: &mut Loaded<T>, row: Result<T, String>, source: &str, line: usize) {
    match row {
        Ok(row) => out.rows.push(row),
        Err(message) => out.errors.push(RowError {
            source: source.to_owned(),
            line,
            message,
        }),
    }
}

fn jsonl<R: DeserializeOwned, T>(
    text: &str,
    source: &str,
    convert: impl Fn(R) -> Result<T, String>,
) -> Loaded<T> {
    let mut out = Loaded::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row = parse_json_lenient::<R>(line)
            .map_err(|e| e.to_string())
            .and_then(&convert);
        push(&mut out, row, source, i + 1);
    }
    out
}

/// Parses JSON, reading Python's bare `NaN`, `Infinity` and `-Infinity` as `null`.
///
/// # Errors
///
/// The serde error when the text is not JSON even so.
pub(crate) fn parse_json_lenient<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(&replace_non_finite(text))
}

/// Replaces bare non-finite number tokens outside strings by `null`.
fn replace_non_finite(text: &str) -> std::borrow::Cow<'_, str> {
    if !(text.contains("NaN") || text.contains("Infinity")) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            match (c, escaped) {
                (_, true) => escaped = false,
                ('\\', false) => escaped = true,
                ('"', false) => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let token = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|t| rest.starts_with(t));
            let before_ok = !out
                .chars()
                .last()
                .is_some_and(|p| p.is_ascii_alphanumeric());
            if let Some(token) = token
                && before_ok
                && !rest[token.len()..]
                    .chars()
                    .next()
                    .is_some_and(|n| n.is_ascii_alphanumeric())
            {
                out.push_str("null");
                rest = &rest[token.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

static PROMPT_FEN: LazyLock<Regex> = LazyLock::new(|| {
    // ChessArena's `parse_fen_from_user_prompt`.
    Regex::new(r"Current board position in FEN notation:\s*([^\s]+(?:\s+[^\s]+){5})")
        .expect("the prompt FEN pattern is valid")
});
static PROMPT_SQUARE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Position:\s*([a-h][1-8])").expect("the prompt square pattern is valid")
});

/// The FEN in a ChessArena user prompt (`Current board position in FEN notation:` line).
pub(crate) fn fen_from_prompt(prompt: &str) -> Option<String> {
    PROMPT_FEN.captures(prompt).map(|c| c[1].trim().to_owned())
}

#[derive(Deserialize)]
struct RawBasic {
    fen: Option<String>,
    square: Option<String>,
    system: Option<String>,
    prompt: Option<String>,
    ground_truth: RawTruth,
}

#[derive(Deserialize)]
struct RawTruth {
    piece: Option<String>,
    #[serde(default)]
    legal_moves: Vec<String>,
}

fn basic_from_raw(raw: RawBasic) -> Result<BasicItem, String> {
    let prompt = raw.prompt.as_deref().unwrap_or("");
    let fen = raw
        .fen
        .or_else(|| fen_from_prompt(prompt))
        .ok_or("no `fen` field and no FEN in the prompt")?;
    let square = raw
        .square
        .or_else(|| PROMPT_SQUARE.captures(prompt).map(|c| c[1].to_owned()))
        .ok_or("no `square` field and no `Position:` in the prompt")?;
    let pos = lenient_position(&fen).map_err(|e| e.to_string())?;
    let sq: Square = square
        .trim()
        .parse()
        .map_err(|_| format!("invalid square `{square}`"))?;
    // The stored ground truth is kept as written (it is what ChessArena scored against); the
    // position only tells which of the three cases the item is.
    let kind = match pos.board().piece_at(sq) {
        None => SquareKind::Empty,
        Some(p) if p.color == pos.turn() => SquareKind::OwnPiece,
        Some(_) => SquareKind::OpponentPiece,
    };
    Ok(BasicItem {
        fen: fen.trim().to_owned(),
        square: sq.to_string(),
        piece: raw.ground_truth.piece,
        legal_moves: raw.ground_truth.legal_moves,
        kind,
        system: raw.system,
        prompt: raw.prompt,
    })
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MoveEntry {
    Move(String),
    // `[uci, win%]` pairs as in the game records; the Win% is not needed here.
    Scored(String, serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct RawMoveSelection {
    fen: String,
    legal_moves: LegalMoves,
    top_moves: Vec<MoveEntry>,
    move_with_winrate: Vec<(String, Option<f64>)>,
    system: Option<String>,
    #[serde(flatten)]
    rest: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum LegalMoves {
    List(Vec<String>),
    Joined(String),
}

fn move_selection_from_raw(raw: RawMoveSelection) -> Result<MoveSelectionItem, String> {
    let legal_moves = match raw.legal_moves {
        LegalMoves::List(list) => list,
        LegalMoves::Joined(text) => text.split(',').map(|m| m.trim().to_owned()).collect(),
    };
    if raw.move_with_winrate.is_empty() {
        return Err("`move_with_winrate` is empty: the move advantage rate needs it".to_owned());
    }
    let move_with_winrate = raw
        .move_with_winrate
        .into_iter()
        .map(|(m, w)| {
            w.map(|w| (m.clone(), w))
                .ok_or(format!("no Win% for `{m}`"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let top_moves = raw
        .top_moves
        .into_iter()
        .map(|e| match e {
            MoveEntry::Move(m) | MoveEntry::Scored(m, _) => m,
        })
        .collect();
    let prompts = raw
        .rest
        .into_iter()
        .filter_map(|(k, v)| match v {
            Value::String(s) if k.starts_with("prompt") => Some((k, s)),
            _ => None,
        })
        .collect();
    Ok(MoveSelectionItem {
        fen: raw.fen.trim().to_owned(),
        legal_moves,
        top_moves,
        move_with_winrate,
        system: raw.system,
        prompts,
    })
}

#[derive(Deserialize)]
struct RawPuzzle {
    #[serde(rename = "PuzzleId")]
    id: String,
    #[serde(rename = "FEN")]
    fen: String,
    #[serde(rename = "Moves")]
    moves: LegalMovesOrSpaced,
    #[serde(rename = "Rating")]
    rating: Option<Value>,
    #[serde(rename = "RatingDeviation")]
    rating_deviation: Option<Value>,
    #[serde(rename = "Popularity")]
    popularity: Option<Value>,
    #[serde(rename = "NbPlays")]
    nb_plays: Option<Value>,
    #[serde(rename = "Themes")]
    themes: Option<String>,
    #[serde(rename = "GameUrl")]
    game_url: Option<String>,
    #[serde(rename = "OpeningTags")]
    opening_tags: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum LegalMovesOrSpaced {
    List(Vec<String>),
    Spaced(String),
}

fn integer(v: Option<Value>, name: &str) -> Result<Option<i64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .map(Some)
            .ok_or(format!("`{name}` is not an integer: {n}")),
        Some(other) => Err(format!("`{name}` is not an integer: {other}")),
    }
}

fn words(text: Option<String>) -> Vec<String> {
    text.map(|t| t.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

fn puzzle_from_raw(raw: RawPuzzle) -> Result<Puzzle, String> {
    let moves: Vec<String> = match raw.moves {
        LegalMovesOrSpaced::List(list) => list,
        LegalMovesOrSpaced::Spaced(text) => text.split_whitespace().map(str::to_owned).collect(),
    };
    if moves.len() < 2 {
        return Err(format!(
            "puzzle `{}` needs the setup move and at least one solution move, has {}",
            raw.id,
            moves.len()
        ));
    }
    let rating =
        integer(raw.rating, "Rating")?.ok_or(format!("puzzle `{}` has no rating", raw.id))?;
    Ok(Puzzle {
        id: raw.id,
        fen: raw.fen.trim().to_owned(),
        moves,
        rating,
        rating_deviation: integer(raw.rating_deviation, "RatingDeviation")?,
        popularity: integer(raw.popularity, "Popularity")?,
        nb_plays: integer(raw.nb_plays, "NbPlays")?,
        themes: words(raw.themes),
        game_url: raw.game_url.filter(|u| !u.is_empty()),
        opening_tags: words(raw.opening_tags),
    })
}

#[cfg(test)]
mod tests;
