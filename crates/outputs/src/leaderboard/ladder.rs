//! The ladder table of `arena leaderboard --ladder ANCHOR=RATING`: every player's Elo fitted by
//! maximum likelihood over the finished games, with the anchor held at its known rating
//! ([`crate::rating::ladder`]).

use std::str::FromStr;

use crate::{
    board::GameResult,
    rating::{
        RatingError, Z95,
        ladder::{self, Game, LadderConfig},
    },
    store::{GameRow, GameStatus},
    table::{Cell, Table},
};

/// The anchor of a ladder as the command line gives it: `NAME=RATING`, or `NAME=RATING±SE` (also
/// `+-`) for an anchor whose rating is itself an estimate (a calibrated rung: its `anchor_se`).
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    /// The anchor player's name.
    pub name: String,
    /// Its known Elo.
    pub rating: f64,
    /// The standard error of that Elo (0: exact). Every fitted rating moves one for one with the
    /// anchor's, so its variance adds to each player's: the reported errors include it.
    pub se: f64,
}

impl Anchor {
    /// A player's standard error on the anchor's scale: its error relative to the anchor and the
    /// anchor's own, added in quadrature (dElo/dAnchor = 1 for every player).
    pub(crate) fn widen(&self, relative_se: f64) -> f64 {
        relative_se.hypot(self.se)
    }
}

impl FromStr for Anchor {
    type Err = String;

    fn from_str(text: &str) -> Result<Anchor, String> {
        // Split at the last `=`: player names may contain one, ratings never do.
        let (name, value) = text.rsplit_once('=').ok_or_else(|| {
            format!("expected ANCHOR=RATING or ANCHOR=RATING±SE (e.g. sf-1350=1350), got `{text}`")
        })?;
        let number = |s: &str| s.trim().parse::<f64>().ok().filter(|r| r.is_finite());
        let (rating, se) = match value.split_once('±').or_else(|| value.split_once("+-")) {
            Some((rating, se)) => (rating, Some(se)),
            None => (value, None),
        };
        let rating =
            number(rating).ok_or_else(|| format!("`{rating}` is not a rating (in `{text}`)"))?;
        let se = match se {
            None => 0.0,
            Some(se) => number(se).filter(|s| *s >= 0.0).ok_or_else(|| {
                format!("`{se}` is not a standard error (a number, 0 or more; in `{text}`)")
            })?,
        };
        if name.trim().is_empty() {
            return Err(format!("no anchor name in `{text}`"));
        }
        Ok(Anchor {
            name: name.trim().to_owned(),
            rating,
            se,
        })
    }
}

