//! `adjudication = { ... }` of a tournament as a script writes it: the engine, its search per ply,
//! cutechess's resign and draw rules and the verdict at the move limit, with the checks a valid
//! one passes. The game's adjudicator that applies them is `tournament::adjudicate`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{EngineOptionValue, PlayerSpec};
use crate::engine;

/// The search per ply when the adjudication gives no limit: modest (a few tens of milliseconds
/// for Stockfish on one thread) and reproducible, unlike a time limit.
pub const DEFAULT_NODES: u64 = 50_000;

/// The move-limit verdict's threshold when none is given: two pawns.
pub const DEFAULT_LIMIT_CP: i64 = 200;

/// `adjudication = { ... }` of a tournament: the engine, its search per ply, and the rules.
/// Off when absent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AdjudicationSpec {
    /// The engine: an engine player's name (its command, arguments and options), or a command (a
    /// path, or a name looked up on `PATH` and in `/usr/games`).
    #[serde(default)]
    pub engine: Option<String>,
    /// Command-line arguments, for an `engine` given as a command.
    #[serde(default)]
    pub args: Vec<String>,
    /// UCI options, set after those of an engine player (`Threads` 1 and `Hash` 16 unless given).
    #[serde(default)]
    pub options: BTreeMap<String, EngineOptionValue>,
    /// `go nodes N` per ply (the default, [`DEFAULT_NODES`], when no limit is given).
    #[serde(default)]
    pub nodes: Option<u64>,
    /// `go depth N` per ply instead.
    #[serde(default)]
    pub depth: Option<u32>,
    /// `go movetime N` per ply instead (not reproducible).
    #[serde(default)]
    pub movetime_ms: Option<u64>,
    /// cutechess's resign rule.
    #[serde(default)]
    pub resign: Option<ResignRule>,
    /// cutechess's draw rule.
    #[serde(default)]
    pub draw: Option<DrawRule>,
    /// The verdict on games that reach the move limit, stored apart from their result.
    #[serde(default)]
    pub move_limit: Option<MoveLimitRule>,
}

/// cutechess's `-resign movecount=N score=S [twosided=true]`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ResignRule {
    /// The losing side's score is at most minus this, in centipawns.
    pub score_cp: i64,
    /// For this many consecutive moves of the losing side.
    pub moves: i64,
    /// Also require the winning side's score at or above `score_cp` for `moves` of its moves.
    #[serde(default)]
    pub twosided: bool,
}

/// cutechess's `-draw movenumber=N movecount=M score=S`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DrawRule {
    /// Not before this many full moves are on the board.
    pub after_move: i64,
    /// Both sides' scores within this many centipawns of zero.
    pub score_cp: i64,
    /// For this many consecutive moves of each side.
    pub moves: i64,
}

/// The verdict at the move limit: who the engine's evaluation of the final position favours.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct MoveLimitRule {
    /// A win needs at least this score, White's view (default [`DEFAULT_LIMIT_CP`]).
    #[serde(default)]
    pub score_cp: Option<i64>,
    /// Another engine for the verdict (as `adjudication.engine`; default the adjudication's).
    #[serde(default)]
    pub engine: Option<String>,
    /// `go nodes N` for the verdict's search (default: the adjudication's limit).
    #[serde(default)]
    pub nodes: Option<u64>,
    /// `go depth N` instead.
    #[serde(default)]
    pub depth: Option<u32>,
    /// `go movetime N` instead.
    #[serde(default)]
    pub movetime_ms: Option<u64>,
}

impl MoveLimitRule {
    /// The threshold in centipawns.
    pub fn threshold_cp(&self) -> i64 {
        self.score_cp.unwrap_or(DEFAULT_LIMIT_CP)
    }
}

/// The first given of the three limits, or `None`.
pub(crate) fn given_limits(
    nodes: Option<u64>,
    depth: Option<u32>,
    movetime_ms: Option<u64>,
) -> Option<engine::SearchLimits> {
    (nodes.is_some() || depth.is_some() || movetime_ms.is_some()).then_some(engine::SearchLimits {
        nodes,
        depth,
        movetime_ms,
    })
}

