//! Finding the move in a language model's free-text reply.
//!
//! Two readers: ChessArena's, reproduced exactly in [`super::chessarena`]
//! ([`ExtractRule::ChessArena`]), and arena's own search ([`ExtractRule::Search`]), described
//! here; [`ExtractRule::tolerant`] is its most forgiving setting.
//!
//! A reply is searched in *regions*: fenced blocks (```` ``` ... ``` ````, an optional language tag
//! such as ```` ```uci ```` tolerated), `<move>...</move>` tags (the closing tag may be missing,
//! because llama.cpp strips stop strings), or, as a last resort, the bare text. A fenced block or a
//! tag holds one move and nothing else (surrounding whitespace, quotes, `**` bold markers, a move
//! number like `12...` and trailing `.`, `!` or `?` are forgiven); prose inside a block makes the
//! block unparseable rather than being searched, which keeps a block holding a drawn board or a
//! PGN from yielding a random move.
//!
//! Reasoning wrapped in `<think>...</think>` is removed before the search: a move considered while
//! thinking is not the answer. A reply with only `</think>` (templates that open the block in the
//! prompt) keeps the text after it; a reply with an unclosed `<think>` (cut off while thinking)
//! keeps the text before it.
//!
//! Bare-text scanning ([`Scope::Anywhere`]) splits the text into tokens of letters, digits and
//! `=+#-`, so a move is never found inside a longer word (`ba1`, `e2e4x`) or a hyphenated range
//! (`e2-e4` is not recognised). Prose is full of square names, which look exactly like SAN pawn
//! pushes (`the knight on f3`); a bare token that is only a square is therefore taken as a move
//! only when it is a legal pawn move in the position. Other SAN shapes (`Nf3`, `exd5`, `O-O`) are
//! always candidates, so a reply that discusses several moves in bare SAN yields the first or last
//! one the rule picks, which may not be the one the model meant: prefer fenced or tagged answers.

use std::{fmt, sync::LazyLock};

use regex::Regex;
use shakmaty::{
    Chess, Move, Position,
    san::{San, SanError, SanPlus},
};

use super::game::{MoveError, parse_uci_in};

/// A move notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Notation {
    /// `e2e4`, `e7e8q` (promotion letter in either case), castling as `e1g1`.
    Uci,
    /// `e4`, `Nxf3+`, `e8=Q`, `O-O` (also `0-0`).
    San,
}

/// Which candidate wins when a reply holds several.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pick {
    /// The earliest in the text.
    First,
    /// The latest in the text (the model's final answer after its reasoning).
    Last,
}

/// Where moves are looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Only inside ```` ``` ```` fences.
    Fenced,
    /// Only inside `<move>` tags.
    Tagged,
    /// Inside fences or tags, whichever holds the picked candidate.
    FencedOrTagged,
    /// Fences and tags first; only when they hold no move, bare tokens anywhere in the text.
    Anywhere,
}

/// How a reply is read for a move: ChessArena's reader, or arena's own configurable search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtractRule {
    /// ChessArena's reader exactly ([`super::chessarena`]): the last fenced UCI move, else the
    /// last fenced SAN move converted by python-chess's rules, with their error categories.
    /// `any_move` also reads unfenced moves (their `--parse_any_move`).
    ChessArena {
        /// Read unfenced moves when the fenced patterns find nothing.
        any_move: bool,
    },
    /// arena's own search, as configured.
    Search(SearchRule),
}

/// arena's own search of a reply: where to look, which candidate wins, which notations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchRule {
    /// Which candidate wins.
    pub pick: Pick,
    /// Where to look.
    pub scope: Scope,
    /// Notations tried in order as fallbacks: with `[Uci, San]`, SAN is considered only when the
    /// searched text holds no UCI-shaped candidate at all.
    pub notations: Vec<Notation>,
}

impl ExtractRule {
    /// ChessArena's reader, as their game loop uses it (fenced moves only).
    pub fn chessarena() -> Self {
        ExtractRule::ChessArena { any_move: false }
    }

    /// A forgiving rule: the last move in fences (a language tag, quotes, bold markers, a move
    /// number and trailing punctuation forgiven; an unclosed last fence runs to the end) or
    /// `<move>` tags, else the last bare move in the text; UCI before SAN, upper-case promotion
    /// letters accepted, `<think>` blocks dropped.
    pub fn tolerant() -> Self {
        ExtractRule::Search(SearchRule::tolerant())
    }
}

