//! arena's built-in engine ladder: the rungs' settings and their calibrated Elo, shipped in
//! `data/ladder/calibration.json` and compiled into the binary, and the fit that produces that
//! file from the calibration's games (`tournaments/calibrate.lua`, kept as PGN beside it).
//!
//! The fit is [`super::ladder::fit`]: maximum-likelihood Elo with one player (the random mover)
//! pinned at an external rating, and the file records everything needed to redo it (anchor,
//! virtual draws, the games file), so a test can check that the shipped numbers follow from the
//! shipped games. The PGN is read with `pgn-reader`, tags only: the fit needs names and results.

use std::{collections::BTreeMap, io, ops::ControlFlow, sync::OnceLock};

use pgn_reader::{RawTag, Reader, Visitor};
use serde::{Deserialize, Serialize};

use super::{
    RatingError,
    ladder::{self, Game, LadderConfig},
};

/// The shipped calibration file, as compiled in.
const SHIPPED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/ladder/calibration.json"
));

/// A calibration of the ladder: how it was made and every rung's fitted Elo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The engine the rungs ran, as it names itself (`id name`).
    pub engine: String,
    /// When the calibration was fitted (UTC, `YYYY-MM-DD`).
    pub date: String,
    /// The machine the games were played on, and how long they took: for the reader.
    pub played_on: String,
    /// The player held at a known rating, and where that rating comes from.
    pub anchor: AnchorSource,
    /// Drawn games the fit added to every pair that met (see [`LadderConfig::virtual_draws`]).
    pub virtual_draws: f64,
    /// The games' PGN file, relative to the calibration file.
    pub games_file: String,
    /// Finished, rated games behind the fit.
    pub games: u32,
    /// The rungs, weakest first (script order).
    pub rungs: Vec<Rung>,
}

/// The external rating a calibration is pinned to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnchorSource {
    /// The rung held fixed.
    pub player: String,
    /// Its rating.
    pub elo: f64,
    /// Its standard error on the external scale (0 when the source gives none).
    pub se: f64,
    /// Where the rating comes from.
    pub source: String,
}

/// One rung: its player settings and its fitted rating.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rung {
    /// The rung's name (`random`, `mix25`, `sf-n1024`, ...).
    pub name: String,
    /// Elo on the anchor's scale.
    pub elo: f64,
    /// Standard error of `elo` relative to the anchor (0 for the anchor itself).
    pub se: f64,
    /// Games it played in the calibration.
    pub games: u32,
    /// Points it scored.
    pub score: f64,
    /// Games it drew.
    pub draws: u32,
    /// The player as a script writes it (`kind`, `command`, `options`, `limits`, ...), without
    /// its name and anchor fields.
    pub player: serde_json::Map<String, serde_json::Value>,
}

impl Calibration {
    /// The calibration compiled into this binary.
    ///
    /// # Panics
    /// Never in a released binary: a test parses the shipped file.
    pub fn builtin() -> &'static Calibration {
        static CELL: OnceLock<Calibration> = OnceLock::new();
        CELL.get_or_init(|| {
            serde_json::from_str(SHIPPED).expect("data/ladder/calibration.json parses")
        })
    }

    /// The rung called `name`.
    pub fn rung(&self, name: &str) -> Option<&Rung> {
        self.rungs.iter().find(|r| r.name == name)
    }

    /// The fit's settings: the anchor pinned, this file's virtual draws.
    pub fn config(&self) -> LadderConfig {
        LadderConfig {
            anchor: self.anchor.player.clone(),
            anchor_rating: self.anchor.elo,
            virtual_draws: self.virtual_draws,
        }
    }
}

/// Fits `games` with `config` and returns the rungs in `players` order (name and settings), each
/// with its rating; players without a game are left out.
///
/// # Errors
/// As [`ladder::fit`].
pub fn fit_rungs(
    players: &[(String, serde_json::Map<String, serde_json::Value>)],
    games: &[Game],
    config: &LadderConfig,
) -> Result<Vec<Rung>, RatingError> {
    let fitted = ladder::fit(games, config)?;
    let by_name: BTreeMap<&str, &ladder::Fitted> =
        fitted.iter().map(|f| (f.name.as_str(), f)).collect();
    Ok(players
        .iter()
        .filter_map(|(name, settings)| {
            let f = by_name.get(name.as_str())?;
            let mut player = settings.clone();
            for key in ["name", "anchor_elo", "anchor_se", "_defined_at"] {
                player.remove(key);
            }
            drop_nulls(&mut player);
            Some(Rung {
                name: name.clone(),
                elo: f.rating,
                se: f.se,
                games: f.games,
                score: f.score,
                draws: f.draws,
                player,
            })
        })
        .collect())
}

