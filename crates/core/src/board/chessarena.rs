//! ChessArena's move reader and its bullet-mode reasoning judge, behaviour for behaviour.
//!
//! What ChessArena's code does with a reply (NEU-CS/ChessArena, `utils.py` and
//! `run_simulation.py::get_llm_move`, commit `be1bc27e`), and what [`read_move`] does the same way:
//!
//! 1. **UCI**: every match of a fenced UCI move (```` ``` ````, optional whitespace, four square
//!    characters and an optional promotion letter in either case, optional whitespace,
//!    ```` ``` ````), found left to right without overlap; the **last** one is the candidate.
//!    Nothing else may share the fence: a language tag (```` ```uci ````), a quote or a full stop
//!    inside it means no match.
//! 2. **SAN**, only when there is no UCI match: the last fenced match of their SAN pattern
//!    (`O-O-O`, `O-O`, or an optional piece letter, optional file, optional rank, optional `x`, a
//!    square, an optional `=Q`-style promotion and an optional `+` or `#`), converted to UCI by
//!    python-chess's `Board.parse_san`; when python-chess refuses it (illegal, ambiguous), the SAN
//!    text itself is the candidate.
//! 3. With `any_move` (their `--parse_any_move`, used by the fine-grained move-selection script),
//!    each notation also tries its pattern without fences, after its fenced pattern found nothing.
//! 4. No candidate: a **parsing error** ([`ExtractErrorKind::NoMoveFound`]).
//! 5. The candidate goes through python-chess's `Move.from_uci`; text it refuses (a SAN move that
//!    was not converted, an upper-case promotion letter such as `e7e8Q`, the same square twice)
//!    is also their **parsing error** ([`ExtractErrorKind::Unparseable`]), never an illegal move.
//! 6. A well-formed move not in `board.legal_moves` is an **illegal move**
//!    ([`ExtractErrorKind::Illegal`]). python-chess also takes king-takes-own-rook (`e1h1`) for
//!    castling, so this reader does too.
//!
//! The legal move list of a fine-grained item decides legality there (the item's `legal_moves`,
//! by string), so the evaluation path takes only [`candidate`] from this module.
//!
//! [`judge_thinking`] is their bullet rule: delete every UCI-shaped run (with the whitespace around
//! it), split on ```` ``` ````, and call the reply reasoning when any piece holds a non-blank
//! character. So a SAN answer, a language tag or `<move>` tags count as reasoning, while two bare
//! UCI moves (`e2e4 d2d4`) do not. In their game loop it runs after a candidate was found and
//! before `from_uci` and the legality check.
//!
//! Whitespace is Python's (`str.isspace`, the `\s` of a `str` pattern), which is Unicode
//! whitespace plus the separators U+001C to U+001F. The patterns are written for the `regex`
//! crate, whose leftmost-first semantics pick the same matches as Python's `re` for them; the SAN
//! conversion is [`super::san_compat`]. Hand-written because no crate reproduces another
//! program's parsing quirks.

use std::sync::LazyLock;

use regex::Regex;
use shakmaty::{Chess, File, Move, Position, Role, Square, san::SanPlus};

use super::{
    notation::{ExtractError, ExtractErrorKind, Extracted},
    san_compat,
};

/// Python's whitespace, as a character class body for the patterns below.
const PY_SPACE: &str = r"\s\x1C-\x1F";
const UCI: &str = "[a-h][1-8][a-h][1-8](?:[qrbnQRBN])?";
const SAN: &str = "O-O-O|O-O|[KQRBN]?[a-h]?[1-8]?x?[a-h][1-8](?:=[KQRBN])?[+#]?";

fn pattern(body: &str, fenced: bool) -> Regex {
    let fence = if fenced { "```" } else { "" };
    Regex::new(&format!("{fence}[{PY_SPACE}]*({body})[{PY_SPACE}]*{fence}"))
        .expect("the ChessArena patterns are valid")
}

static FENCED_UCI: LazyLock<Regex> = LazyLock::new(|| pattern(UCI, true));
static BARE_UCI: LazyLock<Regex> = LazyLock::new(|| pattern(UCI, false));
static FENCED_SAN: LazyLock<Regex> = LazyLock::new(|| pattern(SAN, true));
static BARE_SAN: LazyLock<Regex> = LazyLock::new(|| pattern(SAN, false));
/// `judge_thinking`'s pattern: a UCI-shaped run and the whitespace around it.
static THINKING_UCI: LazyLock<Regex> = LazyLock::new(|| pattern(UCI, false));

/// Which of ChessArena's two patterns gave the candidate (they report `uci_nums`, `san_nums`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadAs {
    /// The UCI pattern.
    Uci,
    /// The SAN pattern (then converted).
    San,
}

/// The move text ChessArena takes from a reply, before `from_uci` and the legality check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// What ChessArena passes on: the UCI match as written, or the SAN match converted by
    /// python-chess (the SAN text unchanged when python-chess refused it).
    pub uci: String,
    /// Which pattern matched.
    pub read_as: ReadAs,
    /// The matched text as the model wrote it.
    pub matched: String,
}

fn last_capture(re: &Regex, text: &str) -> Option<String> {
    re.captures_iter(text).last().map(|c| c[1].to_owned())
}

