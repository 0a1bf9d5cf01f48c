//! One model's Elo on three scales at once, from its games against arena's built-in ladder rungs
//! (`arena.ladder(name)`, calibrated in `data/ladder/calibration.json`):
//!
//! - **ladder**: the calibration's own scale (the random mover at LLM Chess's −122.27), the
//!   interval from the model's games and the rungs' errors relative to the random mover: the
//!   right one for comparing two arena results;
//! - **LLM Chess**: the same number, the interval widened by the anchor's own uncertainty (LLM
//!   Chess's ± 23.03 for the random mover against Komodo Dragon): the right one for comparing
//!   with LLM Chess's published Elo. It assumes our random mover plays as LLM Chess's (a uniform
//!   random legal move) and that Elo differences against the rungs carry over to Dragon's levels;
//! - no ChessArena (Glicko) column: ChessArena's pool is not the same scale. The rule once used
//!   here, the model's lead over the random mover added to ChessArena's random player (1509.3),
//!   misses ChessArena's own ratings of the six models both it and LLM Chess rate (GPT-4.1,
//!   Claude 3.7 Sonnet, DeepSeek-V3-0324, DeepSeek-R1, Gemini 2.5 Pro, o3; ChessArena's
//!   `simulation_record/ratings.json`, LLM Chess's `data_processing/elo_refined.csv`) by −506 to
//!   +476 points, and ChessArena spreads models about 0.28 times as much; a column under its
//!   name returns only with a mapping fitted to those published ratings and its error shown;
//! - **UCI_Elo**: the ladder Elo plus the calibration's offset to Stockfish's `UCI_Elo` scale
//!   (its `UCI_LimitStrength` rungs at their nominal ratings), the offset's error joining the
//!   interval; `-` when the shipped calibration has no such rungs.
//!
//! The estimate is LLM Chess's Algorithm 1 ([`elo_anchor`]) against the rungs, colour-corrected
//! per game; errors from different sources add in quadrature, the rungs' among themselves as
//! perfectly correlated (see [`elo_anchor`]).

use std::collections::BTreeMap;

use shakmaty::Color;

use crate::{
    rating::{
        Z95,
        bradley_terry::Games,
        calibration::Calibration,
        elo_anchor::{self, AnchorGame, EloEstimate, WHITE_ADVANTAGE},
    },
    store::{GameRow, PlayerRow},
    table::{Cell, Table},
};

/// The three-scale table for every model player (`llm`, `moa`) that played a built-in rung, or
/// `None` when none did.
pub fn table(games: &[GameRow], players: &[PlayerRow], calibration: &Calibration) -> Option<Table> {
    table_of(&super::bradley_terry::rated(games), players, calibration)
}