/// Removes unset (`null`) settings, at any depth: a script leaves them out, and Lua has no null.
fn drop_nulls(map: &mut serde_json::Map<String, serde_json::Value>) {
    map.retain(|_, v| !v.is_null());
    for v in map.values_mut() {
        if let serde_json::Value::Object(inner) = v {
            drop_nulls(inner);
        }
    }
}

/// The decided and drawn games of a PGN text, as ladder games (`White` scoring the result);
/// games with result `*` (unfinished or void) are skipped.
///
/// # Errors
/// A PGN the reader cannot parse.
pub fn games_from_pgn(pgn: &str) -> io::Result<Vec<Game>> {
    let mut reader = Reader::new(io::Cursor::new(pgn.as_bytes()));
    let mut games = Vec::new();
    while let Some(tags) = reader.read_game(&mut TagVisitor)? {
        let score = match tags.get("Result").map(String::as_str) {
            Some("1-0") => 1.0,
            Some("0-1") => 0.0,
            Some("1/2-1/2") => 0.5,
            _ => continue,
        };
        if let (Some(white), Some(black)) = (tags.get("White"), tags.get("Black")) {
            games.push(Game::new(white.clone(), black.clone(), score));
        }
    }
    Ok(games)
}

/// Collects a game's tags and skips its moves.
struct TagVisitor;

impl Visitor for TagVisitor {
    type Tags = BTreeMap<String, String>;
    type Movetext = BTreeMap<String, String>;
    type Output = BTreeMap<String, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(BTreeMap::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.insert(
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        );
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        // Only the tags matter: skip the moves.
        ControlFlow::Break(tags)
    }

    fn end_game(&mut self, tags: Self::Movetext) -> Self::Output {
        tags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_calibration_parses_and_pins_its_anchor() {
        let c = Calibration::builtin();
        let anchor = c.rung(&c.anchor.player).expect("the anchor is a rung");
        assert_eq!(anchor.elo, c.anchor.elo);
        assert_eq!(anchor.se, 0.0);
        assert!(c.rungs.len() >= 2);
        for r in &c.rungs {
            assert!(r.elo.is_finite() && r.se.is_finite(), "{r:?}");
            assert!(r.player.contains_key("kind"), "{r:?}");
        }
    }

    /// The shipped numbers follow from the shipped games: the fit, redone from the PGN with the
    /// file's own settings, gives every rung's Elo, error and counts back.
    #[test]
    fn the_fit_reproduces_the_shipped_calibration_from_its_shipped_games() {
        let c = Calibration::builtin();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/ladder")
            .join(&c.games_file);
        let pgn = std::fs::read_to_string(&path).expect("the shipped games");
        let games = games_from_pgn(&pgn).unwrap();
        assert_eq!(games.len(), c.games as usize);
        let players: Vec<_> = c
            .rungs
            .iter()
            .map(|r| (r.name.clone(), r.player.clone()))
            .collect();
        let refit = fit_rungs(&players, &games, &c.config()).unwrap();
        assert_eq!(refit.len(), c.rungs.len());
        for (got, shipped) in refit.iter().zip(&c.rungs) {
            assert_eq!(got.name, shipped.name);
            assert!(
                (got.elo - shipped.elo).abs() < 1e-6,
                "{got:?} vs {shipped:?}"
            );
            assert!((got.se - shipped.se).abs() < 1e-6, "{got:?} vs {shipped:?}");
            assert_eq!(
                (got.games, got.score, got.draws),
                (shipped.games, shipped.score, shipped.draws)
            );
            assert_eq!(got.player, shipped.player);
        }
    }

    #[test]
    fn pgn_tags_become_games_and_unfinished_games_are_skipped() {
        let pgn = "[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\n1. e4 e5 1-0\n\n\
                   [White \"b\"]\n[Black \"a\"]\n[Result \"*\"]\n\n1. d4 *\n\n\
                   [White \"b\"]\n[Black \"a\"]\n[Result \"1/2-1/2\"]\n\n1. c4 1/2-1/2\n";
        let games = games_from_pgn(pgn).unwrap();
        assert_eq!(
            games,
            vec![Game::new("a", "b", 1.0), Game::new("b", "a", 0.5)]
        );
    }
}
