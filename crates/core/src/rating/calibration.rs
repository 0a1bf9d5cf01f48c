//! arena's built-in engine ladder: the rungs' settings and their calibrated Elo, shipped in
//! `data/ladder/calibration.json` and compiled into the binary, and the fit that produces that
//! file from the calibration's games (`tournaments/calibrate.lua`, kept as PGN beside it).
//!
//! The fit is [`super::ladder::fit`]: maximum-likelihood Elo with one player (the random mover)
//! pinned at an external rating, and the file records everything needed to redo it (anchor,
//! virtual draws, the games file), so a test can check that the shipped numbers follow from the
//! shipped games. The PGN is read with `pgn-reader`, tags only: the fit needs names and results.

use std::{
    collections::BTreeMap,
    io::{self, Write},
    ops::ControlFlow,
    path::Path,
    sync::OnceLock,
};

use crate::lines::read_to_string_limited;
use flate2::{Compression, read::GzDecoder, write::GzEncoder};
use pgn_reader::{RawTag, Reader, Visitor};
use serde::{Deserialize, Serialize};

use super::{
    RatingError, Z95,
    ladder::{self, Game, LadderConfig},
};

/// The shipped calibration file, as compiled in.
const SHIPPED: &str = include_str!(concat!(
    concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
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
    /// The second, independent scale: Stockfish's `UCI_LimitStrength` rungs at their nominal
    /// `UCI_Elo` (absent from a calibration without such rungs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uci_elo: Option<UciScale>,
    /// The rungs, weakest first (script order).
    pub rungs: Vec<Rung>,
}

/// Stockfish's `UCI_Elo` scale against the ladder's: the `UCI_LimitStrength` rungs' nominal
/// ratings, where the ladder fit (pinned to [`Calibration::anchor`]) places them, and the offset
/// between the two scales.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UciScale {
    /// The time control the `UCI_Elo` rungs played at (Stockfish documents its calibration at
    /// 60 s + 0.6 s).
    pub time_control: String,
    /// Every `UCI_Elo` rung: nominal rating, ladder-scale rating and their difference.
    pub pinned: Vec<PinnedRung>,
    /// `UCI_Elo` minus the ladder's Elo, at the ladder's anchor (the random mover): where the
    /// second fit puts it, less its ladder rating.
    pub offset: f64,
    /// The offset's standard error: the anchor's in the second fit, relative to the pinned
    /// `UCI_Elo` rungs. Add the anchor's own error in quadrature to compare the two external
    /// scales.
    pub offset_se: f64,
}

/// One `UCI_LimitStrength` rung on both scales.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedRung {
    /// The rung's name.
    pub name: String,
    /// Its `UCI_Elo` setting.
    pub nominal: f64,
    /// Its Elo in the ladder fit (the anchor's scale).
    pub ladder_elo: f64,
    /// That Elo's standard error relative to the anchor.
    pub ladder_se: f64,
}

impl PinnedRung {
    /// `nominal − ladder_elo`: this rung's own estimate of the offset between the scales.
    pub fn difference(&self) -> f64 {
        self.nominal - self.ladder_elo
    }
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
    /// Elo in the second fit, the `UCI_Elo` rungs pinned at their nominal ratings (see
    /// [`Calibration::uci_elo`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uci_elo: Option<f64>,
    /// Standard error of `uci_elo` relative to the pinned rungs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uci_se: Option<f64>,
    /// The player as a script writes it (`kind`, `command`, `options`, `limits`, ...), without
    /// its name and anchor fields.
    pub player: serde_json::Map<String, serde_json::Value>,
}

impl Rung {
    /// The `UCI_Elo` a `UCI_LimitStrength` rung plays at, from its engine options.
    pub fn nominal_uci_elo(&self) -> Option<f64> {
        nominal_uci_elo(&self.player)
    }
}

