//! Opening books: EPD files (one position a line), PGN files (a start position plus moves per
//! game) and FENs given inline. Every position and move is validated when the book is read, so a
//! bad book fails before the first game with `file:line` and the bad text, not in the middle of a
//! tournament.

use std::{
    fs,
    io::{self, BufRead, Seek},
    ops::ControlFlow,
    path::Path,
};

use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use shakmaty::{Position, san::SanError};

use crate::lines::{BoundedLines, LineError};

use super::{
    BoardError,
    game::{
        Variant, chess960_fen, chess960_position, fen_of as normalized_fen, playable_position,
        playable_position_in, uci_of,
    },
};

/// One opening: where a game starts and the moves both sides play before the players take over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// The start FEN; `None` for the standard initial position.
    pub fen: Option<String>,
    /// UCI moves to play from the start position.
    pub moves: Vec<String>,
    /// Where the opening was read, as `file:line` (`chess960 518` for a Chess960 start).
    pub source: String,
    /// The rules its games are played under: Chess960 for a Chess960 start, or for a game of a
    /// PGN book tagged `[Variant "Chess960"]`.
    pub variant: Variant,
}

impl Opening {
    /// The Chess960 start position `number` (Scharnagl's numbering, 518 is the standard
    /// position) as an opening without moves.
    ///
    /// # Errors
    ///
    /// [`BoardError::Chess960Number`] for a number above 959.
    pub fn chess960(number: u32) -> Result<Opening, BoardError> {
        Ok(Opening {
            fen: Some(chess960_fen(number)?),
            moves: Vec::new(),
            source: format!("chess960 {number}"),
            variant: Variant::Chess960,
        })
    }
}

/// The largest book file read, 256 MiB: ten times the largest books engine testers use (the
/// `UHO_XXL` EPD files are about 25 MB), and still a size every machine holds in memory.
pub(crate) const MAX_BOOK_BYTES: u64 = 256 << 20;

/// The longest line of an EPD book or inline FEN, 4 KiB (a FEN is under 100 bytes; the rest is
/// room for EPD operations).
pub(crate) const MAX_EPD_LINE_BYTES: usize = 4 << 10;

/// The largest game of a PGN book, 1 MiB (a long engine game with an evaluation comment on every
/// move is under 100 KB); also the longest line of one.
pub(crate) const MAX_PGN_GAME_BYTES: usize = 1 << 20;

/// The lines of a book, read through a buffer: no line over `max_line` and no book over
/// [`MAX_BOOK_BYTES`] is held in memory.
fn book_lines(
    input: impl BufRead,
    path: &Path,
    max_line: usize,
) -> impl Iterator<Item = Result<(usize, String), BoardError>> {
    BoundedLines::new(input, max_line, MAX_BOOK_BYTES).map(move |item| {
        item.map_err(|e| match e {
            LineError::Io(source) => BoardError::Io {
                path: path.to_path_buf(),
                source,
            },
            LineError::TooLong { line, max } => book_error(
                path,
                line,
                format!("the line is longer than the limit of {max} bytes"),
            ),
            LineError::TooLarge { .. } => BoardError::BookTooLarge {
                path: path.to_path_buf(),
            },
        })
    })
}

/// Opens a book file for reading through a buffer.
fn open_book(path: &Path) -> Result<io::BufReader<fs::File>, BoardError> {
    fs::File::open(path)
        .map(io::BufReader::new)
        .map_err(|source| BoardError::Io {
            path: path.to_path_buf(),
            source,
        })
}

