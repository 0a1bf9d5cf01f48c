//! The UCI text protocol: parsing the lines an engine prints and formatting the commands we send.
//!
//! Parsing is lenient in the way UCI asks for: unknown tokens are skipped, unknown lines become
//! [`UciLine::Other`], and `info string ...` stops the parse so free text is never read as fields.
//!
//! ```
//! use arena_engine::uci::{Score, UciLine};
//!
//! let line: UciLine = "info depth 12 multipv 1 score cp -30 nodes 80232 pv c7c5 g1f3".parse().unwrap();
//! let UciLine::Info(info) = line else { panic!("an info line") };
//! assert_eq!(info.depth, Some(12));
//! assert_eq!(info.score, Some(Score::Cp(-30)));
//! assert_eq!(info.pv, ["c7c5", "g1f3"]);
//! ```

use std::{convert::Infallible, fmt, str::FromStr};

use serde::Deserialize;

/// An evaluation as UCI reports it (the chess core's, so that the store can keep one without
/// knowing engines).
pub use arena_core::board::Score;

/// Whether a reported score is exact or only a bound (an aspiration-window fail high or low).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScoreBound {
    /// The score is exact.
    #[default]
    Exact,
    /// The true score is at least this (`lowerbound`).
    Lower,
    /// The true score is at most this (`upperbound`).
    Upper,
}

/// Every field of an `info` line that arena reads; absent fields are `None` (or an empty `pv`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InfoLine {
    /// Nominal search depth.
    pub depth: Option<u32>,
    /// Selective search depth.
    pub seldepth: Option<u32>,
    /// Which line of a multi-PV search this is (1 is the best).
    pub multipv: Option<u32>,
    /// The evaluation, side-to-move view.
    pub score: Option<Score>,
    /// Whether `score` is exact or a bound.
    pub bound: ScoreBound,
    /// Nodes searched so far.
    pub nodes: Option<u64>,
    /// Nodes per second.
    pub nps: Option<u64>,
    /// Search time so far, in milliseconds.
    pub time_ms: Option<u64>,
    /// The principal variation, as UCI moves.
    pub pv: Vec<String>,
}

/// The summary of a search that [`BestMove`](super::BestMove) carries: the useful part of an info line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchInfo {
    /// Nominal search depth.
    pub depth: Option<u32>,
    /// The evaluation, side-to-move view.
    pub score: Option<Score>,
    /// The principal variation, as UCI moves.
    pub pv: Vec<String>,
    /// Nodes searched.
    pub nodes: Option<u64>,
    /// Which line of a multi-PV search this is.
    pub multipv: Option<u32>,
}

impl From<InfoLine> for SearchInfo {
    fn from(info: InfoLine) -> SearchInfo {
        SearchInfo {
            depth: info.depth,
            score: info.score,
            pv: info.pv,
            nodes: info.nodes,
            multipv: info.multipv,
        }
    }
}

/// One line printed by an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UciLine {
    /// `id name ...`.
    IdName(String),
    /// `id author ...`.
    IdAuthor(String),
    /// `option name <name> type ...`: only the name is kept, to check the options we set.
    Option(String),
    /// `uciok`.
    UciOk,
    /// `readyok`.
    ReadyOk,
    /// `bestmove <move> [ponder <move>]`; `best` is `None` when the line has no move at all.
    BestMove {
        /// The move token as printed (not yet validated).
        best: Option<String>,
        /// The expected reply, if the engine named one.
        ponder: Option<String>,
    },
    /// `info ...`.
    Info(InfoLine),
    /// Anything else (banners, `info string` is an `Info` with no fields, unknown commands).
    Other(String),
}

impl FromStr for UciLine {
    type Err = Infallible;