impl SearchRule {
    /// The search of [`ExtractRule::tolerant`].
    pub fn tolerant() -> Self {
        SearchRule {
            pick: Pick::Last,
            scope: Scope::Anywhere,
            notations: vec![Notation::Uci, Notation::San],
        }
    }
}

impl From<SearchRule> for ExtractRule {
    fn from(rule: SearchRule) -> Self {
        ExtractRule::Search(rule)
    }
}

/// Why no move could be taken from a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtractErrorKind {
    /// Nothing that looks like a move, and no fence or tag either.
    NoMoveFound,
    /// A fence or tag whose content is not a move.
    Unparseable,
    /// A well-formed move that is not legal in the position (including `0000`).
    Illegal,
    /// A SAN move that matches several legal moves.
    Ambiguous,
}

impl ExtractErrorKind {
    /// The stable snake_case name used in statistics and in Lua.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExtractErrorKind::NoMoveFound => "no_move_found",
            ExtractErrorKind::Unparseable => "unparseable",
            ExtractErrorKind::Illegal => "illegal",
            ExtractErrorKind::Ambiguous => "ambiguous",
        }
    }
}

impl fmt::Display for ExtractErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed extraction, with a sentence that can be sent back to the model as feedback.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExtractError {
    /// What went wrong.
    pub kind: ExtractErrorKind,
    /// The offending text (the picked candidate or the unparseable block), when there is one.
    pub candidate: Option<String>,
    /// A short human sentence, usable as feedback to the model.
    pub message: String,
}

/// A move found in a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    /// The legal move.
    pub mv: Move,
    /// The move in UCI notation (lower case, castling as `e1g1`).
    pub uci: String,
    /// The move in SAN with its check or mate suffix.
    pub san: String,
    /// The text the move was read from, as the model wrote it.
    pub matched: String,
}

/// The longest candidate text quoted back in an error message.
const MAX_QUOTED: usize = 60;

static UCI_SHAPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-h][1-8][a-h][1-8][qrbnQRBN]?$").expect("the UCI pattern is valid")
});
static SAN_SHAPE: LazyLock<Regex> = LazyLock::new(|| {
    // Tighter than ChessArena's `[KQRBN]?[a-h]?[1-8]?x?[a-h][1-8]`: a pawn move is a square, or a
    // capture from a file, so prose like `ba1` or a UCI move is not taken for SAN.
    Regex::new(
        r"^(?:[O0o]-[O0o](?:-[O0o])?|[KQRBN][a-h]?[1-8]?x?[a-h][1-8]|(?:[a-h][1-8]?x)?[a-h][1-8](?:=?[QRBNqrbn])?)[+#]?$",
    )
    .expect("the SAN pattern is valid")
});
static SQUARE_ONLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-h][1-8]$").expect("the square pattern is valid"));
static MOVE_NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+\.+\s*").expect("the move number pattern is valid"));
static THINK_OPEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)<think(?:ing)?>").expect("the think pattern is valid"));
static THINK_CLOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)</think(?:ing)?>").expect("the think pattern is valid"));
static EMPTY_THINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<think(?:ing)?>\s*</think(?:ing)?>").expect("the think pattern is valid")
});
static MOVE_TAG_OPEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)<move>").expect("the tag pattern is valid"));
static MOVE_TAG_CLOSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)</move>").expect("the tag pattern is valid"));
static LANGUAGE_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z][A-Za-z0-9_+-]*)\s+\S").expect("the language tag pattern is valid")
});

/// A piece of text that may hold a move.
#[derive(Debug)]
struct Region<'a> {
    /// Byte offset in the searched text, to order regions of different kinds.
    start: usize,
    /// The content, cleaned of decoration.
    text: &'a str,
    /// Found by bare scanning, where square-only tokens must be legal to count.
    bare: bool,
}

/// Finds the move in `text` for the position `pos` according to `rule`.
///
/// # Errors
///
/// An [`ExtractError`] whose kind says whether nothing was found, a block was not a move, or the
/// picked move is illegal or ambiguous; its message is written to be shown to the model.
pub fn extract_move(
    text: &str,
    pos: &Chess,
    rule: &ExtractRule,
) -> Result<Extracted, ExtractError> {
    match rule {
        ExtractRule::ChessArena { any_move } => super::chessarena::read_move(text, pos, *any_move),
        ExtractRule::Search(search) => search_move(text, pos, search),
    }
}

