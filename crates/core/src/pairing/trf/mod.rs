//! Reads a Swiss tournament from a FIDE TRF file (the TRF-16 layout with the TRF(x) lines that
//! pairing programs read): the file `arena export trf` writes and the files bbpPairings writes.
//!
//! Read: the tournament's name (012), its rounds (XXR), the colour of pairing number 1 in round 1
//! (XXC `white1`/`black1`), points of a win, a draw and the pairing-allocated bye (BBW, BBD,
//! BBU), pairs barred from meeting (XXP, two pairing numbers), and the player lines (001): name,
//! rating and each round's opponent, colour and result. Other lines (the 0x2 header lines, team
//! lines) are skipped. Columns count characters, not bytes, so a name in UTF-8 (as arena writes
//! it) keeps the columns after it in place.
//!
//! A round's cell maps to a [`RoundEntry`]: results `1 = 0` (or unrated `W D L`) against an
//! opponent are a played game; `+ -` against an opponent are a forfeit (no game, the pair kept in
//! [`Record::unplayed`]); without an opponent `U` is the pairing-allocated bye, `F` `H` `Z` (or a
//! blank) a bye of a win, a draw or nothing. Both players' cells of a pairing must name each
//! other, with opposite colours for a played game.
//!
//! Written by [`write_trf`] (its own module says how). Hand-written: no crate reads or writes TRF.
//! Every error names the line.

use std::io::BufRead;
use std::path::Path;

use super::{Colour, Player, Record, RoundEntry, Tournament, UnplayedGame};

#[cfg(test)]
mod fuzz;
mod write;

pub use self::write::write_trf;
use crate::lines::{BoundedLines, LineError};

/// The largest TRF file read, 16 MiB (a tournament of 10,000 players over 100 rounds is about
/// 11 MB).
pub(crate) const MAX_TRF_BYTES: u64 = 16 << 20;

/// The longest TRF line, 4 KiB: a player line of about 400 rounds.
pub(crate) const MAX_TRF_LINE_BYTES: usize = 4 << 10;

/// The column (0-based) of a player line's first round.
const FIRST_ROUND: usize = 91;

/// A TRF file read: the tournament's name and its record.
#[derive(Debug, Clone, PartialEq)]
pub struct TrfFile {
    /// The tournament's name (line 012), empty when the file has none.
    pub name: String,
    /// The players, ratings and rounds; every player is marked available.
    pub record: Record,
}

/// Why a TRF file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TrfError {
    /// The file could not be opened or read.
    #[error("{source_name}: {error}")]
    Io {
        /// The file.
        source_name: String,
        /// What failed.
        error: std::io::Error,
    },
    /// The file is over [`MAX_TRF_BYTES`]; it was not read whole.
    #[error("{source_name}: the file is larger than the limit of {MAX_TRF_BYTES} bytes")]
    TooLarge {
        /// The file.
        source_name: String,
    },
    /// A line that does not read.
    #[error("{source_name}:{line}: {message}")]
    Line {
        /// The file.
        source_name: String,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// One round of a player line as written.
#[derive(Debug, Clone, Copy)]
struct Cell {
    /// The opponent's pairing number, 0 for none.
    opponent: usize,
    colour: char,
    result: char,
}

/// A player line as written.
struct Row {
    line: usize,
    number: usize,
    name: String,
    rating: Option<f64>,
    cells: Vec<Cell>,
}

/// Reads the TRF file at `path`.
///
/// # Errors
///
/// [`TrfError::Io`] when it cannot be read, [`TrfError::TooLarge`] over [`MAX_TRF_BYTES`],
/// [`TrfError::Line`] naming the first line that does not read.
pub fn read_trf(path: &Path) -> Result<TrfFile, TrfError> {
    let source_name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|error| TrfError::Io {
        source_name: source_name.clone(),
        error,
    })?;
    parse_trf(std::io::BufReader::new(file), &source_name)
}