/// The `UCI_Elo` of player settings with `UCI_LimitStrength` switched on (options as a script
/// writes them: booleans, numbers or strings).
pub fn nominal_uci_elo(player: &serde_json::Map<String, serde_json::Value>) -> Option<f64> {
    let options = player.get("options")?.as_object()?;
    let on = match options.get("UCI_LimitStrength")? {
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::String(s) => s.eq_ignore_ascii_case("true"),
        _ => false,
    };
    if !on {
        return None;
    }
    match options.get("UCI_Elo")? {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
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
                uci_elo: None,
                uci_se: None,
                player,
            })
        })
        .collect())
}

/// The second fit: the `UCI_LimitStrength` rungs among `rungs` pinned at their nominal
/// `UCI_Elo` ([`ladder::fit_pinned`]), which fills every rung's `uci_elo`/`uci_se`, and the
/// offset between that scale and the ladder's. `None` when no rung limits its strength.
///
/// The offset is where the second fit puts the ladder's anchor (`anchor`, rated `anchor_elo` on
/// the ladder) less `anchor_elo`, and its error is the anchor's in the second fit: maximum
/// likelihood weighs every `UCI_Elo` rung by its games and accounts for the errors they share.
///
/// # Errors
/// As [`ladder::fit_pinned`], and [`RatingError::UnknownPlayer`] when the anchor is not rated.
pub fn fit_uci_scale(
    rungs: &mut [Rung],
    games: &[Game],
    config: &LadderConfig,
    time_control: &str,
) -> Result<Option<UciScale>, RatingError> {
    let pinned: Vec<PinnedRung> = rungs
        .iter()
        .filter_map(|r| {
            Some(PinnedRung {
                name: r.name.clone(),
                nominal: r.nominal_uci_elo()?,
                ladder_elo: r.elo,
                ladder_se: r.se,
            })
        })
        .collect();
    if pinned.is_empty() {
        return Ok(None);
    }
    let pins: Vec<(String, f64)> = pinned.iter().map(|p| (p.name.clone(), p.nominal)).collect();
    let fitted = ladder::fit_pinned(games, &pins, config.virtual_draws)?;
    for rung in rungs.iter_mut() {
        if let Some(f) = fitted.iter().find(|f| f.name == rung.name) {
            rung.uci_elo = Some(f.rating);
            rung.uci_se = Some(f.se);
        }
    }
    let anchor = fitted
        .iter()
        .find(|f| f.name == config.anchor)
        .ok_or_else(|| RatingError::UnknownPlayer(config.anchor.clone()))?;
    Ok(Some(UciScale {
        time_control: time_control.to_owned(),
        pinned,
        offset: anchor.rating - config.anchor_rating,
        offset_se: anchor.se,
    }))
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

/// The name of the shipped games file, beside `calibration.json`.
pub const GAMES_FILE: &str = "calibrate.pgn.gz";

/// Writes `pgn` to `path`, gzip-compressed when the name ends in `.gz` (the shipped games
/// shrink about fivefold).
///
/// # Errors
/// The file cannot be written.
pub fn write_games_file(path: &Path, pgn: &str) -> io::Result<()> {
    let file = std::fs::File::create(path)?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut gz = GzEncoder::new(io::BufWriter::new(file), Compression::best());
        gz.write_all(pgn.as_bytes())?;
        gz.finish()?.flush()
    } else {
        let mut out = io::BufWriter::new(file);
        out.write_all(pgn.as_bytes())?;
        out.flush()
    }
}

/// The largest games file read (decompressed), 256 MiB, as an opening book.
pub(crate) const MAX_GAMES_FILE_BYTES: u64 = 256 << 20;

/// The games of a PGN file (gzip-compressed when its name ends in `.gz`), as
/// [`games_from_pgn`] reads them.
///
/// # Errors
/// The file cannot be read or decompressed, or does not parse.
pub fn read_games_file(path: &Path) -> io::Result<Vec<Game>> {
    let file = std::fs::File::open(path)?;
    // Bounded after decompression, so that a small archive cannot fill the memory.
    let text = if path.extension().is_some_and(|e| e == "gz") {
        read_to_string_limited(
            GzDecoder::new(io::BufReader::new(file)),
            MAX_GAMES_FILE_BYTES,
        )?
    } else {
        read_to_string_limited(io::BufReader::new(file), MAX_GAMES_FILE_BYTES)?
    };
    games_from_pgn(&text)
}