/// arena's own search ([`ExtractRule::Search`]).
fn search_move(text: &str, pos: &Chess, rule: &SearchRule) -> Result<Extracted, ExtractError> {
    let body = strip_thinking(text);
    let structured = match rule.scope {
        Scope::Fenced => fenced_regions(body),
        Scope::Tagged => tagged_regions(body),
        Scope::FencedOrTagged | Scope::Anywhere => {
            let mut regions = fenced_regions(body);
            regions.extend(tagged_regions(body));
            regions.sort_by_key(|r| r.start);
            regions
        }
    };
    if let Some(found) = first_notation_match(&structured, pos, rule) {
        return found;
    }
    if rule.scope == Scope::Anywhere
        && let Some(found) = first_notation_match(&bare_tokens(body), pos, rule)
    {
        return found;
    }
    match pick(structured.iter(), rule.pick) {
        Some(region) => Err(ExtractError {
            kind: ExtractErrorKind::Unparseable,
            candidate: Some(quote(region.text)),
            message: format!(
                "`{}` is not a move; write only a move {}",
                quote(region.text),
                notation_hint(rule)
            ),
        }),
        None => Err(ExtractError {
            kind: ExtractErrorKind::NoMoveFound,
            candidate: None,
            message: format!("no move found; {}", placement_hint(rule)),
        }),
    }
}

/// True when the reply holds anything besides one move: bullet mode forbids reasoning. Fences
/// (with a language tag), `<move>` tags, whitespace and an empty think block are allowed; a
/// trailing full stop, a second move or a non-empty think block are not. An empty reply holds no
/// reasoning (it fails extraction instead).
pub fn judge_forbidden_reasoning(text: &str) -> bool {
    let text = EMPTY_THINK.replace_all(text, " ");
    let text = MOVE_TAG_OPEN.replace_all(&text, " ");
    let text = MOVE_TAG_CLOSE.replace_all(&text, " ");
    let mut tokens: Vec<&str> = Vec::new();
    for (i, segment) in text.split("```").enumerate() {
        // Odd segments are inside fences, where a leading language tag is allowed.
        let segment = if i % 2 == 1 {
            strip_language_tag(segment)
        } else {
            segment
        };
        tokens.extend(segment.split_whitespace());
    }
    match tokens.as_slice() {
        [] => false,
        [one] => !is_move_shaped(one),
        _ => true,
    }
}

/// Removes `<think>` blocks; see the module docs.
fn strip_thinking(text: &str) -> &str {
    if let Some(close) = THINK_CLOSE.find_iter(text).last() {
        &text[close.end()..]
    } else if let Some(open) = THINK_OPEN.find(text) {
        &text[..open.start()]
    } else {
        text
    }
}

/// Drops a language tag (` ```uci\ne2e4``` `) unless the "tag" is itself the move. A word followed
/// by more text on the same line is a tag only when that text is a move (` ```uci e2e4``` `), so
/// that the first word of a sentence in a block is kept when the block is quoted back.
fn strip_language_tag(content: &str) -> &str {
    let Some(caps) = LANGUAGE_TAG.captures(content) else {
        return content;
    };
    let tag = caps.get(1).expect("the pattern has one group");
    if is_move_shaped(tag.as_str()) {
        return content;
    }
    let rest = &content[tag.end()..];
    let own_line = rest
        .trim_start_matches([' ', '\t'])
        .starts_with(['\n', '\r']);
    if own_line || is_move_shaped(clean(rest)) {
        rest
    } else {
        content
    }
}

fn is_move_shaped(text: &str) -> bool {
    UCI_SHAPE.is_match(text) || SAN_SHAPE.is_match(text)
}

/// Removes the decoration models put around a move: whitespace, quotes, bold markers, a move
/// number, trailing punctuation and annotation marks.
fn clean(text: &str) -> &str {
    let text = text
        .trim()
        .trim_matches(|c: char| matches!(c, '*' | '`' | '"' | '\'') || c.is_whitespace());
    let text = match MOVE_NUMBER.find(text) {
        Some(number) => &text[number.end()..],
        None => text,
    };
    text.trim_end_matches(['.', ',', ';', ':', '!', '?', ')'])
        .trim_start_matches('(')
        .trim()
}