/// Reads TRF text from `input`; `source_name` names it in errors.
///
/// # Errors
///
/// As [`read_trf`].
pub fn parse_trf(input: impl BufRead, source_name: &str) -> Result<TrfFile, TrfError> {
    let at = |line: usize, message: String| TrfError::Line {
        source_name: source_name.to_owned(),
        line,
        message,
    };
    let mut name = String::new();
    let mut total_rounds: Option<(usize, usize)> = None;
    let mut initial_colour = None;
    let (mut win, mut draw, mut bye) = (10, 5, None);
    let mut barred: Vec<(usize, usize, usize)> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    for item in BoundedLines::new(input, MAX_TRF_LINE_BYTES, MAX_TRF_BYTES) {
        let (line, text) = item.map_err(|e| match e {
            LineError::Io(error) => TrfError::Io {
                source_name: source_name.to_owned(),
                error,
            },
            LineError::TooLong { line, max } => at(
                line,
                format!("the line is longer than the limit of {max} bytes"),
            ),
            LineError::TooLarge { .. } => TrfError::TooLarge {
                source_name: source_name.to_owned(),
            },
        })?;
        let chars: Vec<char> = text.chars().collect();
        let code: String = chars.iter().take(3).collect();
        let rest = || -> String { chars.iter().skip(4).collect::<String>().trim().to_owned() };
        match code.as_str() {
            "001" => rows.push(player_line(&chars, line).map_err(|m| at(line, m))?),
            "012" => name = rest(),
            "XXR" => {
                let rounds = rest()
                    .parse()
                    .map_err(|_| at(line, format!("XXR needs a number of rounds: `{text}`")))?;
                total_rounds = Some((rounds, line));
            }
            "XXC" => {
                initial_colour = Some(match rest().split_whitespace().next() {
                    Some("white1") => Colour::White,
                    Some("black1") => Colour::Black,
                    _ => {
                        return Err(at(
                            line,
                            format!("XXC needs `white1` or `black1`: `{text}`"),
                        ));
                    }
                });
            }
            "BBW" | "BBD" | "BBU" => {
                let points = tenths(&rest()).ok_or_else(|| {
                    at(line, format!("{code} needs points such as 1.0: `{text}`"))
                })?;
                match code.as_str() {
                    "BBW" => win = points,
                    "BBD" => draw = points,
                    _ => bye = Some(points),
                }
            }
            "XXP" => {
                let numbers: Vec<usize> = rest()
                    .split_whitespace()
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|_| at(line, format!("XXP needs two pairing numbers: `{text}`")))?;
                match numbers[..] {
                    [a, b] if a != b && a > 0 && b > 0 => barred.push((a - 1, b - 1, line)),
                    _ => return Err(at(line, format!("XXP needs two pairing numbers: `{text}`"))),
                }
            }
            _ => {}
        }
    }

    // Pairing numbers run from 1 without a gap.
    rows.sort_by_key(|r| r.number);
    for (i, row) in rows.iter().enumerate() {
        if row.number != i + 1 {
            let message = if row.number <= i {
                format!("pairing number {} is given twice", row.number)
            } else {
                format!("pairing number {} is missing", i + 1)
            };
            return Err(at(row.line, message));
        }
    }
    let n = rows.len();
    let rounds = rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    let total_rounds = match total_rounds {
        Some((total, line)) if total < rounds => {
            return Err(at(
                line,
                format!("XXR says {total} rounds, but a player line holds {rounds}"),
            ));
        }
        Some((total, _)) => total,
        None => rounds,
    };
    for &(a, b, line) in &barred {
        if a.max(b) >= n {
            return Err(at(
                line,
                format!("XXP names a pairing number over the {n} players"),
            ));
        }
    }
    let blank = Cell {
        opponent: 0,
        colour: ' ',
        result: ' ',
    };
    let cell = |p: usize, r: usize| rows[p].cells.get(r).copied().unwrap_or(blank);

    let mut players = Vec::with_capacity(n);
    let mut unplayed = Vec::new();
    for (p, row) in rows.iter().enumerate() {
        let mut entries = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let c = cell(p, r);
            let round = r + 1;
            let bad = |message: String| at(row.line, format!("round {round}: {message}"));
            if c.opponent == 0 {
                entries.push(match c.result {
                    'U' => RoundEntry::PairingBye {
                        points: bye.unwrap_or(win),
                    },
                    'F' | '+' => RoundEntry::Unplayed { points: win },
                    'H' => RoundEntry::Unplayed { points: draw },
                    'Z' | ' ' | '-' => RoundEntry::Unplayed { points: 0 },
                    other => return Err(bad(format!("result `{other}` without an opponent"))),
                });
                continue;
            }
            let o = c.opponent - 1;
            if o >= n {
                return Err(bad(format!(
                    "opponent {} is not among the {n} players",
                    c.opponent
                )));
            }
            if o == p {
                return Err(bad("a player paired with itself".to_owned()));
            }
            let theirs = cell(o, r);
            if theirs.opponent != p + 1 {
                return Err(bad(format!(
                    "the opponent {} has {} in that round",
                    c.opponent,
                    if theirs.opponent == 0 {
                        "no opponent".to_owned()
                    } else {
                        format!("opponent {}", theirs.opponent)
                    }
                )));
            }
            let colour = |ch: char| match ch {
                'w' | 'W' => Some(Colour::White),
                'b' | 'B' => Some(Colour::Black),
                _ => None,
            };
            let mismatch = || bad(format!("the opponent {}'s cell does not match", c.opponent));
            match c.result {
                '1' | 'W' | '=' | 'D' | '0' | 'L' => {
                    let (Some(mine), Some(other)) = (colour(c.colour), colour(theirs.colour))
                    else {
                        return Err(bad("a played game needs colours `w` and `b`".to_owned()));
                    };
                    let points = |ch: char| match ch {
                        '1' | 'W' => Some(2),
                        '=' | 'D' => Some(1),
                        '0' | 'L' => Some(0),
                        _ => None,
                    };
                    if mine == other
                        || points(c.result)
                            .zip(points(theirs.result))
                            .map(|(a, b)| a + b)
                            != Some(2)
                    {
                        return Err(mismatch());
                    }
                    entries.push(RoundEntry::Played {
                        opponent: o,
                        colour: mine,
                        points: match c.result {
                            '1' | 'W' => win,
                            '=' | 'D' => draw,
                            _ => 0,
                        },
                    });
                }
                '+' | '-' => {
                    if !matches!(theirs.result, '+' | '-') {
                        return Err(mismatch());
                    }
                    entries.push(RoundEntry::Unplayed {
                        points: if c.result == '+' { win } else { 0 },
                    });
                    if p < o {
                        // The pairing as made: by the colours written, else the lower number
                        // with White.
                        let white_is_p = match (colour(c.colour), colour(theirs.colour)) {
                            (Some(mine), _) => mine == Colour::White,
                            (None, Some(other)) => other == Colour::Black,
                            (None, None) => true,
                        };
                        let (white, black) = if white_is_p { (p, o) } else { (o, p) };
                        unplayed.push(UnplayedGame {
                            round: r,
                            white,
                            black,
                        });
                    }
                }
                other => {
                    return Err(bad(format!("result `{other}` against an opponent")));
                }
            }
        }
        players.push(Player {
            rounds: entries,
            available: true,
        });
    }
    // Without XXC: player 1's colour in round 1, or the next player's with a colour, reversed
    // for an even pairing number (colours alternate down the initial ranking).
    let initial_colour = initial_colour.unwrap_or_else(|| {
        players
            .iter()
            .enumerate()
            .find_map(|(p, player)| match player.rounds.first() {
                Some(RoundEntry::Played { colour, .. }) => {
                    Some(if p % 2 == 0 { *colour } else { colour.invert() })
                }
                _ => None,
            })
            .unwrap_or(Colour::White)
    });
    unplayed.sort_by_key(|g| (g.round, g.white, g.black));
    let (names, ratings) = rows.into_iter().map(|r| (r.name, r.rating)).unzip();
    Ok(TrfFile {
        name,
        record: Record {
            tournament: Tournament {
                players,
                total_rounds,
                points_for_win: win,
                points_for_draw: draw,
                initial_colour,
                forbidden: barred.into_iter().map(|(a, b, _)| (a, b)).collect(),
            },
            names,
            ratings,
            unplayed,
        },
    })
}