fn book_error(path: &Path, line: usize, message: String) -> BoardError {
    BoardError::Book {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Reads an EPD file: a position per line (four FEN fields, then either the two FEN counters or
/// EPD operations such as `hmvc 3; fmvn 12; id "x";`). Blank lines and lines starting with `#`
/// are skipped; `hmvc` and `fmvn` set the counters, which default to `0 1`.
///
/// # Errors
///
/// [`BoardError::Io`] when the file cannot be read, [`BoardError::Book`] naming the line of the
/// first invalid position.
pub fn read_epd(path: impl AsRef<Path>) -> Result<Vec<Opening>, BoardError> {
    let path = path.as_ref();
    epd_openings_from(open_book(path)?, path)
}

/// Reads EPD openings from `input` as [`read_epd`] reads a file; `path` names it in errors and
/// in each opening's source.
fn epd_openings_from(input: impl BufRead, path: &Path) -> Result<Vec<Opening>, BoardError> {
    let mut openings = Vec::new();
    // Line by line: memory holds one line and the openings read, never the file.
    for item in book_lines(input, path, MAX_EPD_LINE_BYTES) {
        let (number, line) = item?;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fen = epd_to_fen(trimmed).map_err(|message| book_error(path, number, message))?;
        openings.push(Opening {
            fen: Some(fen),
            moves: Vec::new(),
            source: format!("{}:{number}", path.display()),
            variant: Variant::Standard,
        });
    }
    Ok(openings)
}

/// The opening books built into arena, by name: the files under the repository's `books/`
/// (see `books/PROVENANCE.md`), compiled into the binary so that a script names one
/// (`openings = { book = "2moves_v1" }`) wherever it is run from.
const BUILT_IN_BOOKS: &[(&str, &str, &[u8])] = &[
    (
        "2moves_v1",
        "books/2moves_v1.epd",
        include_bytes!(concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/books/2moves_v1.epd"
        )),
    ),
    (
        "8moves_v3",
        "books/8moves_v3.pgn",
        include_bytes!(concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/books/8moves_v3.pgn"
        )),
    ),
];

/// The names of the built-in opening books (`2moves_v1`, `8moves_v3`).
pub(crate) fn built_in_books() -> Vec<&'static str> {
    BUILT_IN_BOOKS.iter().map(|(name, _, _)| *name).collect()
}

/// The built-in book of that name (see [`built_in_books`]), read as its file would be; each
/// opening's source names the book's file in the repository (`books/2moves_v1.epd:12`).
///
/// # Errors
///
/// [`BoardError::UnknownBook`] for a name that is not a built-in book.
pub fn read_built_in(name: &str) -> Result<Vec<Opening>, BoardError> {
    let Some((_, file, bytes)) = BUILT_IN_BOOKS.iter().find(|(n, _, _)| *n == name) else {
        let known = built_in_books();
        let hint = crate::script::did_you_mean(name, &known)
            .map(|m| format!("; did you mean \"{m}\"?"))
            .unwrap_or_default();
        return Err(BoardError::UnknownBook {
            name: name.to_string(),
            known: known.join(", "),
            hint,
        });
    };
    let path = Path::new(file);
    if file.ends_with(".pgn") {
        pgn_openings_from(*bytes, path)
    } else {
        epd_openings_from(*bytes, path)
    }
}

/// Reads a book file named relative to `dir` (a script's folder): `.pgn` as PGN, anything else
/// as EPD. A file that is not there gets the folder it was looked for in and the built-in books
/// (with the one it most likely meant), as a script copied from the book's examples names
/// `books/2moves_v1.epd` from a folder without it.
///
/// # Errors
///
/// [`BoardError::BookNotFound`] for a file that is not there, else as [`read_epd`] and
/// [`read_pgn_openings`].
pub fn read_book_file(dir: &Path, file: &str) -> Result<Vec<Opening>, BoardError> {
    let path = dir.join(file);
    if !path.exists() {
        let stem = Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let known = built_in_books();
        let meant = if known.contains(&stem.as_str()) {
            Some(stem.as_str())
        } else {
            crate::script::did_you_mean(&stem, &known)
        };
        let folder = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        return Err(BoardError::BookNotFound {
            file: file.to_string(),
            folder,
            known: known.join(", "),
            hint: meant
                .map(|m| format!("; did you mean `book = \"{m}\"`?"))
                .unwrap_or_default(),
        });
    }
    let is_pgn = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pgn"));
    if is_pgn {
        read_pgn_openings(&path)
    } else {
        read_epd(&path)
    }
}

/// Validates one FEN (or EPD line) given inline, for example in a tournament script; `source`
/// names where it came from (`file:line`) for the error message.
///
/// # Errors
///
/// [`BoardError::Opening`] naming `source` and the bad text.
pub fn parse_opening_fen(fen: &str, source: &str) -> Result<Opening, BoardError> {
    if fen.len() > MAX_EPD_LINE_BYTES {
        return Err(BoardError::Opening {
            source_name: source.to_owned(),
            message: format!(
                "the FEN is {} bytes long, over the limit of {MAX_EPD_LINE_BYTES}",
                fen.len()
            ),
        });
    }
    let normalized = epd_to_fen(fen.trim()).map_err(|message| BoardError::Opening {
        source_name: source.to_owned(),
        // The normalized text may differ from what the user wrote: quote theirs.
        message: format!("`{}`: {message}", fen.trim()),
    })?;
    Ok(Opening {
        fen: Some(normalized),
        moves: Vec::new(),
        source: source.to_owned(),
        variant: Variant::Standard,
    })
}