/// The problems of one set of limits: several given, or one of 0.
fn limit_problems(
    what: &str,
    nodes: Option<u64>,
    depth: Option<u32>,
    movetime_ms: Option<u64>,
) -> Vec<String> {
    let mut out = Vec::new();
    let given = [nodes.is_some(), depth.is_some(), movetime_ms.is_some()];
    if given.iter().filter(|g| **g).count() > 1 {
        out.push(format!(
            "{what}give one of `nodes`, `depth` and `movetime_ms`, not several"
        ));
    }
    for (name, zero) in [
        ("nodes", nodes == Some(0)),
        ("depth", depth == Some(0)),
        ("movetime_ms", movetime_ms == Some(0)),
    ] {
        if zero {
            out.push(format!("{what}`{name}` must be at least 1"));
        }
    }
    out
}

impl AdjudicationSpec {
    /// Every value that parses but cannot work, one message per problem: a rule without an
    /// engine, counts or thresholds below their minimum, an engine naming a player that is not an
    /// engine, no rule at all.
    pub fn problems(&self, players: &[PlayerSpec]) -> Vec<String> {
        let mut out = Vec::new();
        if self.resign.is_none() && self.draw.is_none() && self.move_limit.is_none() {
            out.push(
                "no rule: give `resign`, `draw` or `move_limit` (or leave `adjudication` out)"
                    .to_owned(),
            );
        }
        let needs_engine = self.resign.is_some()
            || self.draw.is_some()
            || self.move_limit.as_ref().is_some_and(|m| m.engine.is_none());
        if needs_engine && self.engine.as_deref().is_none_or(str::is_empty) {
            out.push(
                "a rule needs an engine: add `engine = \"stockfish\"` (a command, or an engine \
                 player's name)"
                    .to_owned(),
            );
        }
        let mut engine_refs = vec![("engine", self.engine.as_deref())];
        if let Some(m) = &self.move_limit {
            engine_refs.push(("move_limit.engine", m.engine.as_deref()));
        }
        for (key, name) in engine_refs {
            let Some(name) = name else { continue };
            if let Some(p) = players.iter().find(|p| p.name() == name)
                && !matches!(p, PlayerSpec::Engine(_))
            {
                out.push(format!(
                    "`{key} = \"{name}\"` names a player that is a {} player, not an engine",
                    p.kind()
                ));
            }
        }
        out.extend(limit_problems("", self.nodes, self.depth, self.movetime_ms));
        if let Some(r) = &self.resign {
            if r.moves < 1 {
                out.push(format!(
                    "`resign.moves` must be at least 1, not {}",
                    r.moves
                ));
            }
            if r.score_cp < 1 {
                out.push(format!(
                    "`resign.score_cp` must be at least 1 (a score of minus that resigns), not {}",
                    r.score_cp
                ));
            }
        }
        if let Some(d) = &self.draw {
            if d.moves < 1 {
                out.push(format!("`draw.moves` must be at least 1, not {}", d.moves));
            }
            if d.after_move < 1 {
                out.push(format!(
                    "`draw.after_move` must be at least 1 (cutechess reads 0 as no draw rule), not {}",
                    d.after_move
                ));
            }
            if d.score_cp < 0 {
                out.push(format!(
                    "`draw.score_cp` must be at least 0, not {}",
                    d.score_cp
                ));
            }
        }
        if let Some(m) = &self.move_limit {
            if m.threshold_cp() < 1 {
                out.push(format!(
                    "`move_limit.score_cp` must be at least 1, not {}",
                    m.threshold_cp()
                ));
            }
            out.extend(limit_problems(
                "move_limit: ",
                m.nodes,
                m.depth,
                m.movetime_ms,
            ));
        }
        out
    }

    /// The search per ply: the given limit, else [`DEFAULT_NODES`].
    pub fn limits(&self) -> engine::SearchLimits {
        given_limits(self.nodes, self.depth, self.movetime_ms)
            .unwrap_or_else(|| engine::SearchLimits::nodes(DEFAULT_NODES))
    }

    /// Whether any rule is judged as the game goes (resign or draw).
    pub fn live(&self) -> bool {
        self.resign.is_some() || self.draw.is_some()
    }
}