/// Characters `from..to` of a line, trimmed (empty past its end).
fn field(chars: &[char], from: usize, to: usize) -> String {
    chars
        .iter()
        .skip(from)
        .take(to.saturating_sub(from))
        .collect::<String>()
        .trim()
        .to_owned()
}

/// A number of at most `digits` ASCII digits.
fn number(text: &str, digits: usize) -> Option<usize> {
    (!text.is_empty() && text.len() <= digits && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// Points written with at most one decimal (`1`, `0.5`, `1.0`), in tenths.
fn tenths(text: &str) -> Option<u32> {
    let (whole, tenth) = text.split_once('.').unwrap_or((text, "0"));
    let whole = u32::try_from(number(whole, 4)?).ok()?;
    let tenth = u32::try_from(number(tenth, 1)?).ok()?;
    Some(whole * 10 + tenth)
}

/// A player line (001): pairing number, name, rating and its rounds' cells.
fn player_line(chars: &[char], line: usize) -> Result<Row, String> {
    let pairing = field(chars, 4, 8);
    let number = number(&pairing, 4).filter(|&n| n > 0).ok_or_else(|| {
        format!("a player line needs a pairing number in columns 5-8, not `{pairing}`")
    })?;
    let rating = field(chars, 48, 52);
    let rating = if rating.is_empty() {
        None
    } else {
        let r = self::number(&rating, 4)
            .ok_or_else(|| format!("the rating in columns 49-52 is not a number: `{rating}`"))?;
        // 0 is how TRF writes an unrated player.
        (r > 0).then(|| f64::from(u16::try_from(r).unwrap_or(0)))
    };
    let mut cells = Vec::new();
    let mut at = FIRST_ROUND;
    while at < chars.len() {
        let round = cells.len() + 1;
        let chunk: Vec<char> = (0..8)
            .map(|i| chars.get(at + i).copied().unwrap_or(' '))
            .collect();
        if chunk.iter().all(|c| *c == ' ') {
            // A round left blank: not paired, no points.
            cells.push(Cell {
                opponent: 0,
                colour: ' ',
                result: ' ',
            });
        } else {
            let text: String = chunk.iter().collect();
            let opponent: String = chunk[..4].iter().collect();
            let opponent = opponent.trim();
            let opponent = if opponent.is_empty() {
                Some(0)
            } else {
                self::number(opponent, 4)
            };
            let (Some(opponent), ' ', ' ') = (opponent, chunk[4], chunk[6]) else {
                return Err(format!(
                    "round {round} is not `NNNN c r` at column {}: `{text}`",
                    at + 1
                ));
            };
            if !matches!(chunk[5], 'w' | 'b' | 'W' | 'B' | '-' | ' ') {
                return Err(format!(
                    "round {round}: colour `{}` is not w, b or -",
                    chunk[5]
                ));
            }
            if !"+-WDL1=0HFUZ ".contains(chunk[7]) {
                return Err(format!(
                    "round {round}: result `{}` is not a TRF result",
                    chunk[7]
                ));
            }
            cells.push(Cell {
                opponent,
                colour: chunk[5],
                result: chunk[7],
            });
        }
        at += 10;
    }
    // Trailing blank rounds say nothing.
    while cells
        .last()
        .is_some_and(|c| c.opponent == 0 && c.result == ' ')
    {
        cells.pop();
    }
    Ok(Row {
        line,
        number,
        name: field(chars, 14, 47),
        rating,
        cells,
    })
}