/// Turns an EPD or FEN line into a validated, normalized FEN.
fn epd_to_fen(line: &str) -> Result<String, String> {
    let (fields, rest) = split_fields(line, 4);
    if fields.len() < 4 {
        return Err(format!(
            "expected at least 4 fields (board, side, castling, en passant) in `{line}`"
        ));
    }
    let mut counters = ("0".to_owned(), "1".to_owned());
    let (next, _operations) = split_fields(rest, 2);
    if next.len() == 2 && next.iter().all(|f| f.bytes().all(|b| b.is_ascii_digit())) {
        // A full FEN; anything after the counters would be operations, which openings ignore.
        counters = (next[0].to_owned(), next[1].to_owned());
    } else {
        for op in split_operations(rest) {
            let (opcode, operand) = op.split_once(char::is_whitespace).unwrap_or((op, ""));
            let operand = operand.trim();
            let is_count = !operand.is_empty() && operand.bytes().all(|b| b.is_ascii_digit());
            match opcode {
                "hmvc" | "fmvn" if !is_count => {
                    return Err(format!("`{opcode}` needs a number, found `{operand}`"));
                }
                "hmvc" => counters.0 = operand.to_owned(),
                "fmvn" => counters.1 = operand.to_owned(),
                _ => {}
            }
        }
    }
    let fen = format!("{} {} {}", fields.join(" "), counters.0, counters.1);
    let pos = playable_position(&fen).map_err(|e| e.to_string())?;
    Ok(normalized_fen(&pos))
}

/// Splits off the first `n` whitespace-separated fields and returns them with the rest.
fn split_fields(text: &str, n: usize) -> (Vec<&str>, &str) {
    let mut fields = Vec::with_capacity(n);
    let mut rest = text.trim_start();
    while fields.len() < n && !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        fields.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    (fields, rest)
}