fn fenced_regions(text: &str) -> Vec<Region<'_>> {
    let fences: Vec<usize> = text.match_indices("```").map(|(i, _)| i).collect();
    fences
        .chunks(2)
        .map(|pair| {
            let start = pair[0] + 3;
            // An unclosed last fence runs to the end: the reply was cut off after the answer.
            let end = pair.get(1).copied().unwrap_or(text.len());
            Region {
                start,
                text: clean(strip_language_tag(&text[start..end])),
                bare: false,
            }
        })
        .collect()
}

fn tagged_regions(text: &str) -> Vec<Region<'_>> {
    MOVE_TAG_OPEN
        .find_iter(text)
        .map(|open| {
            let rest = &text[open.end()..];
            let content = match MOVE_TAG_CLOSE.find(rest) {
                Some(close) => &rest[..close.start()],
                // Without a closing tag the answer ends at the line's end or the next tag.
                None => {
                    let rest = rest.trim_start();
                    rest.find(['\n', '<']).map_or(rest, |end| &rest[..end])
                }
            };
            Region {
                start: open.end(),
                text: clean(content),
                bare: false,
            }
        })
        .collect()
}

fn bare_tokens(text: &str) -> Vec<Region<'_>> {
    let is_token_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '=' | '+' | '#' | '-');
    let mut regions = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (is_token_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                regions.push(Region {
                    start: s,
                    text: &text[s..i],
                    bare: true,
                });
                start = None;
            }
            _ => {}
        }
    }
    regions
}

fn pick<'r, 'a: 'r, I>(mut regions: I, pick: Pick) -> Option<&'r Region<'a>>
where
    I: DoubleEndedIterator<Item = &'r Region<'a>>,
{
    match pick {
        Pick::First => regions.next(),
        Pick::Last => regions.next_back(),
    }
}

/// Tries the rule's notations in order and resolves the picked candidate of the first notation
/// that has any; `None` when no region holds a move-shaped text.
fn first_notation_match(
    regions: &[Region<'_>],
    pos: &Chess,
    rule: &SearchRule,
) -> Option<Result<Extracted, ExtractError>> {
    rule.notations.iter().find_map(|&notation| {
        let candidates: Vec<&Region<'_>> = regions
            .iter()
            .filter(|r| has_shape(r, notation, pos))
            .collect();
        pick(candidates.into_iter(), rule.pick).map(|r| resolve(r.text, notation, pos))
    })
}

fn has_shape(region: &Region<'_>, notation: Notation, pos: &Chess) -> bool {
    match notation {
        // A fenced `0000` is a deliberate answer and is reported as illegal; in prose it is noise.
        Notation::Uci => UCI_SHAPE.is_match(region.text) || (!region.bare && region.text == "0000"),
        Notation::San => {
            SAN_SHAPE.is_match(region.text)
                && !(region.bare
                    && SQUARE_ONLY.is_match(region.text)
                    && resolve(region.text, notation, pos).is_err())
        }
    }
}

fn resolve(text: &str, notation: Notation, pos: &Chess) -> Result<Extracted, ExtractError> {
    let mv = match notation {
        Notation::Uci => parse_uci_in(pos, text).map_err(|e| match e {
            MoveError::NullMove => ExtractError {
                kind: ExtractErrorKind::Illegal,
                candidate: Some(text.to_owned()),
                message: "`0000` (a null move) is never legal; play a real move".to_owned(),
            },
            _ => illegal(text),
        })?,
        Notation::San => {
            let normalized = normalize_san(text);
            let san: San = normalized.parse().map_err(|_| illegal(text))?;
            san.to_move(pos).map_err(|e| match e {
                SanError::IllegalSan => illegal(text),
                SanError::AmbiguousSan => ambiguous(text, san, pos),
            })?
        }
    };
    Ok(Extracted {
        mv,
        uci: super::game::uci_of(pos, &mv),
        san: SanPlus::from_move(pos.clone(), mv).to_string(),
        matched: text.to_owned(),
    })
}

/// Brings the SAN variants models write into shakmaty's syntax: `0-0` castling, promotion without
/// `=` or with a lower-case piece; the check suffix is dropped (shakmaty ignores it anyway).
fn normalize_san(text: &str) -> String {
    let text = text.trim_end_matches(['+', '#']);
    if text.starts_with(['O', '0', 'o']) && text.contains('-') {
        return text.replace(['0', 'o'], "O");
    }
    let mut out = text.to_owned();
    if let Some(last) = text.chars().last()
        && matches!(last, 'Q' | 'R' | 'B' | 'N' | 'q' | 'r' | 'b' | 'n')
        && text.len() > 2
    {
        out.pop();
        if !out.ends_with('=') {
            out.push('=');
        }
        out.push(last.to_ascii_uppercase());
    }
    out
}

fn illegal(text: &str) -> ExtractError {
    ExtractError {
        kind: ExtractErrorKind::Illegal,
        candidate: Some(text.to_owned()),
        message: format!("`{text}` is not a legal move in this position"),
    }
}

fn ambiguous(text: &str, san: San, pos: &Chess) -> ExtractError {
    let options: Vec<String> = pos
        .legal_moves()
        .iter()
        .filter(|m| san.matches(**m))
        .map(|m| San::from_move(pos, *m).to_string())
        .collect();
    ExtractError {
        kind: ExtractErrorKind::Ambiguous,
        candidate: Some(text.to_owned()),
        message: format!(
            "`{text}` is ambiguous: it could be {}; say which piece moves",
            options.join(" or ")
        ),
    }
}

/// Shortens a block's text for quoting it back.
fn quote(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_QUOTED) {
        Some((cut, _)) => format!("{}...", &one_line[..cut]),
        None => one_line,
    }
}