    fn from_str(line: &str) -> Result<UciLine, Infallible> {
        let line = line.trim();
        let mut tokens = line.split_ascii_whitespace();
        Ok(match tokens.next() {
            Some("uciok") => UciLine::UciOk,
            Some("readyok") => UciLine::ReadyOk,
            Some("id") => match tokens.next() {
                Some("name") => UciLine::IdName(rest_after(line, 2)),
                Some("author") => UciLine::IdAuthor(rest_after(line, 2)),
                _ => UciLine::Other(line.to_owned()),
            },
            Some("option") => parse_option_name(line),
            Some("bestmove") => {
                let best = tokens.next().map(str::to_owned);
                let ponder = match tokens.next() {
                    Some("ponder") => tokens.next().map(str::to_owned),
                    _ => None,
                };
                UciLine::BestMove { best, ponder }
            }
            Some("info") => UciLine::Info(parse_info(tokens)),
            _ => UciLine::Other(line.to_owned()),
        })
    }
}

/// The text of `line` after its first `n` whitespace-separated tokens, with inner spacing kept.
fn rest_after(line: &str, n: usize) -> String {
    let mut rest = line;
    for _ in 0..n {
        rest = rest.trim_start();
        rest = rest.find(char::is_whitespace).map_or("", |i| &rest[i..]);
    }
    rest.trim().to_owned()
}

/// Option names may contain spaces (`Skill Level`), so the name runs up to the ` type ` token.
fn parse_option_name(line: &str) -> UciLine {
    let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
    if tokens.get(1) != Some(&"name") {
        return UciLine::Other(line.to_owned());
    }
    let end = tokens
        .iter()
        .position(|t| *t == "type")
        .unwrap_or(tokens.len());
    if end <= 2 {
        return UciLine::Other(line.to_owned());
    }
    UciLine::Option(tokens[2..end].join(" "))
}

/// Whether `line` is an `info` line that [`UciLine`] reads with a score for line `multipv` (no
/// `multipv` field counts as line 1), found without building its `pv`: a search prints many
/// such lines and only its last one is kept.
pub(crate) fn is_scored_info(line: &str, multipv: u32) -> bool {
    let mut tokens = line.trim().split_ascii_whitespace();
    if tokens.next() != Some("info") {
        return false;
    }
    // The walk of `parse_info`, token for token, keeping only what the answer needs: every field
    // consumes the same tokens there and here, so the two agree on every line.
    let (mut scored, mut line_index) = (false, None);
    while let Some(token) = tokens.next() {
        match token {
            "depth" | "seldepth" | "nodes" | "nps" | "time" => {
                tokens.next();
            }
            "multipv" => line_index = tokens.next().and_then(|t| t.parse::<u32>().ok()),
            "score" => {
                let kind = tokens.next();
                let value = tokens.next().and_then(|t| t.parse::<i32>().ok());
                scored = matches!(kind, Some("cp" | "mate")) && value.is_some();
            }
            "pv" | "string" => break,
            _ => {}
        }
    }
    scored && line_index.unwrap_or(1) == multipv
}