/// [`table`] over rated games ([`super::bradley_terry::rated`],
/// [`super::bradley_terry::rated_in`]).
pub(crate) fn table_of(
    games: &Games,
    players: &[PlayerRow],
    calibration: &Calibration,
) -> Option<Table> {
    let rungs: BTreeMap<&str, RungSeen> = players
        .iter()
        .filter_map(|p| Some((p.name.as_str(), RungSeen::of(p, calibration)?)))
        .collect();
    if rungs.is_empty() {
        return None;
    }
    let mut per_model: BTreeMap<&str, Vec<AnchorGame>> = BTreeMap::new();
    for p in players
        .iter()
        .filter(|p| p.kind == "llm" || p.kind == "moa")
    {
        per_model.insert(p.name.as_str(), Vec::new());
    }
    for (white, black, score_white) in games.iter() {
        for (me, opponent, color, score) in [
            (white, black, Color::White, score_white),
            (black, white, Color::Black, 1.0 - score_white),
        ] {
            let (Some(list), Some(rung)) = (per_model.get_mut(me), rungs.get(opponent)) else {
                continue;
            };
            let game = AnchorGame {
                opponent_elo: rung.elo,
                opponent_se: rung.ladder_se,
                color: match color {
                    Color::White => elo_anchor::Color::White,
                    Color::Black => elo_anchor::Color::Black,
                },
                score,
            };
            list.push(game);
        }
    }
    per_model.retain(|_, games| !games.is_empty());
    if per_model.is_empty() {
        return None;
    }

    let mut table = Table::new(
        "Elo on three scales (against the built-in ladder)",
        &[
            "player",
            "games",
            "ladder",
            "±95%",
            "LLM Chess",
            "±95%",
            "UCI_Elo",
            "±95%",
        ],
    )
    .of_kind("scales");
    let anchor_se = calibration.anchor.se;
    let anchor_elo = calibration.anchor.elo;
    let uci = calibration.uci_elo.as_ref();
    for (name, games) in &per_model {
        let estimate = elo_anchor::blocks_from_games(games, WHITE_ADVANTAGE)
            .and_then(|blocks| elo_anchor::estimate(&blocks));
        let mut row: Vec<Cell> = vec![(*name).to_owned().into(), games.len().into()];
        match estimate {
            Ok(EloEstimate::Point { elo, se }) => {
                let scales = [
                    Some((elo, se)),
                    Some((elo, se.hypot(anchor_se))),
                    uci.map(|u| (elo + u.offset, se.hypot(u.offset_se))),
                ];
                for scale in scales {
                    match scale {
                        Some((value, se)) => {
                            row.push(Cell::Num(value, 0));
                            row.push(Cell::Num(Z95 * se, 0));
                        }
                        None => row.extend([Cell::Empty, Cell::Empty]),
                    }
                }
            }
            Ok(bound @ (EloEstimate::AtLeast { .. } | EloEstimate::AtMost { .. })) => {
                // A sweep: one-sided bounds, moved to each scale like the point would be.
                let (sign, value) = match bound {
                    EloEstimate::AtLeast { lower95 } => ("≥", lower95),
                    EloEstimate::AtMost { upper95 } => ("≤", upper95),
                    EloEstimate::Point { .. } => unreachable!("matched above"),
                };
                let shifted = [Some(value), Some(value), uci.map(|u| value + u.offset)];
                for v in shifted {
                    match v {
                        Some(v) => row.extend([Cell::Text(format!("{sign} {v:.0}")), Cell::Empty]),
                        None => row.extend([Cell::Empty, Cell::Empty]),
                    }
                }
            }
            Err(e) => {
                tracing::warn!("no Elo estimate for `{name}`: {e}");
                row.extend(std::iter::repeat_n(Cell::Empty, 6));
            }
        }
        table.rows.push(row);
    }
    table.notes.push(format!(
        "ladder: {} ({}, {}), {} pinned at {:.2}; ± from the model's games and the rungs' errors \
         relative to it",
        calibration.engine,
        calibration.date,
        calibration.games_file,
        calibration.anchor.player,
        anchor_elo
    ));
    table.notes.push(format!(
        "LLM Chess: the ladder Elo, ± with the anchor's own ± {:.2} ({}); assumes our random \
         mover plays as theirs and that Elo differences against the rungs carry over to their \
         Dragon levels",
        Z95 * anchor_se,
        calibration.anchor.source
    ));
    table.notes.push(
        "no ChessArena column: adding the lead over the random mover to ChessArena's random \
         player misses ChessArena's published ratings of the models both systems rate by up to \
         500 points; no mapping fitted to them is shipped yet"
            .into(),
    );
    table.notes.push(match uci {
        Some(u) => format!(
            "UCI_Elo: the ladder Elo {} ± {:.1} (Stockfish's UCI_LimitStrength rungs {} at {}, \
             pinned at their nominal UCI_Elo, which Stockfish documents as calibrated at 60+0.6)",
            crate::table::signed(u.offset, 1),
            Z95 * u.offset_se,
            u.pinned
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            u.time_control
        ),
        None => "UCI_Elo: this calibration has no UCI_LimitStrength rungs".into(),
    });
    let changed: Vec<&str> = rungs
        .iter()
        .filter(|(_, r)| r.stored_differs)
        .map(|(name, _)| *name)
        .collect();
    if !changed.is_empty() {
        table.notes.push(format!(
            "{} played with another calibration's anchor_elo; the scales use this binary's",
            changed.join(", ")
        ));
    }
    Some(table)
}

/// A player of the tournament that is a built-in rung.
struct RungSeen {
    /// Its calibrated Elo (this binary's calibration).
    elo: f64,
    /// Its error relative to the calibration's anchor.
    ladder_se: f64,
    /// The store's `anchor_elo` is not this calibration's (the player was set up by an older
    /// binary).
    stored_differs: bool,
}