/// Splits EPD operations on `;`, except inside quoted operands.
fn split_operations(text: &str) -> Vec<&str> {
    let mut ops = Vec::new();
    let mut in_quotes = false;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            ';' if !in_quotes => {
                ops.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    ops.push(text[start..].trim());
    ops.retain(|op| !op.is_empty());
    ops
}

/// The tags of a PGN game that an opening needs, each with its index among the game's tags (an
/// error names the tag's line, found again from the index).
#[derive(Default)]
struct BookTags {
    /// How many tags were read so far.
    count: usize,
    /// The `FEN` tag's value and index.
    fen: Option<(String, usize)>,
    /// The `Variant` tag's value and index.
    variant: Option<(String, usize)>,
}

/// A PGN game's mainline while it is being replayed.
struct BookLine {
    /// Where the game started.
    pos: shakmaty::Chess,
    /// The start FEN the opening records, if any.
    fen: Option<String>,
    /// The rules of the game.
    variant: Variant,
    /// The mainline in UCI.
    moves: Vec<String>,
    /// Variations opened (and skipped by pgn-reader) whose `)` has not been seen yet.
    open_variations: usize,
}

/// Where in a game a fault lies, to name its line.
enum FaultAt {
    /// Just before the reader's position when the visitor stopped (a move, a `)`).
    Here,
    /// The game's tag with this index.
    Tag(usize),
    /// The game's first line.
    Start,
}

/// Why a game of a book is refused.
struct Fault {
    at: FaultAt,
    message: String,
}

/// Replays a book game's mainline through pgn-reader: tags give the start, variations and
/// comments are skipped, each SAN is checked against the position.
struct BookVisitor;

impl Visitor for BookVisitor {
    type Tags = BookTags;
    type Movetext = BookLine;
    type Output = Result<(Option<String>, Vec<String>, Variant), Fault>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(BookTags::default())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        let index = tags.count;
        tags.count += 1;
        let slot = match name {
            b"FEN" => &mut tags.fen,
            b"Variant" => &mut tags.variant,
            _ => return ControlFlow::Continue(()),
        };
        match value.decode_utf8() {
            Ok(text) => {
                *slot = Some((text.into_owned(), index));
                ControlFlow::Continue(())
            }
            Err(_) => ControlFlow::Break(Err(Fault {
                at: FaultAt::Tag(index),
                message: format!(
                    "the `{}` tag is not valid UTF-8",
                    String::from_utf8_lossy(name)
                ),
            })),
        }
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let start = || -> Result<BookLine, Fault> {
            let variant = match &tags.variant {
                None => Variant::Standard,
                Some((tag, index)) => Variant::from_pgn_tag(Some(tag)).ok_or_else(|| Fault {
                    at: FaultAt::Tag(*index),
                    message: format!(
                        "variant `{tag}` is not played here (only standard chess and Chess960)"
                    ),
                })?,
            };
            let pos = match (&tags.fen, variant) {
                (Some((fen, index)), _) => {
                    playable_position_in(variant, fen).map_err(|e| Fault {
                        at: FaultAt::Tag(*index),
                        message: e.to_string(),
                    })?
                }
                (None, Variant::Standard) => shakmaty::Chess::default(),
                (None, Variant::Chess960) => chess960_position(518).map_err(|e| Fault {
                    at: FaultAt::Here,
                    message: e.to_string(),
                })?,
            };
            // A Chess960 game always names its start, even the standard position's.
            let fen = (tags.fen.is_some() || variant.is_chess960()).then(|| normalized_fen(&pos));
            Ok(BookLine {
                pos,
                fen,
                variant,
                moves: Vec::new(),
                open_variations: 0,
            })
        };
        match start() {
            Ok(line) => ControlFlow::Continue(line),
            Err(fault) => ControlFlow::Break(Err(fault)),
        }
    }

    fn san(&mut self, line: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match san_plus.san.to_move(&line.pos) {
            Ok(mv) => {
                line.moves.push(uci_of(&line.pos, &mv));
                line.pos.play_unchecked(mv);
                ControlFlow::Continue(())
            }
            Err(e) => {
                let what = match e {
                    SanError::IllegalSan => "illegal",
                    SanError::AmbiguousSan => "ambiguous",
                };
                ControlFlow::Break(Err(Fault {
                    at: FaultAt::Here,
                    message: format!(
                        "{what} move `{san_plus}` in position `{}`",
                        normalized_fen(&line.pos)
                    ),
                }))
            }
        }
    }

    fn begin_variation(&mut self, line: &mut Self::Movetext) -> ControlFlow<Self::Output, Skip> {
        // pgn-reader skips the variation up to its `)` and then reports that `)`.
        line.open_variations += 1;
        ControlFlow::Continue(Skip(true))
    }

    fn end_variation(&mut self, line: &mut Self::Movetext) -> ControlFlow<Self::Output> {
        match line.open_variations.checked_sub(1) {
            Some(open) => {
                line.open_variations = open;
                ControlFlow::Continue(())
            }
            None => ControlFlow::Break(Err(Fault {
                at: FaultAt::Here,
                message: "unmatched `)`".to_owned(),
            })),
        }
    }

    fn end_game(&mut self, line: Self::Movetext) -> Self::Output {
        if line.open_variations > 0 {
            return Err(Fault {
                at: FaultAt::Start,
                message: "unclosed variation `(` in the game that starts here".to_owned(),
            });
        }
        Ok((line.fen, line.moves, line.variant))
    }
}

/// Stops at the tag with a given index, to find where the next one starts.
struct TagFinder {
    stop_after: usize,
}

impl Visitor for TagFinder {
    type Tags = usize;
    type Movetext = ();
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(0)
    }

    fn tag(&mut self, seen: &mut usize, _name: &[u8], _value: RawTag<'_>) -> ControlFlow<()> {
        if *seen == self.stop_after {
            return ControlFlow::Break(());
        }
        *seen += 1;
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _tags: usize) -> ControlFlow<Self::Output, Self::Movetext> {
        ControlFlow::Break(())
    }

    fn end_game(&mut self, (): ()) {}
}

/// The 1-based line of the last text before byte `offset` (the start of the text for none).
fn line_before(text: &[u8], offset: usize) -> usize {
    let before = text[..offset.min(text.len())].trim_ascii_end();
    1 + memchr::memchr_iter(b'\n', before).count()
}