/// Fits the ladder over the finished games and lays it out: rank, player, Elo, standard error,
/// 95 % interval, games, score %.
///
/// # Errors
/// The errors of [`ladder::fit`]: no finished games, an anchor without games, or players whose
/// rating is not finite (with `virtual_draws = 0`) or not linked to the anchor by any game.
pub fn ladder_table(
    games: &[GameRow],
    anchor: &Anchor,
    virtual_draws: f64,
) -> Result<Table, RatingError> {
    let rated: Vec<Game> = games
        .iter()
        .filter(|g| g.status == GameStatus::Finished)
        .filter_map(|g| {
            let result = g.result.as_deref()?.parse::<GameResult>().ok()?;
            Some(Game::new(
                g.white.clone(),
                g.black.clone(),
                result.score_for(shakmaty::Color::White),
            ))
        })
        .collect();
    let config = LadderConfig {
        anchor: anchor.name.clone(),
        anchor_rating: anchor.rating,
        virtual_draws,
    };
    let fitted = ladder::fit(&rated, &config)?;
    let mut table = Table::new(
        "ladder (maximum-likelihood Elo)",
        &[
            "#",
            "player",
            "Elo",
            "± SE",
            "95% interval",
            "games",
            "score %",
        ],
    )
    .of_kind("ladder");
    for (rank, p) in fitted.iter().enumerate() {
        let se = anchor.widen(p.se);
        let (low, high) = (p.rating - Z95 * se, p.rating + Z95 * se);
        let anchored = p.name == anchor.name && anchor.se == 0.0;
        table.rows.push(vec![
            Cell::Int(rank as i64 + 1),
            if anchored {
                Cell::Text(format!("{} (anchor)", p.name))
            } else {
                p.name.clone().into()
            },
            Cell::Num(p.rating, 0),
            if anchored {
                Cell::Empty
            } else {
                Cell::Num(se, 0)
            },
            if anchored {
                Cell::Empty
            } else {
                Cell::Text(format!(
                    "{} to {}",
                    crate::table::fixed(low, 0),
                    crate::table::fixed(high, 0)
                ))
            },
            p.games.into(),
            Cell::Num(100.0 * p.score / f64::from(p.games.max(1)), 1),
        ]);
    }
    table.notes.push(if anchor.se > 0.0 {
        format!(
            "Bradley-Terry on the Elo scale, draws as half points, {} held at {:.0} ± {:.0} (SE); every error includes the anchor's own, in quadrature",
            anchor.name, anchor.rating, anchor.se
        )
    } else {
        format!(
            "Bradley-Terry on the Elo scale, draws as half points, {} held at {:.0}; errors are relative to the anchor",
            anchor.name, anchor.rating
        )
    });
    if virtual_draws > 0.0 {
        table.notes.push(format!(
            "{virtual_draws} virtual draw(s) added to every pair that met, so that sweeps stay finite (--virtual-draws 0: pure MLE)"
        ));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaderboard::tests::row;

    #[test]
    fn anchors_parse_and_refuse_garbage() {
        let a: Anchor = "sf=lim=1350".parse().unwrap();
        assert_eq!((a.name.as_str(), a.rating), ("sf=lim", 1350.0));
        assert!("sf".parse::<Anchor>().is_err());
        assert!("sf=strong".parse::<Anchor>().is_err());
        assert!("=1350".parse::<Anchor>().is_err());
        assert_eq!(a.se, 0.0);
        let calibrated: Anchor = "random=-122.27±11.75".parse().unwrap();
        assert_eq!((calibrated.rating, calibrated.se), (-122.27, 11.75));
        let ascii: Anchor = "random=-122.27+-11.75".parse().unwrap();
        assert_eq!(ascii, calibrated);
        assert!("random=-122.27±-1".parse::<Anchor>().is_err());
        assert!("random=-122.27±x".parse::<Anchor>().is_err());
    }

    #[test]
    fn an_anchors_own_error_widens_every_other_error() {
        let games = [
            row(1, "anchor", "weak", "1-0"),
            row(2, "weak", "anchor", "1/2-1/2"),
            row(3, "weak", "rnd", "1-0"),
            row(4, "rnd", "weak", "0-1"),
        ];
        let exact = Anchor {
            name: "anchor".into(),
            rating: 1000.0,
            se: 0.0,
        };
        let fuzzy = Anchor {
            se: 30.0,
            ..exact.clone()
        };
        let a = ladder_table(&games, &exact, 1.0).unwrap();
        let b = ladder_table(&games, &fuzzy, 1.0).unwrap();
        for (x, y) in a.rows.iter().zip(&b.rows) {
            assert_eq!(x[2], y[2], "the ratings themselves do not move");
            match (&x[3], &y[3]) {
                (Cell::Num(se, _), Cell::Num(wide, _)) => {
                    assert!((wide - se.hypot(30.0)).abs() < 1e-9, "{x:?} {y:?}")
                }
                (Cell::Empty, Cell::Num(wide, _)) => assert_eq!(*wide, 30.0),
                other => panic!("{other:?}"),
            }
        }
        assert!(b.notes[0].contains("± 30"), "{:?}", b.notes);
    }

    #[test]
    fn the_table_ranks_players_and_pins_the_anchor() {
        let games = [
            row(1, "anchor", "weak", "1-0"),
            row(2, "weak", "anchor", "1/2-1/2"),
            row(3, "weak", "rnd", "1-0"),
            row(4, "rnd", "weak", "0-1"),
            row(5, "rnd", "anchor", "0-1"),
        ];
        let anchor = Anchor {
            se: 0.0,
            name: "anchor".into(),
            rating: 1350.0,
        };
        let table = ladder_table(&games, &anchor, 1.0).unwrap();
        let names: Vec<String> = table.rows.iter().map(|r| format!("{:?}", r[1])).collect();
        assert!(names[0].contains("anchor (anchor)"), "{names:?}");
        assert!(names[2].contains("rnd"), "{names:?}");
        assert_eq!(table.rows[0][2], Cell::Num(1350.0, 0));
        // The pure MLE has no finite rating for a player who lost everything.
        let err = ladder_table(&games, &anchor, 0.0).unwrap_err();
        assert_eq!(err, RatingError::Unbounded(vec!["rnd".into()]));
        // A void game is in no fit: adding ones the weak player "won" changes nothing.
        let mut with_void = games.to_vec();
        for i in 6..9 {
            let mut void = row(i, "weak", "anchor", crate::store::VOID_RESULT);
            void.termination = Some("context_exceeded".into());
            with_void.push(void);
        }
        assert_eq!(
            ladder_table(&with_void, &anchor, 1.0).unwrap().rows,
            table.rows
        );
    }
}