impl RungSeen {
    /// `p` as a rung: a player named like a built-in rung that carries an `anchor_elo` (as
    /// `arena.ladder(name)` sets it).
    fn of(p: &PlayerRow, calibration: &Calibration) -> Option<RungSeen> {
        let rung = calibration.rung(&p.name)?;
        let settings: serde_json::Value = serde_json::from_str(&p.settings_json).ok()?;
        let stored = settings["anchor_elo"].as_f64()?;
        Some(RungSeen {
            elo: rung.elo,
            ladder_se: rung.se,
            stored_differs: (stored - rung.elo).abs() > 1e-6,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::GameResult;
    use crate::rating::calibration::{PinnedRung, UciScale};

    fn player(name: &str, kind: &str, settings: &str) -> PlayerRow {
        PlayerRow {
            id: 0,
            tournament: 1,
            name: name.into(),
            kind: kind.into(),
            settings_json: settings.into(),
        }
    }

    fn game(id: i64, white: &str, black: &str, result: &str) -> GameRow {
        crate::leaderboard::tests::row(id as u32, white, black, result)
    }

    fn cell(t: &Table, row: usize, column: &str) -> f64 {
        let at = t.columns.iter().position(|c| c == column).unwrap();
        match &t.rows[row][at] {
            Cell::Num(x, _) => *x,
            other => panic!("{column}: {other:?}"),
        }
    }

    #[test]
    fn one_estimate_moves_to_each_scale_with_its_own_interval_and_no_untested_scale_is_shown() {
        let mut c = Calibration::builtin().clone();
        let mix90 = c.rung("mix90").unwrap().clone();
        c.uci_elo = Some(UciScale {
            time_control: "60+0.6".into(),
            pinned: vec![PinnedRung {
                name: "uci1350".into(),
                nominal: 1350.0,
                ladder_elo: 1250.0,
                ladder_se: 20.0,
            }],
            offset: 100.0,
            offset_se: 20.0,
        });
        let players = [
            player("model", "llm", "{}"),
            player(
                "mix90",
                "engine",
                &format!(r#"{{"anchor_elo": {}}}"#, mix90.elo),
            ),
            // Rated like a rung by hand, but not a built-in one: not on these scales.
            player("other", "engine", r#"{"anchor_elo": 0}"#),
        ];
        // 3 wins, 1 draw, 4 losses against mix90, half as each colour.
        let mut games = Vec::new();
        for (i, (white, result)) in [
            (true, "1-0"),
            (true, "1-0"),
            (true, "1/2-1/2"),
            (true, "0-1"),
            (false, "0-1"),
            (false, "1-0"),
            (false, "1-0"),
            (false, "1-0"),
        ]
        .into_iter()
        .enumerate()
        {
            let (w, b) = if white {
                ("model", "mix90")
            } else {
                ("mix90", "model")
            };
            games.push(game(i as i64, w, b, result));
        }
        games.push(game(99, "model", "other", "1-0"));
        let mut void = game(100, "model", "mix90", "*");
        void.termination = Some("engine_failure".into());
        games.push(void);
        let t = table(&games, &players, &c).expect("a model played a rung");
        assert_eq!(t.rows.len(), 1);
        assert_eq!(
            t.rows[0][1],
            Cell::Int(8),
            "the void game and `other` are left out"
        );

        let ladder = cell(&t, 0, "ladder");
        let blocks = elo_anchor::blocks_from_games(
            &games[..8]
                .iter()
                .map(|g| {
                    let white = g.white == "model";
                    let result: GameResult = g.result.as_deref().unwrap().parse().unwrap();
                    let color = if white { Color::White } else { Color::Black };
                    AnchorGame {
                        opponent_elo: mix90.elo,
                        opponent_se: mix90.se,
                        color: if white {
                            elo_anchor::Color::White
                        } else {
                            elo_anchor::Color::Black
                        },
                        score: result.score_for(color),
                    }
                })
                .collect::<Vec<_>>(),
            WHITE_ADVANTAGE,
        )
        .unwrap();
        let EloEstimate::Point { elo, se } = elo_anchor::estimate(&blocks).unwrap() else {
            panic!("a point estimate");
        };
        assert!((ladder - elo).abs() < 1e-9);
        let margins: Vec<f64> = ["ladder", "LLM Chess", "UCI_Elo"]
            .iter()
            .map(|scale| {
                let at = t.columns.iter().position(|c| c == scale).unwrap() + 1;
                match t.rows[0][at] {
                    Cell::Num(x, _) => x,
                    ref other => panic!("{other:?}"),
                }
            })
            .collect();
        assert!((margins[0] - Z95 * se).abs() < 1e-9);
        assert!((margins[1] - Z95 * se.hypot(c.anchor.se)).abs() < 1e-9);
        assert!((margins[2] - Z95 * se.hypot(20.0)).abs() < 1e-9);
        assert!((cell(&t, 0, "LLM Chess") - elo).abs() < 1e-9);
        assert!(
            !t.columns.iter().any(|c| c == "ChessArena"),
            "{:?}",
            t.columns
        );
        assert!((cell(&t, 0, "UCI_Elo") - (elo + 100.0)).abs() < 1e-9);
    }

    #[test]
    fn no_table_without_a_model_against_a_rung() {
        let c = Calibration::builtin();
        let players = [player("a", "engine", "{}"), player("b", "random", "{}")];
        assert!(table(&[game(1, "a", "b", "1-0")], &players, c).is_none());
    }
}