/// The two fits side by side, one line per rung, then the offset between the scales: what
/// `arena calibrate` prints and the README shows.
pub fn side_by_side(c: &Calibration) -> String {
    let mut out = format!(
        "{:<10} {:>9} {:>7} {:>9} {:>7} {:>8} {:>6} {:>7}\n",
        "rung", "ladder", "±95%", "UCI fit", "±95%", "UCI_Elo", "games", "score"
    );
    let dash = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.1}"));
    for r in &c.rungs {
        out.push_str(&format!(
            "{:<10} {:>9.1} {:>7.1} {:>9} {:>7} {:>8} {:>6} {:>6.1}%\n",
            r.name,
            r.elo,
            Z95 * r.se,
            dash(r.uci_elo),
            dash(r.uci_se.map(|se| Z95 * se)),
            r.nominal_uci_elo()
                .map_or_else(|| "-".into(), |n| format!("{n:.0}")),
            r.games,
            100.0 * r.score / f64::from(r.games.max(1))
        ));
    }
    out.push_str(&format!(
        "ladder: {} pinned at {} (LLM Chess's scale; ± relative to it, its own ± {:.1} apart)\n",
        c.anchor.player,
        c.anchor.elo,
        Z95 * c.anchor.se
    ));
    match &c.uci_elo {
        None => out.push_str("UCI fit: no UCI_LimitStrength rung in these games\n"),
        Some(u) => {
            out.push_str(&format!(
                "UCI fit: {} pinned at their nominal UCI_Elo ({})\n",
                u.pinned
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                u.time_control
            ));
            for p in &u.pinned {
                out.push_str(&format!(
                    "  {:<10} nominal {:.0}, ladder {:.1} ± {:.1}: UCI_Elo − ladder = {:+.1}\n",
                    p.name,
                    p.nominal,
                    p.ladder_elo,
                    Z95 * p.ladder_se,
                    p.difference()
                ));
            }
            out.push_str(&format!(
                "offset UCI_Elo − ladder: {:+.1} ± {:.1} (95 %, relative to the ladder); \
                 UCI_Elo − LLM Chess's scale: {:+.1} ± {:.1} (with the anchor's own error)\n",
                u.offset,
                Z95 * u.offset_se,
                u.offset,
                Z95 * u.offset_se.hypot(c.anchor.se)
            ));
        }
    }
    out
}