/// Steps 1 to 3 of the module docs: the candidate ChessArena reads from `reply` in `pos`, or
/// `None` (their parsing error "no valid UCI move found").
pub fn candidate(reply: &str, pos: &Chess, any_move: bool) -> Option<Candidate> {
    let uci = last_capture(&FENCED_UCI, reply)
        .or_else(|| any_move.then(|| last_capture(&BARE_UCI, reply)).flatten());
    if let Some(uci) = uci {
        return Some(Candidate {
            matched: uci.clone(),
            uci,
            read_as: ReadAs::Uci,
        });
    }
    let san = last_capture(&FENCED_SAN, reply)
        .or_else(|| any_move.then(|| last_capture(&BARE_SAN, reply)).flatten())?;
    Some(Candidate {
        uci: san_compat::san_to_uci(&san, pos),
        read_as: ReadAs::San,
        matched: san,
    })
}

/// The whole reader (steps 1 to 6): the legal move ChessArena would play, or the failure in
/// their categories (see the module docs). The error messages are arena's own feedback.
///
/// # Errors
///
/// [`ExtractErrorKind::NoMoveFound`] and [`ExtractErrorKind::Unparseable`] are ChessArena's
/// parsing errors, [`ExtractErrorKind::Illegal`] its illegal moves; it never reports ambiguity
/// (an ambiguous SAN move is not converted, so it is a parsing error).
pub(crate) fn read_move(
    reply: &str,
    pos: &Chess,
    any_move: bool,
) -> Result<Extracted, ExtractError> {
    let Some(found) = candidate(reply, pos, any_move) else {
        return Err(ExtractError {
            kind: ExtractErrorKind::NoMoveFound,
            candidate: None,
            message: "no move found; end your reply with your move in UCI notation between \
                      triple backticks, like ```e2e4```"
                .to_owned(),
        });
    };
    resolve(&found, pos)
}

/// Steps 5 and 6 for a candidate: python-chess's `Move.from_uci`, then membership in the legal
/// moves.
///
/// # Errors
///
/// As [`read_move`], without [`ExtractErrorKind::NoMoveFound`].
pub fn resolve(found: &Candidate, pos: &Chess) -> Result<Extracted, ExtractError> {
    let text = &found.uci;
    let Some((from, to, promotion)) = python_from_uci(text) else {
        let message = match found.read_as {
            ReadAs::San if found.uci == found.matched => format!(
                "`{}` could not be read as a legal move in this position; write your move in \
                 UCI notation, like e2e4",
                found.matched
            ),
            _ => format!(
                "`{text}` is not a move in UCI notation (lower-case letters, from-square then \
                 to-square, like e2e4 or e7e8q)"
            ),
        };
        return Err(ExtractError {
            kind: ExtractErrorKind::Unparseable,
            candidate: Some(text.clone()),
            message,
        });
    };
    let Some(mv) = python_legal(pos, from, to, promotion) else {
        return Err(ExtractError {
            kind: ExtractErrorKind::Illegal,
            candidate: Some(text.clone()),
            message: format!("`{text}` is not a legal move in this position"),
        });
    };
    Ok(Extracted {
        mv,
        uci: crate::board::uci_of(pos, &mv),
        san: SanPlus::from_move(pos.clone(), mv).to_string(),
        matched: found.matched.clone(),
    })
}

/// ChessArena's `judge_thinking`: true when `reply` holds anything besides UCI-shaped moves,
/// whitespace and fences (see the module docs).
pub fn judge_thinking(reply: &str) -> bool {
    let stripped = THINKING_UCI.replace_all(py_strip(reply), "");
    stripped.split("```").any(|part| !py_strip(part).is_empty())
}

fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn py_strip(text: &str) -> &str {
    text.trim_matches(is_py_space)
}

/// python-chess's `Move.from_uci` for the texts the patterns can yield: two distinct squares
/// and an optional lower-case piece letter; `None` where it raises. (`0000`, the null move,
/// cannot come out of the patterns, and would be illegal anyway.)
fn python_from_uci(text: &str) -> Option<(Square, Square, Option<Role>)> {
    let len = text.chars().count();
    if !(4..=5).contains(&len) || !text.is_ascii() {
        return None;
    }
    let from: Square = text[0..2].parse().ok()?;
    let to: Square = text[2..4].parse().ok()?;
    let promotion = match text.as_bytes().get(4) {
        None => None,
        Some(&c) if c.is_ascii_lowercase() => Some(Role::from_char(char::from(c))?),
        Some(_) => return None,
    };
    (from != to).then_some((from, to, promotion))
}

/// python-chess's `move in board.legal_moves`: the legal move with these squares and promotion,
/// castling written as the king's destination (`e1g1`) or as king takes own rook (`e1h1`).
/// An ordinary move wins over a castling written as the king's destination: in Chess960 a king
/// on f1 moves to g1 without castling (standard chess has no such overlap).
fn python_legal(pos: &Chess, from: Square, to: Square, promotion: Option<Role>) -> Option<Move> {
    let legal = pos.legal_moves();
    let ordinary = legal.iter().find(|m| {
        !m.is_castle() && m.from() == Some(from) && m.to() == to && m.promotion() == promotion
    });
    if let Some(m) = ordinary {
        return Some(*m);
    }
    legal.into_iter().find(|m| match *m {
        Move::Castle { king, rook } => {
            let file = if rook.file() > king.file() {
                File::G
            } else {
                File::C
            };
            promotion.is_none()
                && from == king
                && (to == rook || to == Square::from_coords(file, king.rank()))
        }
        _ => m.from() == Some(from) && m.to() == to && m.promotion() == promotion,
    })
}

#[cfg(test)]
mod tests;