fn parse_info<'a>(mut tokens: impl Iterator<Item = &'a str>) -> InfoLine {
    let mut info = InfoLine::default();
    while let Some(token) = tokens.next() {
        match token {
            "depth" => info.depth = tokens.next().and_then(|t| t.parse().ok()),
            "seldepth" => info.seldepth = tokens.next().and_then(|t| t.parse().ok()),
            "multipv" => info.multipv = tokens.next().and_then(|t| t.parse().ok()),
            "nodes" => info.nodes = tokens.next().and_then(|t| t.parse().ok()),
            "nps" => info.nps = tokens.next().and_then(|t| t.parse().ok()),
            "time" => info.time_ms = tokens.next().and_then(|t| t.parse().ok()),
            "score" => {
                let kind = tokens.next();
                let value = tokens.next().and_then(|t| t.parse().ok());
                info.score = match (kind, value) {
                    (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                    (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                    _ => None,
                };
            }
            "lowerbound" => info.bound = ScoreBound::Lower,
            "upperbound" => info.bound = ScoreBound::Upper,
            // The pv runs to the end of the line in every engine we know.
            "pv" => info.pv = tokens.by_ref().map(str::to_owned).collect(),
            // Free text follows; nothing after it is a field.
            "string" => break,
            _ => {}
        }
    }
    info
}

/// The `setoption` command for one option.
///
/// ```
/// assert_eq!(arena_engine::uci::setoption("Skill Level", "0"), "setoption name Skill Level value 0");
/// ```
pub fn setoption(name: &str, value: &str) -> String {
    if value.is_empty() {
        // Buttons (`Clear Hash`) take no value.
        format!("setoption name {name}")
    } else {
        format!("setoption name {name} value {value}")
    }
}

/// The `position` command: from the start position or a FEN, then the moves played since.
pub fn position(start_fen: Option<&str>, moves: &[String]) -> String {
    let mut command = match start_fen {
        Some(fen) => format!("position fen {}", fen.trim()),
        None => "position startpos".to_owned(),
    };
    if !moves.is_empty() {
        command.push_str(" moves");
        for m in moves {
            command.push(' ');
            command.push_str(m);
        }
    }
    command
}

/// The `go` command for `limits`, restricted to `searchmoves` when that is not empty.
///
/// ```
/// use arena_engine::{SearchLimits, uci::go};
///
/// assert_eq!(go(&SearchLimits::depth(8), &["e2e4".to_owned()]), "go depth 8 searchmoves e2e4");
/// ```
pub fn go(limits: &SearchLimits, searchmoves: &[String]) -> String {
    let mut command = limits.to_string();
    if !searchmoves.is_empty() {
        command.push_str(" searchmoves");
        for m in searchmoves {
            command.push(' ');
            command.push_str(m);
        }
    }
    command
}

/// The clocks a timed search is told about (`go wtime .. btime .. winc .. binc .. movetime ..`),
/// and what the side to move has left, which bounds how long the engine may take before it counts
/// as hung.
///
/// ```
/// use arena_engine::{SearchLimits, uci::{ClockTimes, UciClock, go_clocked}};
///
/// let clock = UciClock {
///     white: Some(ClockTimes { time_ms: 60_000, inc_ms: 600 }),
///     black: Some(ClockTimes { time_ms: 59_400, inc_ms: 600 }),
///     movetime_ms: None,
///     allowance_ms: 60_000,
/// };
/// assert_eq!(
///     go_clocked(&SearchLimits::default(), &clock),
///     "go wtime 60000 btime 59400 winc 600 binc 600"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UciClock {
    /// White's base clock, if White plays with one.
    pub white: Option<ClockTimes>,
    /// Black's base clock, if Black plays with one.
    pub black: Option<ClockTimes>,
    /// `go movetime N`: the longest this one search may take (a per-move limit).
    pub movetime_ms: Option<u64>,
    /// What the side to move may use on this move at most (its clock, or its per-move limit if
    /// smaller): the hang deadline is this plus the engine's margin.
    pub allowance_ms: u64,
}

/// One side's base clock as UCI sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockTimes {
    /// Time left on the clock (`wtime`/`btime`), in milliseconds.
    pub time_ms: u64,
    /// Increment per move (`winc`/`binc`), in milliseconds.
    pub inc_ms: u64,
}

/// The `go` command for `limits` under `clock`: the limits' nodes and depth, each side's base
/// clock, and `movetime` as the smaller of the limits' and the clock's.
pub fn go_clocked(limits: &SearchLimits, clock: &UciClock) -> String {
    let movetime = match (limits.movetime_ms, clock.movetime_ms) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut command = SearchLimits {
        movetime_ms: None,
        ..*limits
    }
    .to_string();
    if let Some(w) = clock.white {
        command.push_str(&format!(" wtime {}", w.time_ms));
    }
    if let Some(b) = clock.black {
        command.push_str(&format!(" btime {}", b.time_ms));
    }
    if let Some(w) = clock.white {
        command.push_str(&format!(" winc {}", w.inc_ms));
    }
    if let Some(b) = clock.black {
        command.push_str(&format!(" binc {}", b.inc_ms));
    }
    if let Some(ms) = movetime {
        command.push_str(&format!(" movetime {ms}"));
    }
    command
}