fn notation_hint(rule: &SearchRule) -> &'static str {
    match rule.notations.first() {
        Some(Notation::San) => "in SAN, like Nf3",
        _ => "in UCI notation, like e2e4",
    }
}

fn placement_hint(rule: &SearchRule) -> String {
    let example = match rule.notations.first() {
        Some(Notation::San) => "Nf3",
        _ => "e2e4",
    };
    match rule.scope {
        Scope::Fenced => {
            format!("end your reply with your move between triple backticks, like ```{example}```")
        }
        Scope::Tagged => {
            format!("end your reply with your move inside tags, like <move>{example}</move>")
        }
        Scope::FencedOrTagged => {
            format!("end your reply with your move between triple backticks, like ```{example}```")
        }
        Scope::Anywhere => format!("answer with a move {}", notation_hint(rule)),
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const CASTLES: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
    const PROMOTE: &str = "8/4P3/8/8/8/8/k7/4K3 w - - 0 1";
    const SCHOLAR: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";
    const TWO_KNIGHTS: &str = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
    const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const EN_PASSANT: &str = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("test FEN parses")
            .into_position(CastlingMode::Standard)
            .expect("test FEN is legal")
    }

    /// The search with fences only (what `"chessarena"` meant before the faithful reader).
    fn fenced() -> ExtractRule {
        ExtractRule::Search(SearchRule {
            pick: Pick::Last,
            scope: Scope::Fenced,
            notations: vec![Notation::Uci, Notation::San],
        })
    }

    fn fenced_first() -> ExtractRule {
        ExtractRule::Search(SearchRule {
            pick: Pick::First,
            scope: Scope::Fenced,
            notations: vec![Notation::Uci, Notation::San],
        })
    }

    fn tagged() -> ExtractRule {
        ExtractRule::Search(SearchRule {
            pick: Pick::Last,
            scope: Scope::Tagged,
            notations: vec![Notation::Uci, Notation::San],
        })
    }

    fn either_first() -> ExtractRule {
        ExtractRule::Search(SearchRule {
            pick: Pick::First,
            scope: Scope::FencedOrTagged,
            notations: vec![Notation::Uci, Notation::San],
        })
    }

    fn san_only() -> ExtractRule {
        ExtractRule::Search(SearchRule {
            pick: Pick::Last,
            scope: Scope::Fenced,
            notations: vec![Notation::San],
        })
    }

    /// The expected outcome: `Ok(uci)` or `Err(kind name)`.
    type Expected = Result<&'static str, &'static str>;

    /// One table row: position, rule, reply, expected outcome.
    type Case = (&'static str, fn() -> ExtractRule, &'static str, Expected);

    #[test]
    fn replies_table() {
        let ca = fenced;
        let tol = ExtractRule::tolerant;
        let cases: Vec<Case> = vec![
            (
                START,
                ca,
                "I'll open with the king's pawn.\n\n```\ne2e4\n```",
                Ok("e2e4"),
            ),
            (
                START,
                ca,
                "Candidates: ```d2d4``` is solid, ```g1f3``` is flexible, ```c2c4``` is the English.\n\
                 Weighing them, the most principled is:\n```\ne2e4\n```",
                Ok("e2e4"),
            ),
            (
                START,
                fenced_first,
                "First idea ```d2d4```, final ```e2e4```",
                Ok("d2d4"),
            ),
            (START, ca, "My move is e2e4.", Err("no_move_found")),
            (START, ca, "", Err("no_move_found")),
            (START, ca, "```uci\ng1f3\n```", Ok("g1f3")),
            (START, ca, "```uci g1f3```", Ok("g1f3")),
            (
                PROMOTE,
                ca,
                "Promote to a queen:\n```\ne7e8Q\n```",
                Ok("e7e8q"),
            ),
            (PROMOTE, ca, "```e8=Q+```", Ok("e7e8q")),
            (PROMOTE, ca, "```e8N```", Ok("e7e8n")),
            (
                START,
                ca,
                "I'll develop the knight.\n```\nNf3\n```",
                Ok("g1f3"),
            ),
            (
                CASTLES,
                ca,
                "Castle kingside for safety: ```O-O```",
                Ok("e1g1"),
            ),
            (CASTLES, ca, "```0-0-0```", Ok("e1c1")),
            (CASTLES, ca, "```\ne1g1\n```", Ok("e1g1")),
            (SCHOLAR, ca, "Mate in one!\n```\nQxf7#\n```", Ok("h5f7")),
            (SCHOLAR, ca, "```\nh5f7\n```", Ok("h5f7")),
            (START, ca, "Push it two squares: ```e2e5```", Err("illegal")),
            (
                START,
                ca,
                "Black replies symmetrically: ```e7e5```",
                Err("illegal"),
            ),
            (START, ca, "I pass.\n```\n0000\n```", Err("illegal")),
            (TWO_KNIGHTS, ca, "```Nd2```", Err("ambiguous")),
            (TWO_KNIGHTS, ca, "```Nbd2```", Ok("b1d2")),
            (
                START,
                ca,
                "```\nThe best move is to develop the knight.\n```",
                Err("unparseable"),
            ),
            (
                START,
                ca,
                "```json\n{\"move\": \"e2e4\"}\n```",
                Err("unparseable"),
            ),
            (
                START,
                ca,
                "```\nr n b q k b n r\np p p p p p p p\n```\nSo:\n```\nd2d4\n```",
                Ok("d2d4"),
            ),
            (
                START,
                fenced_first,
                "<think>\nMaybe ```a2a3```? No, too slow.\n</think>\n```e2e4```",
                Ok("e2e4"),
            ),
            (
                START,
                ca,
                "okay so ```h2h4``` is silly and ```a2a4``` too</think>\n\n```\ng1f3\n```",
                Ok("g1f3"),
            ),
            (
                START,
                ca,
                "<think>\nLet me see, ```e2e4``` looks good but",
                Err("no_move_found"),
            ),
            (START, tagged, "Final answer: <move>e2e4</move>", Ok("e2e4")),
            (START, tagged, "<move> Nc3 </move>", Ok("b1c3")),
            (START, tol, "I will play <move>g1f3", Ok("g1f3")),
            (START, tol, "After long thought, I play Nf3.", Ok("g1f3")),
            (
                START,
                tol,
                "Options are e2e4 and d2d4. I choose d2d4!",
                Ok("d2d4"),
            ),
            (
                START,
                tol,
                "The square e5 is key; I play Nc3 to fight for d5.",
                Ok("b1c3"),
            ),
            (
                START,
                tol,
                "```d2d4```\nThat is stronger than e2e4.",
                Ok("d2d4"),
            ),
            (START, tol, "```\n. . . .\n```\nI play `e2e4`.", Ok("e2e4")),
            (START, tol, "Hmm, ```something``` odd", Err("unparseable")),
            (START, tol, "I resign, good game.", Err("no_move_found")),
            (
                START,
                tol,
                "The bishop on ba1 and e2e4x are typos",
                Err("no_move_found"),
            ),
            (START, ca, "```\n**e2e4**\n```", Ok("e2e4")),
            (START, ca, "```\n1. e4\n```", Ok("e2e4")),
            (START, ca, "```E2E4```", Err("unparseable")),
            (START, ca, "```Nf3``` or rather ```e2e4```", Ok("e2e4")),
            (
                AFTER_E4,
                ca,
                "As Black I answer in kind:\n```\ne7e5\n```",
                Ok("e7e5"),
            ),
            (AFTER_E4, ca, "```\n1... c5\n```", Ok("c7c5")),
            (EN_PASSANT, ca, "Capture en passant: ```e5f6```", Ok("e5f6")),
            (EN_PASSANT, ca, "```exf6```", Ok("e5f6")),
            (
                START,
                either_first,
                "<move>d2d4</move> though ```e2e4``` also works",
                Ok("d2d4"),
            ),
            (START, san_only, "```e4```", Ok("e2e4")),
            (
                START,
                ca,
                "```\ne2e4\n```\nThis opens lines for the bishop. ```",
                Ok("e2e4"),
            ),
        ];
        assert!(cases.len() >= 25);
        for (i, (fen, rule, reply, expected)) in cases.into_iter().enumerate() {
            let got = extract_move(reply, &position(fen), &rule());
            match (&got, expected) {
                (Ok(found), Ok(uci)) => assert_eq!(found.uci, uci, "case {i}: {reply:?}"),
                (Err(err), Err(kind)) => {
                    assert_eq!(
                        err.kind.as_str(),
                        kind,
                        "case {i}: {reply:?}: {}",
                        err.message
                    );
                    assert!(!err.message.is_empty());
                }
                _ => panic!("case {i}: {reply:?}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn details_of_found_moves_and_errors() {
        let found = extract_move("```\nQxf7#\n```", &position(SCHOLAR), &fenced()).unwrap();
        assert_eq!(
            (
                found.uci.as_str(),
                found.san.as_str(),
                found.matched.as_str()
            ),
            ("h5f7", "Qxf7#", "Qxf7#")
        );
        let found = extract_move("```e7e8Q```", &position(PROMOTE), &fenced()).unwrap();
        assert_eq!(
            (found.san.as_str(), found.matched.as_str()),
            ("e8=Q", "e7e8Q")
        );

        let err = extract_move("```Nd2```", &position(TWO_KNIGHTS), &fenced()).unwrap_err();
        assert_eq!(err.candidate.as_deref(), Some("Nd2"));
        assert!(
            err.message.contains("Nbd2") && err.message.contains("Nfd2"),
            "{}",
            err.message
        );

        let err =
            extract_move("```\nI like this one\n```", &position(START), &fenced()).unwrap_err();
        assert_eq!(err.candidate.as_deref(), Some("I like this one"));
        assert!(err.to_string().contains("UCI"));

        let err =
            extract_move("```The move is unclear```", &position(START), &fenced()).unwrap_err();
        assert_eq!(err.candidate.as_deref(), Some("The move is unclear"));

        let err = extract_move("nothing", &position(START), &tagged()).unwrap_err();
        assert!(err.message.contains("<move>"), "{}", err.message);
        assert_eq!(err.candidate, None);

        let long = format!("```\n{}\n```", "word ".repeat(40));
        let err = extract_move(&long, &position(START), &fenced()).unwrap_err();
        assert!(err.candidate.unwrap().ends_with("..."));
    }

    #[test]
    fn forbidden_reasoning() {
        let cases = [
            ("```e2e4```", false),
            ("e2e4", false),
            ("```uci\ne2e4\n```", false),
            ("  \n```\ne7e8Q\n```  ", false),
            ("Nf3", false),
            ("<move>e2e4</move>", false),
            ("<think>\n\n</think>\n\n```e2e4```", false),
            ("", false),
            ("```e2e4```.", true),
            ("I play ```e2e4```", true),
            ("<think>the center</think>```e2e4```", true),
            ("```e2e4``` ```d2d4```", true),
            ("```\ne2e4 because it controls the center\n```", true),
        ];
        for (reply, expected) in cases {
            assert_eq!(judge_forbidden_reasoning(reply), expected, "{reply:?}");
        }
    }

    #[test]
    fn san_normalization() {
        assert_eq!(normalize_san("0-0+"), "O-O");
        assert_eq!(normalize_san("o-o-o"), "O-O-O");
        assert_eq!(normalize_san("e8q"), "e8=Q");
        assert_eq!(normalize_san("exd8=n#"), "exd8=N");
        assert_eq!(normalize_san("Nbd2"), "Nbd2");
    }
}