/// The decided and drawn games of a PGN text, as ladder games (`White` scoring the result);
/// games with result `*` (unfinished or void) are skipped.
///
/// # Errors
/// A PGN the reader cannot parse.
pub(crate) fn games_from_pgn(pgn: &str) -> io::Result<Vec<Game>> {
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
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("data/ladder")
            .join(&c.games_file);
        let games = read_games_file(&path).expect("the shipped games");
        assert_eq!(games.len(), c.games as usize);
        let players: Vec<_> = c
            .rungs
            .iter()
            .map(|r| (r.name.clone(), r.player.clone()))
            .collect();
        let mut refit = fit_rungs(&players, &games, &c.config()).unwrap();
        let time_control = c
            .uci_elo
            .as_ref()
            .map_or("none", |u| u.time_control.as_str());
        let uci = fit_uci_scale(&mut refit, &games, &c.config(), time_control).unwrap();
        assert_eq!(uci, c.uci_elo);
        assert_eq!(refit.len(), c.rungs.len());
        for (got, shipped) in refit.iter().zip(&c.rungs) {
            assert_eq!(got.name, shipped.name);
            assert!(
                (got.elo - shipped.elo).abs() < 1e-6,
                "{got:?} vs {shipped:?}"
            );
            assert!((got.se - shipped.se).abs() < 1e-6, "{got:?} vs {shipped:?}");
            assert_eq!(got.uci_elo.is_some(), shipped.uci_elo.is_some());
            if let (Some(a), Some(b)) = (got.uci_elo, shipped.uci_elo) {
                assert!((a - b).abs() < 1e-6, "{got:?} vs {shipped:?}");
            }
            assert_eq!(
                (got.games, got.score, got.draws),
                (shipped.games, shipped.score, shipped.draws)
            );
            assert_eq!(got.player, shipped.player);
        }
    }

    fn rung(name: &str, uci_elo: Option<f64>) -> Rung {
        let mut player = serde_json::Map::new();
        player.insert("kind".into(), "engine".into());
        if let Some(elo) = uci_elo {
            player.insert(
                "options".into(),
                serde_json::json!({ "UCI_LimitStrength": true, "UCI_Elo": elo }),
            );
        }
        Rung {
            name: name.into(),
            elo: 0.0,
            se: 0.0,
            games: 0,
            score: 0.0,
            draws: 0,
            uci_elo: None,
            uci_se: None,
            player,
        }
    }

    /// Games scoring exactly the expected score of these strengths, every pair meeting.
    fn exact_games(truth: &[(&str, f64)]) -> Vec<Game> {
        let mut games = Vec::new();
        for (i, &(a, ra)) in truth.iter().enumerate() {
            for &(b, rb) in &truth[i + 1..] {
                let e = 1.0 / (1.0 + 10f64.powf((rb - ra) / 400.0));
                games.extend(std::iter::repeat_n(Game::new(a, b, e), 50));
            }
        }
        games
    }

    #[test]
    fn the_uci_scale_is_offset_from_the_ladder_where_the_pinned_rungs_say() {
        // True strengths on the ladder's scale; the UCI rungs' nominal ratings sit 300 above.
        let truth = [("random", 0.0), ("sf", 400.0), ("u1", 600.0), ("u2", 900.0)];
        let games = exact_games(&truth);
        let players: Vec<_> = [
            rung("random", None),
            rung("sf", None),
            rung("u1", Some(900.0)),
            rung("u2", Some(1200.0)),
        ]
        .into_iter()
        .map(|r| (r.name, r.player))
        .collect();
        let config = LadderConfig::pure("random", 0.0);
        let mut rungs = fit_rungs(&players, &games, &config).unwrap();
        let scale = fit_uci_scale(&mut rungs, &games, &config, "60+0.6")
            .unwrap()
            .expect("two UCI_Elo rungs");
        assert!((scale.offset - 300.0).abs() < 1e-6, "{scale:?}");
        assert!(scale.offset_se > 0.0);
        assert_eq!(scale.pinned.len(), 2);
        for p in &scale.pinned {
            assert!((p.difference() - 300.0).abs() < 1e-6, "{p:?}");
        }
        for (r, (_, t)) in rungs.iter().zip(truth) {
            assert!((r.uci_elo.unwrap() - (t + 300.0)).abs() < 1e-6, "{r:?}");
        }
        // Without a UCI_LimitStrength rung there is no second scale.
        let plain: Vec<_> = players[..2].to_vec();
        let mut rungs = fit_rungs(&plain, &games[..50], &config).unwrap();
        assert_eq!(
            fit_uci_scale(&mut rungs, &games[..50], &config, "-").unwrap(),
            None
        );
        let text = side_by_side(&Calibration {
            engine: "Stockfish".into(),
            date: "2026-12-01".into(),
            played_on: String::new(),
            anchor: AnchorSource {
                player: "random".into(),
                elo: 0.0,
                se: 10.0,
                source: String::new(),
            },
            virtual_draws: 0.0,
            games_file: GAMES_FILE.into(),
            games: 0,
            uci_elo: Some(scale),
            rungs: Vec::new(),
        });
        assert!(text.contains("offset UCI_Elo − ladder: +300.0"), "{text}");
    }

    #[test]
    fn games_files_round_trip_compressed_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let pgn = "[White \"a\"]\n[Black \"b\"]\n[Result \"0-1\"]\n\n1. e4 e5 0-1\n";
        for name in ["g.pgn", "g.pgn.gz"] {
            let path = dir.path().join(name);
            write_games_file(&path, pgn).unwrap();
            assert_eq!(
                read_games_file(&path).unwrap(),
                vec![Game::new("a", "b", 0.0)]
            );
        }
        let gz = std::fs::read(dir.path().join("g.pgn.gz")).unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip magic");
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