/// The 1-based line of byte `offset` (for errors: it counts from the start of the text).
fn line_at(text: &[u8], offset: usize) -> usize {
    1 + memchr::memchr_iter(b'\n', &text[..offset.min(text.len())]).count()
}

/// The offset of the game's tag `index`, for a game starting at byte `start`: a second reading
/// that stops at the tag before it (pgn-reader skips the space after a tag, so that is where the
/// next one starts).
fn tag_offset(text: &[u8], start: usize, index: usize) -> usize {
    let Some(before) = index.checked_sub(1) else {
        return start;
    };
    let mut reader = Reader::new(io::Cursor::new(&text[start..]));
    let _ = reader.read_game(&mut TagFinder { stop_after: before });
    reader
        .stream_position()
        .map_or(start, |p| start + usize::try_from(p).unwrap_or(0))
}

/// Reads a PGN file of openings: for each game, the `FEN` and `Variant` tags (if any) and the
/// mainline moves.
///
/// # Errors
///
/// [`BoardError::Io`] when the file cannot be read, [`BoardError::Book`] naming the line and the
/// text of the first invalid tag, FEN or move.
pub fn read_pgn_openings(path: impl AsRef<Path>) -> Result<Vec<Opening>, BoardError> {
    let path = path.as_ref();
    pgn_openings_from(open_book(path)?, path)
}

/// Reads PGN text as [`read_pgn_openings`] reads a file (for PGN embedded in another format, such
/// as LLM Chess's game logs); `path` only names the text in errors, whose lines count from the
/// text's first line.
///
/// The text is read by pgn-reader, the reader of every PGN in arena: comments, variations, NAGs,
/// annotation marks, move numbers, results and `%` escape lines are skipped, and so is text that
/// is no move at all (as pgn-reader skips it); a move it hid shows up as the next move being
/// illegal.
///
/// # Errors
///
/// [`BoardError::Book`] naming the line and the text of the first invalid tag, FEN or move, or
/// the line of a game that does not read as PGN (an unclosed tag or comment).
pub fn parse_pgn_openings(text: &str, path: &Path) -> Result<Vec<Opening>, BoardError> {
    pgn_openings_from(text.as_bytes(), path)
}

/// Where a PGN book is split into games, read a line at a time: a tag line (`[` first) outside
/// a comment after a game's movetext starts the next game. Only the boundaries are found here;
/// each game is read by pgn-reader.
#[derive(Default)]
struct GameSplitter {
    in_comment: bool,
    seen_movetext: bool,
}

impl GameSplitter {
    /// Whether `line` starts a new game; updates the state with the line.
    fn starts_game(&mut self, line: &str) -> bool {
        let text = line.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if !self.in_comment && text.starts_with('[') {
            return std::mem::take(&mut self.seen_movetext);
        }
        if !self.in_comment && text.starts_with('%') {
            return false;
        }
        for c in text.chars() {
            if self.in_comment {
                self.in_comment = c != '}';
            } else if c == '{' {
                self.in_comment = true;
            } else if c == ';' {
                break;
            } else if !c.is_whitespace() {
                self.seen_movetext = true;
            }
        }
        false
    }
}

/// Reads PGN openings from `input` a game at a time (see [`read_pgn_openings`]): memory holds one
/// game, never the book; a game over [`MAX_PGN_GAME_BYTES`] is refused at its first line.
fn pgn_openings_from(input: impl BufRead, path: &Path) -> Result<Vec<Opening>, BoardError> {
    let mut openings = Vec::new();
    let mut splitter = GameSplitter::default();
    let (mut game, mut game_line) = (String::new(), 1);
    for item in book_lines(input, path, MAX_PGN_GAME_BYTES) {
        let (number, line) = item?;
        if splitter.starts_game(&line) && !game.is_empty() {
            openings.extend(parse_pgn_games(&game, path, game_line)?);
            game.clear();
        }
        if game.is_empty() {
            game_line = number;
        }
        game.push_str(&line);
        game.push('\n');
        if game.len() > MAX_PGN_GAME_BYTES {
            return Err(book_error(
                path,
                game_line,
                format!(
                    "the game that starts here is longer than the limit of {MAX_PGN_GAME_BYTES} bytes (an unclosed comment?)"
                ),
            ));
        }
    }
    if !game.is_empty() {
        openings.extend(parse_pgn_games(&game, path, game_line)?);
    }
    Ok(openings)
}