/// How far a search may go. At least one limit must be set; with several, the engine stops at the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchLimits {
    /// `go nodes N`.
    pub nodes: Option<u64>,
    /// `go depth N`.
    pub depth: Option<u32>,
    /// `go movetime N`, in milliseconds.
    pub movetime_ms: Option<u64>,
}

impl SearchLimits {
    /// A search of `n` nodes.
    pub fn nodes(n: u64) -> SearchLimits {
        SearchLimits {
            nodes: Some(n),
            ..SearchLimits::default()
        }
    }

    /// A search to depth `d`.
    pub fn depth(d: u32) -> SearchLimits {
        SearchLimits {
            depth: Some(d),
            ..SearchLimits::default()
        }
    }

    /// A search of `ms` milliseconds.
    pub fn movetime_ms(ms: u64) -> SearchLimits {
        SearchLimits {
            movetime_ms: Some(ms),
            ..SearchLimits::default()
        }
    }

    /// True when no limit is set: such a `go` would search forever.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_none() && self.depth.is_none() && self.movetime_ms.is_none()
    }
}

impl fmt::Display for SearchLimits {
    /// The `go` command for these limits, e.g. `go nodes 1000 depth 8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("go")?;
        if let Some(n) = self.nodes {
            write!(f, " nodes {n}")?;
        }
        if let Some(d) = self.depth {
            write!(f, " depth {d}")?;
        }
        if let Some(ms) = self.movetime_ms {
            write!(f, " movetime {ms}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> UciLine {
        line.parse().expect("parsing is infallible")
    }

    #[test]
    fn scored_info_check_agrees_with_the_full_parse() {
        let lines = [
            "info depth 9 seldepth 6 multipv 1 score cp -72 nodes 2000 nps 400000 hashfull 1 tbhits 0 time 5 pv b8b1 g1h2 d3c5",
            "info depth 8 seldepth 6 multipv 1 score cp 60 upperbound nodes 2000 pv h2h3",
            "info depth 12 score mate -3 pv e2e4",
            "info depth 12 multipv 2 score cp 10 pv e2e4",
            "info string NNUE evaluation using nn-ad9b42354671.nnue enabled",
            "info string score cp 10",
            "info depth 3 currmove e2e4 currmovenumber 1",
            "info depth score cp 10",
            "info score cp x",
            "info depth 5 pv e2e4 score cp 3",
            "info nodes score cp 5",
            "info multipv x score cp 5",
            "info multipv 2 score cp 5 multipv 1",
            "info score cp 5 score wdl 1",
            "info score cp 5 lowerbound time 3 nps 9",
            "  info multipv 1 score cp 3",
            "information score cp 3",
            "bestmove e2e4 ponder e7e5",
            "",
        ];
        for line in lines {
            for multipv in [1, 2] {
                let full = matches!(parse(line), UciLine::Info(i)
                    if i.score.is_some() && i.multipv.unwrap_or(1) == multipv);
                assert_eq!(
                    is_scored_info(line, multipv),
                    full,
                    "{line:?}, multipv {multipv}"
                );
            }
        }
        assert!(is_scored_info(lines[0], 1) && !is_scored_info(lines[4], 1));
    }

    fn info(line: &str) -> InfoLine {
        match parse(line) {
            UciLine::Info(info) => info,
            other => panic!("expected an info line, got {other:?}"),
        }
    }

    #[test]
    fn handshake_lines_from_stockfish() {
        assert_eq!(
            parse("id name Stockfish 15.1"),
            UciLine::IdName("Stockfish 15.1".into())
        );
        assert_eq!(
            parse("id author the Stockfish developers (see AUTHORS file)"),
            UciLine::IdAuthor("the Stockfish developers (see AUTHORS file)".into())
        );
        assert_eq!(parse("uciok"), UciLine::UciOk);
        assert_eq!(parse("readyok\r"), UciLine::ReadyOk);
        assert_eq!(
            parse("option name Skill Level type spin default 20 min 0 max 20"),
            UciLine::Option("Skill Level".into())
        );
        assert_eq!(
            parse("option name Clear Hash type button"),
            UciLine::Option("Clear Hash".into())
        );
        assert!(matches!(
            parse("Stockfish 15.1 by the Stockfish developers (see AUTHORS file)"),
            UciLine::Other(_)
        ));
    }

    #[test]
    fn full_info_line_from_stockfish() {
        let i = info(
            "info depth 12 seldepth 18 multipv 1 score cp -30 nodes 80232 nps 486254 hashfull 28 \
             tbhits 0 time 165 pv c7c5 g1f3 d7d6 b1c3",
        );
        assert_eq!(i.depth, Some(12));
        assert_eq!(i.seldepth, Some(18));
        assert_eq!(i.multipv, Some(1));
        assert_eq!(i.score, Some(Score::Cp(-30)));
        assert_eq!(i.bound, ScoreBound::Exact);
        assert_eq!(i.nodes, Some(80232));
        assert_eq!(i.nps, Some(486254));
        assert_eq!(i.time_ms, Some(165));
        assert_eq!(i.pv, ["c7c5", "g1f3", "d7d6", "b1c3"]);
    }

    #[test]
    fn mate_scores_and_bounds() {
        let i = info(
            "info depth 5 seldepth 2 multipv 1 score mate 1 nodes 292 nps 292000 hashfull 0 tbhits 0 time 1 pv a1a8",
        );
        assert_eq!(i.score, Some(Score::Mate(1)));
        assert_eq!(
            info("info depth 0 score mate 0").score,
            Some(Score::Mate(0))
        );
        assert_eq!(
            info("info depth 9 score mate -3 pv e1e2").score,
            Some(Score::Mate(-3))
        );
        let lower =
            info("info depth 20 seldepth 27 multipv 1 score cp 41 lowerbound nodes 123 pv e2e4");
        assert_eq!(
            (lower.score, lower.bound),
            (Some(Score::Cp(41)), ScoreBound::Lower)
        );
        let upper =
            info("info depth 20 seldepth 27 multipv 1 score cp 12 upperbound nodes 123 pv e2e4");
        assert_eq!(upper.bound, ScoreBound::Upper);
        let wdl = info("info depth 3 score cp 20 wdl 395 604 1 nodes 10 pv d2d4");
        assert_eq!((wdl.score, wdl.nodes), (Some(Score::Cp(20)), Some(10)));
    }

    #[test]
    fn info_string_and_currmove_lines_carry_no_score() {
        let s = info("info string NNUE evaluation using nn-ad9b42354671.nnue enabled depth 3");
        assert_eq!(s, InfoLine::default());
        let c = info("info depth 24 currmove e2e4 currmovenumber 1");
        assert_eq!((c.depth, c.score, c.pv.len()), (Some(24), None, 0));
    }

    #[test]
    fn bestmove_lines() {
        assert_eq!(
            parse("bestmove c7c5 ponder g1f3"),
            UciLine::BestMove {
                best: Some("c7c5".into()),
                ponder: Some("g1f3".into())
            }
        );
        assert_eq!(
            parse("bestmove a1a8"),
            UciLine::BestMove {
                best: Some("a1a8".into()),
                ponder: None
            }
        );
        assert_eq!(
            parse("bestmove (none)"),
            UciLine::BestMove {
                best: Some("(none)".into()),
                ponder: None
            }
        );
        assert_eq!(
            parse("bestmove"),
            UciLine::BestMove {
                best: None,
                ponder: None
            }
        );
    }

    #[test]
    fn commands() {
        assert_eq!(setoption("Hash", "16"), "setoption name Hash value 16");
        assert_eq!(setoption("Clear Hash", ""), "setoption name Clear Hash");
        assert_eq!(position(None, &[]), "position startpos");
        let moves = vec!["e2e4".to_owned(), "e7e5".to_owned()];
        assert_eq!(position(None, &moves), "position startpos moves e2e4 e7e5");
        assert_eq!(
            position(Some("8/8/8/8/8/8/8/K6k w - - 0 1"), &moves[..1]),
            "position fen 8/8/8/8/8/8/8/K6k w - - 0 1 moves e2e4"
        );
        assert_eq!(SearchLimits::nodes(1000).to_string(), "go nodes 1000");
        let all = SearchLimits {
            nodes: Some(5),
            depth: Some(3),
            movetime_ms: Some(100),
        };
        assert_eq!(all.to_string(), "go nodes 5 depth 3 movetime 100");
        assert!(SearchLimits::default().is_empty());
        assert_eq!(go(&SearchLimits::nodes(5), &[]), "go nodes 5");
        assert_eq!(
            go(&SearchLimits::depth(3), &moves),
            "go depth 3 searchmoves e2e4 e7e5"
        );
    }

    #[test]
    fn scores_serialise_as_tagged_objects() {
        assert_eq!(
            serde_json::to_string(&Score::Cp(-30)).unwrap(),
            r#"{"cp":-30}"#
        );
        assert_eq!(
            serde_json::to_string(&Score::Mate(2)).unwrap(),
            r#"{"mate":2}"#
        );
        let back: Score = serde_json::from_str(r#"{"mate":-1}"#).unwrap();
        assert_eq!(back, Score::Mate(-1));
    }

    #[test]
    fn clocked_go_lines() {
        let both = |w: u64, b: u64| UciClock {
            white: Some(ClockTimes {
                time_ms: w,
                inc_ms: 600,
            }),
            black: Some(ClockTimes {
                time_ms: b,
                inc_ms: 600,
            }),
            movetime_ms: None,
            allowance_ms: w,
        };
        assert_eq!(
            go_clocked(&SearchLimits::default(), &both(60_000, 1_234)),
            "go wtime 60000 btime 1234 winc 600 binc 600"
        );
        // Node and depth limits stay; the smaller movetime wins.
        let mut clock = both(5_000, 7_000);
        clock.movetime_ms = Some(900);
        assert_eq!(
            go_clocked(&SearchLimits::nodes(5000), &clock),
            "go nodes 5000 wtime 5000 btime 7000 winc 600 binc 600 movetime 900"
        );
        assert_eq!(
            go_clocked(&SearchLimits::movetime_ms(300), &clock),
            "go wtime 5000 btime 7000 winc 600 binc 600 movetime 300"
        );
        // A per-move clock alone, and one side without a base clock.
        let per_move = UciClock {
            movetime_ms: Some(950),
            allowance_ms: 1000,
            ..UciClock::default()
        };
        assert_eq!(
            go_clocked(&SearchLimits::default(), &per_move),
            "go movetime 950"
        );
        let one_sided = UciClock {
            black: Some(ClockTimes {
                time_ms: 2000,
                inc_ms: 0,
            }),
            ..per_move
        };
        assert_eq!(
            go_clocked(&SearchLimits::depth(3), &one_sided),
            "go depth 3 btime 2000 binc 0 movetime 950"
        );
    }

    #[test]
    fn limits_deserialize() {
        let limits: SearchLimits = serde_json::from_str(r#"{"depth": 8}"#).expect("valid limits");
        assert_eq!(limits, SearchLimits::depth(8));
        assert!(serde_json::from_str::<SearchLimits>(r#"{"dept": 8}"#).is_err());
    }
}