/// Reads the games of `text` (usually one) by pgn-reader; `first_line` is the line of the book
/// the text starts at.
fn parse_pgn_games(text: &str, path: &Path, first_line: usize) -> Result<Vec<Opening>, BoardError> {
    let bytes = text.as_bytes();
    // Lines of the text count from 1; the book's from `first_line`.
    let shift = first_line - 1;
    let line_before = |bytes: &[u8], offset| line_before(bytes, offset) + shift;
    let line_at = |bytes: &[u8], offset| line_at(bytes, offset) + shift;
    let mut reader = Reader::new(io::Cursor::new(bytes));
    let mut openings = Vec::new();
    // Lines are counted from the previous game's start, so a large book is scanned once.
    let (mut counted_to, mut counted_line) = (0, first_line);
    let position = |reader: &mut Reader<io::Cursor<&[u8]>>| {
        reader
            .stream_position()
            .map_or(bytes.len(), |p| usize::try_from(p).unwrap_or(bytes.len()))
    };
    loop {
        let more = reader.has_more().map_err(|e| {
            book_error(
                path,
                line_before(bytes, position(&mut reader)),
                e.to_string(),
            )
        })?;
        if !more {
            break;
        }
        let start = position(&mut reader).max(counted_to);
        let game_line =
            counted_line + memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count();
        (counted_to, counted_line) = (start, game_line);
        let (fen, moves, variant) = match reader.read_game(&mut BookVisitor) {
            Ok(None) => break,
            Ok(Some(Ok(game))) => game,
            Ok(Some(Err(fault))) => {
                let line = match fault.at {
                    FaultAt::Here => line_before(bytes, position(&mut reader)),
                    FaultAt::Tag(index) => line_at(bytes, tag_offset(bytes, start, index)),
                    FaultAt::Start => game_line,
                };
                return Err(book_error(path, line, fault.message));
            }
            Err(e) => {
                // pgn-reader's own faults: an unterminated comment or tag.
                let message = match e.to_string().as_str() {
                    "unterminated comment" => {
                        "unclosed comment `{` in the game that starts here".to_owned()
                    }
                    "unterminated tag" => {
                        "unclosed tag `[` in the game that starts here".to_owned()
                    }
                    other => format!("{other} in the game that starts here"),
                };
                return Err(book_error(path, game_line, message));
            }
        };
        openings.push(Opening {
            fen,
            moves,
            source: format!("{}:{game_line}", path.display()),
            variant,
        });
    }
    Ok(openings)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::board::Game;

    fn fixture(name: &str) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("tests/fixtures")
            .join(name)
    }

    fn reference_data() -> Option<PathBuf> {
        crate::test_parts::reference_data("board::book tests")
    }

    /// Plays an opening into a game, as the tournament loop will.
    fn replay(opening: &Opening) -> Game {
        let mut game = Game::new_in(opening.variant, opening.fen.as_deref(), 0)
            .expect("book positions are validated");
        for m in &opening.moves {
            game.play_uci(m).expect("book moves are validated");
        }
        game
    }

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        fs::write(&path, text).expect("write fixture");
        path
    }

    #[test]
    fn epd_lines_with_counters_operations_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "book.epd",
            "# a comment\n\
             rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3\n\
             \n\
             r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - hmvc 2; fmvn 3; id \"a;b\";\n\
             4k3/8/8/8/8/8/4P3/4K3 w - - 5 40\n",
        );
        let openings = read_epd(&path).unwrap();
        let fens: Vec<&str> = openings.iter().map(|o| o.fen.as_deref().unwrap()).collect();
        assert_eq!(
            fens,
            [
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
                "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
                "4k3/8/8/8/8/8/4P3/4K3 w - - 5 40",
            ]
        );
        assert_eq!(openings[1].source, format!("{}:4", path.display()));
        assert!(openings.iter().all(|o| o.moves.is_empty()));
    }

    #[test]
    fn epd_errors_name_file_line_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "bad.epd", "8/8/8/8/8/8/8/8 w - -\n");
        let err = read_epd(&path).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "{}:1: invalid FEN `8/8/8/8/8/8/8/8 w - - 0 1`",
                path.display()
            )),
            "{text}"
        );

        let path = write(
            &dir,
            "short.epd",
            "\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w\n",
        );
        let err = read_epd(&path).unwrap_err();
        assert!(matches!(err, BoardError::Book { line: 3, .. }), "{err}");

        let path = write(&dir, "ops.epd", "4k3/8/8/8/8/8/4P3/4K3 w - - hmvc x;\n");
        assert!(
            read_epd(&path)
                .unwrap_err()
                .to_string()
                .contains("`hmvc` needs a number")
        );

        let long = format!("4k3/8/8/8/8/8/4P3/4K3 w - - id \"{}\";\n", "x".repeat(5000));
        let path = write(&dir, "long.epd", &format!("# first\n{long}"));
        let err = read_epd(&path).unwrap_err().to_string();
        assert!(
            err.contains(":2: the line is longer than the limit of 4096 bytes"),
            "{err}"
        );

        let err = read_epd(dir.path().join("missing.epd")).unwrap_err();
        assert!(matches!(err, BoardError::Io { .. }));
        assert!(
            err.to_string().starts_with("failed to read opening book"),
            "{err}"
        );
    }

    #[test]
    fn inline_fens() {
        let opening = parse_opening_fen(" 4k3/8/8/8/8/8/4P3/4K3 b - - ", "t.lua:7").unwrap();
        assert_eq!(
            opening.fen.as_deref(),
            Some("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1")
        );
        assert_eq!(opening.source, "t.lua:7");
        let err = parse_opening_fen("rnbqkbnr/pppppppp w", "t.lua:9").unwrap_err();
        assert!(err.to_string().starts_with("t.lua:9: "), "{err}");
    }

    #[test]
    fn uho_reference_book() {
        let Some(dir) = reference_data() else { return };
        let openings = read_epd(dir.join("fastchess-reference/uho10.epd")).unwrap();
        assert_eq!(openings.len(), 10);
        assert_eq!(
            openings[0].fen.as_deref(),
            Some("r1bq1rk1/ppp2ppp/5n2/2bp4/2NPP3/2P5/PP3PPP/RNBQK2R w KQ - 0 9")
        );
        assert!(openings[9].source.ends_with("uho10.epd:10"));
        for opening in &openings {
            replay(opening);
        }
    }

    #[test]
    fn pgn_book_from_8moves() {
        let openings = read_pgn_openings(fixture("8moves_v3_head.pgn")).unwrap();
        assert_eq!(openings.len(), 4);
        let first = &openings[0];
        assert_eq!(first.fen, None);
        assert!(
            first.source.ends_with("8moves_v3_head.pgn:1"),
            "{}",
            first.source
        );
        assert_eq!(first.moves.len(), 16);
        assert_eq!(&first.moves[..4], ["g1f3", "d7d5", "g2g3", "c7c6"]);
        assert!(
            openings[1].source.ends_with(":13"),
            "{}",
            openings[1].source
        );
        assert!(openings.iter().all(|o| o.moves.len() == 16));
        let game = replay(&openings[3]);
        // 7. O-O-O and 8... O-O in the fourth game.
        assert_eq!(game.san_moves()[12], "O-O-O");
        assert_eq!(game.uci_moves()[12], "e1c1");
        assert_eq!(game.uci_moves()[15], "e8g8");
    }

    #[test]
    fn pgn_book_skips_annotations() {
        let openings = read_pgn_openings(fixture("openings_annotated.pgn")).unwrap();
        assert_eq!(openings.len(), 2);
        assert_eq!(
            openings[0].moves,
            [
                "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1"
            ]
        );
        assert!(openings[0].source.ends_with(":2"), "{}", openings[0].source);
        assert_eq!(
            openings[1].fen.as_deref(),
            Some("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 2")
        );
        assert_eq!(openings[1].moves, ["g8f6", "b1c3", "f8b4"]);
    }

    #[test]
    fn pgn_book_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "bad.pgn", "[Event \"x\"]\n\n1. e4 e5\n2. Ke3 *\n");
        let err = read_pgn_openings(&path).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("{}:4: illegal move `Ke3`", path.display())),
            "{text}"
        );

        let path = write(&dir, "fen.pgn", "[FEN \"8/8/8/8 w - - 0 1\"]\n\n*\n");
        assert!(matches!(
            read_pgn_openings(&path),
            Err(BoardError::Book { line: 1, .. })
        ));

        let path = write(&dir, "comment.pgn", "1. e4 {never closed\n\n");
        assert!(
            read_pgn_openings(&path)
                .unwrap_err()
                .to_string()
                .contains(":1: unclosed comment")
        );

        // Text that is no move is skipped, as pgn-reader skips it; the move it hid shows up as
        // the next move being illegal.
        let path = write(&dir, "junk.pgn", "1. e4 e5\n2. Xyz Nc6 *\n");
        assert!(
            read_pgn_openings(&path)
                .unwrap_err()
                .to_string()
                .contains(":2: illegal move `Nc6`")
        );

        let path = write(&dir, "paren.pgn", "1. e4 e5 ) 2. Nf3 *\n");
        assert!(
            read_pgn_openings(&path)
                .unwrap_err()
                .to_string()
                .contains(":1: unmatched `)`")
        );

        let path = write(&dir, "open.pgn", "\n1. e4 e5 (1... c5 2. Nf3 *\n");
        assert!(
            read_pgn_openings(&path)
                .unwrap_err()
                .to_string()
                .contains(":2: unclosed variation `(`")
        );

        let path = write(
            &dir,
            "variant.pgn",
            "[Event \"x\"]\n% escape\n[Variant \"Atomic\"]\n\n*\n",
        );
        assert!(matches!(
            read_pgn_openings(&path),
            Err(BoardError::Book { line: 3, .. })
        ));
    }

    /// A book is read a game at a time: a game over the limit is refused at its first line (an
    /// unclosed comment swallows the rest of the book, so it is named too), the games before it
    /// having been read.
    #[test]
    fn a_pgn_game_over_the_limit_is_refused_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let comment = format!("{{{}}}\n", "x".repeat(1000));
        let big = comment.repeat(MAX_PGN_GAME_BYTES / 1000);
        let text = format!("[Event \"a\"]\n\n1. e4 *\n\n[Event \"b\"]\n\n1. d4 {big}*\n");
        let err = read_pgn_openings(write(&dir, "big.pgn", &text)).unwrap_err();
        assert!(matches!(err, BoardError::Book { line: 5, .. }), "{err}");
        assert!(
            err.to_string()
                .contains("longer than the limit of 1048576 bytes"),
            "{err}"
        );

        let text = "1. e4 {never closed\n\n[Event \"b\"]\n\n1. d4 *\n";
        let err = read_pgn_openings(write(&dir, "open.pgn", text)).unwrap_err();
        assert!(err.to_string().contains(":1: unclosed comment"), "{err}");

        // Games split at their tags: lines count through the book, and a `[` in a comment or
        // after `;` splits nothing.
        let text = "[Event \"a\"]\n1. e4 { a\n[not a tag] }\n*\n\n[Event \"b\"]\n1. d4 ; {\n[Event \"c\"]\n\n1. c4 d5 2. Ke3 *\n";
        let err = read_pgn_openings(write(&dir, "split.pgn", text)).unwrap_err();
        assert!(err.to_string().contains(":10: illegal move `Ke3`"), "{err}");
        let good = text.replace("Ke3", "Nc3");
        let openings = read_pgn_openings(write(&dir, "split.pgn", &good)).unwrap();
        let sources: Vec<&str> = openings
            .iter()
            .map(|o| o.source.rsplit(':').next().unwrap())
            .collect();
        assert_eq!(sources, ["1", "6", "8"]);
        assert_eq!(openings[2].moves, ["c2c4", "d7d5", "b1c3"]);
    }

    /// fastchess's own output: full games with FEN tags and engine comments on every move.
    #[test]
    fn fastchess_games_read_as_openings() {
        let Some(dir) = reference_data() else { return };
        let openings = read_pgn_openings(dir.join("fastchess-reference/games.pgn")).unwrap();
        assert_eq!(openings.len(), 20);
        let book = read_epd(dir.join("fastchess-reference/uho10.epd")).unwrap();
        for (i, opening) in openings.iter().enumerate() {
            assert_eq!(opening.fen, book[i / 2].fen, "game {i}");
            assert!(!opening.moves.is_empty());
            replay(opening);
        }
    }
}
