//! The Bradley–Terry tables of `arena leaderboard`, beside Glicko-1: every player's Elo fitted by
//! maximum likelihood over the finished games, with a White advantage and bootstrap intervals
//! ([`crate::rating::bradley_terry`]), laid out as ordo and bayeselo print theirs (Rank, Name,
//! Elo, +/-, Games, Score, Draws), plus how often each player holds its rank over the samples.

use super::ladder::Anchor;
use crate::{
    board::GameResult,
    rating::{
        Z95,
        bradley_terry::{
            self, Bootstrap, BootstrapConfig, Config, Fit, Games, MIN_MARGIN, VirtualDraws,
        },
    },
    store::{GameRow, GameStatus, Store, StoreError, current_attempts},
    table::{Cell, Table},
};

/// How to fit and resample.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The player held at a known Elo; `None`: the players' mean is 0.
    pub anchor: Option<Anchor>,
    /// Bootstrap samples (0: errors from the observed information instead, no rank stability).
    pub samples: usize,
    /// The bootstrap's seed.
    pub seed: u64,
    /// The prior: drawn games added to every pair that met, half with each colour.
    pub virtual_draws: VirtualDraws,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            anchor: None,
            samples: 1000,
            seed: 1,
            virtual_draws: VirtualDraws::DEFAULT,
        }
    }
}

/// The rated games of stored rows (the current attempt of each slot, finished with a result), in
/// schedule order and numbered, grouped by opening and pair of players.
pub fn rated(rows: &[GameRow]) -> Games {
    let mut games = Games::new();
    for g in current_attempts(rows) {
        if g.status != GameStatus::Finished {
            continue;
        }
        if let Some(result) = g
            .result
            .as_deref()
            .and_then(|r| r.parse::<GameResult>().ok())
        {
            let group = group(&g.white, &g.black, &opening_of(g));
            games.push(
                &g.white,
                &g.black,
                result.score_for(shakmaty::Color::White),
                group.as_deref(),
            );
        }
    }
    games
}

/// [`rated`] read from the store a row at a time: a tournament of 100,000 games is rated
/// without holding its games.
///
/// # Errors
/// When the store cannot be read.
pub fn rated_in(store: &Store, tournament: i64) -> Result<Games, StoreError> {
    let mut games = Games::new();
    store.for_each_rated_game(tournament, |g| {
        let Ok(result) = g.result.parse::<GameResult>() else {
            return;
        };
        let opening = Opening {
            label: g.opening_label.as_deref(),
            start_fen: g.start_fen.as_deref(),
            moves: &g.opening_moves,
        };
        let group = group(&g.white, &g.black, &opening);
        games.push(
            &g.white,
            &g.black,
            result.score_for(shakmaty::Color::White),
            group.as_deref(),
        );
    })?;
    Ok(games)
}

/// What names a game's opening.
struct Opening<'a> {
    label: Option<&'a str>,
    start_fen: Option<&'a str>,
    moves: &'a [String],
}

fn opening_of(g: &GameRow) -> Opening<'_> {
    Opening {
        label: g.opening_label.as_deref(),
        start_fen: g.start_fen.as_deref(),
        moves: &g.opening_moves,
    }
}

/// The resampling group of a game between `white` and `black` from `opening`: the pair and the
/// opening, or none when the game has no opening.
fn group(white: &str, black: &str, opening: &Opening<'_>) -> Option<String> {
    let opening = match (opening.label, opening.start_fen) {
        (Some(label), _) => label.to_owned(),
        (None, Some(fen)) => format!("{fen} {}", opening.moves.join(" ")),
        (None, None) if !opening.moves.is_empty() => opening.moves.join(" "),
        (None, None) => return None,
    };
    let (a, b) = if white < black {
        (white, black)
    } else {
        (black, white)
    };
    // Unit separators cannot appear in names or openings read from a script.
    Some(format!("{a}\u{1f}{b}\u{1f}{opening}"))
}

/// The ratings table and a one-row table of the fit's own parameters (White's advantage, the
/// anchor, the resampling), which JSON and CSV readers cannot get from the notes. When there is
/// no fit (no finished games, or a pool without finite ratings), the ratings table says why and
/// has no rows.
pub fn tables(rows: &[GameRow], options: &Options) -> Vec<Table> {
    tables_of(&rated(rows), options)
}

/// [`tables`] over rated games ([`rated`], [`rated_in`]).
pub(crate) fn tables_of(games: &Games, options: &Options) -> Vec<Table> {
    let mut table = Table::new(
        "ratings (Bradley-Terry)",
        &[
            "Rank",
            "Name",
            "Elo",
            "+/-",
            "Games",
            "Score",
            "Draws",
            "Rank held",
        ],
    )
    .of_kind("bradley_terry");
    if games.is_empty() {
        table.notes.push("no finished games to fit".into());
        return vec![table];
    }
    let config = Config {
        anchor: match &options.anchor {
            Some(a) => bradley_terry::Anchor::Player {
                name: a.name.clone(),
                rating: a.rating,
            },
            None => bradley_terry::Anchor::Mean(0.0),
        },
        white_advantage: true,
        virtual_draws: options.virtual_draws,
    };
    let outcome = if options.samples == 0 {
        bradley_terry::fit_games(games, &config).map(|fit| (fit, None))
    } else {
        let resampling = BootstrapConfig {
            samples: options.samples,
            seed: options.seed,
        };
        bradley_terry::bootstrap_games(games, &config, &resampling)
            .map(|b| (b.fit.clone(), Some(b)))
    };
    let (fit, resampled) = match outcome {
        Ok(fitted) => fitted,
        Err(e) => {
            table.notes.push(format!("no Bradley-Terry fit: {e}"));
            return vec![table];
        }
    };
    let anchored = options.anchor.as_ref().map(|a| a.name.as_str());
    let ranks = fit.ranks();
    // An anchor that is itself an estimate moves every rating one for one: its own error adds to
    // each player's in quadrature (and is the anchored player's whole error).
    let anchor_margin = options.anchor.as_ref().map_or(0.0, |a| Z95 * a.se);
    for (i, p) in fit.players.iter().enumerate() {
        let is_anchor = Some(p.name.as_str()) == anchored;
        // No interval where the resampling could not vary the player: a `± 0` would claim
        // certainty the games do not give (the notes say why in words).
        let own = match &resampled {
            Some(b) => b.spread[i].varies().then(|| b.spread[i].margin()),
            None => Some(Z95 * p.se).filter(|m| *m >= MIN_MARGIN),
        };
        let margin = if is_anchor {
            Some(anchor_margin).filter(|m| *m >= MIN_MARGIN)
        } else {
            own.map(|m| m.hypot(anchor_margin))
        };
        let games = f64::from(p.games.max(1));
        table.rows.push(vec![
            ranks[i].into(),
            p.name.clone().into(),
            Cell::Num(p.rating, 1),
            margin.map_or(Cell::Empty, |m| Cell::Num(m, 1)),
            p.games.into(),
            Cell::Num(100.0 * p.score / games, 1),
            Cell::Num(100.0 * f64::from(p.draws) / games, 1),
            match &resampled {
                Some(b) if b.spread[i].varies() => Cell::Num(100.0 * b.spread[i].rank_held, 0),
                _ => Cell::Empty,
            },
        ]);
    }
    table.notes = notes(&fit, resampled.as_ref(), options, games.len());
    vec![table, fit_table(&fit, resampled.as_ref(), options)]
}

/// What the columns mean and how the numbers were made.
fn notes(fit: &Fit, resampled: Option<&Bootstrap>, options: &Options, games: usize) -> Vec<String> {
    let mut notes = Vec::new();
    let advantage = match advantage(fit, resampled) {
        Some((elo, Some(margin))) => {
            format!(
                "; White's advantage, fitted, is {} ± {} Elo",
                crate::table::signed(elo, 1),
                crate::table::fixed(margin, 1)
            )
        }
        Some((elo, None)) => format!(
            "; White's advantage, fitted, is {} Elo (no interval: the resampling cannot vary it)",
            crate::table::signed(elo, 1)
        ),
        None => String::new(),
    };
    notes.push(format!(
        "Bradley-Terry maximum likelihood over {games} finished game(s), draws as half points{advantage}"
    ));
    notes.push(match &options.anchor {
        None => "Elo: 400·log10 of the odds of scoring (+100 = 64 %), anchored so that the players' mean is 0".into(),
        Some(a) if a.se > 0.0 => format!(
            "Elo: 400·log10 of the odds of scoring (+100 = 64 %), anchored at {} = {} ± {:.1} (95 %); every +/- includes the anchor's own, in quadrature",
            a.name,
            a.rating,
            Z95 * a.se
        ),
        Some(a) => format!(
            "Elo: 400·log10 of the odds of scoring (+100 = 64 %), anchored at {} = {}; the others' +/- is relative to it",
            a.name, a.rating
        ),
    });
    notes.push(match resampled {
        Some(b) => format!(
            "+/-: 95 % interval, 1.96 × the standard deviation over {} bootstrap samples (seed {}) that resample each pairing's {}, scaled by √(m/(m−1)) for pairings of few (m) units",
            b.samples,
            options.seed,
            if b.grouped {
                "opening pairs (the games of one opening between two players, together)"
            } else {
                "games"
            }
        ),
        None => "+/-: 95 % interval from the observed information (no bootstrap)".into(),
    });
    notes.push(
        "Score, Draws: % of games; Rank held: % of bootstrap samples in which the player holds this rank (level players share one)"
            .into(),
    );
    if let Some(b) = resampled {
        notes.extend(cannot_vary(b, options));
    }
    notes.push(match options.virtual_draws {
        VirtualDraws::PerPair(v) if v <= 0.0 => {
            "prior: none (the pure MLE, --virtual-draws 0)".into()
        }
        VirtualDraws::PerPair(v) => format!(
            "prior: {v} virtual draw(s) added to every pair that met, half with each colour (--virtual-draws)"
        ),
        VirtualDraws::Scaled { share, cap } => format!(
            "prior: {share} virtual draw per game a pair played, at most {cap}, half with each colour, so that sweeps stay finite; \
             in simulated round robins its 95 % intervals cover 95 % (2 and 10 games a pair) with a bias under 5 Elo (--virtual-draws N: N per pair instead)"
        ),
    });
    let swept: Vec<&str> = fit
        .players
        .iter()
        .filter(|p| p.score <= 0.0 || p.score >= f64::from(p.games))
        .map(|p| p.name.as_str())
        .collect();
    if !swept.is_empty() && options.virtual_draws.any() {
        notes.push(format!(
            "{} won or lost every game: the rating rests on the prior's virtual draws",
            swept.join(", ")
        ));
    }
    if let Some(b) = resampled
        && b.failed > 0
    {
        notes.push(format!(
            "{} of {} bootstrap samples had no finite fit and are left out",
            b.failed,
            b.failed + b.samples
        ));
    }
    notes
}

/// In words, the players the bootstrap could not vary, and why: they have no interval and no
/// rank stability.
fn cannot_vary(b: &Bootstrap, options: &Options) -> Vec<String> {
    let anchored = options.anchor.as_ref().map(|a| a.name.as_str());
    let (mut single, mut constant) = (Vec::new(), Vec::new());
    for s in b
        .spread
        .iter()
        .filter(|s| Some(s.name.as_str()) != anchored)
    {
        if !s.single_unit.is_empty() {
            single.push(s.name.as_str());
        } else if s.constant || !s.varies() {
            constant.push(s.name.as_str());
        }
    }
    let unit = if b.grouped {
        "one opening pair"
    } else {
        "one game"
    };
    let mut notes = Vec::new();
    if !single.is_empty() {
        let everyone = single.len() + usize::from(anchored.is_some()) == b.spread.len();
        notes.push(format!(
            "no interval and no rank held for {}: {} played {unit} against some opponent, and a resample of a \
             pairing's only unit always draws that same result, so the bootstrap cannot say how far off {} rating is",
            if everyone {
                "anyone".to_owned()
            } else {
                single.join(", ")
            },
            if everyone {
                "every pairing"
            } else if single.len() == 1 {
                "it"
            } else {
                "each"
            },
            if single.len() == 1 { "its" } else { "a" }
        ));
    }
    if !constant.is_empty() {
        notes.push(format!(
            "no interval and no rank held for {}: every result within each of {} pairings was the same (a perfect score, \
             or one result throughout), so resampling cannot move {} rating, however little the games show",
            constant.join(", "),
            if constant.len() == 1 { "its" } else { "their" },
            if constant.len() == 1 { "its" } else { "their" }
        ));
    }
    notes
}

/// White's advantage and the half-width of its 95 % interval (from the bootstrap when there is
/// one; `None` when the resampling could not vary it).
fn advantage(fit: &Fit, resampled: Option<&Bootstrap>) -> Option<(f64, Option<f64>)> {
    let h = fit.white_advantage?;
    let margin = match resampled {
        // Where no player varies, neither does the advantage (its spread is then noise around 0).
        Some(b) if !b.spread.iter().any(|s| s.varies()) => None,
        Some(b) => b.white_advantage_sd.map(|sd| Z95 * sd),
        None => Some(Z95 * h.se),
    };
    Some((h.elo, margin.filter(|m| *m >= MIN_MARGIN)))
}

/// The fit's parameters as one row.
fn fit_table(fit: &Fit, resampled: Option<&Bootstrap>, options: &Options) -> Table {
    let mut table = Table::new(
        "Bradley-Terry fit",
        &[
            "White advantage",
            "+/-",
            "anchor",
            "bootstrap samples",
            "resampled",
            "seed",
            "virtual draws",
        ],
    )
    .of_kind("bradley_terry_fit");
    let (advantage, margin) = match advantage(fit, resampled) {
        Some((elo, margin)) => (
            Cell::Num(elo, 1),
            margin.map_or(Cell::Empty, |m| Cell::Num(m, 1)),
        ),
        None => (Cell::Empty, Cell::Empty),
    };
    table.rows.push(vec![
        advantage,
        margin,
        match &options.anchor {
            Some(a) => format!("{}={}", a.name, a.rating).into(),
            None => "mean=0".into(),
        },
        resampled.map_or(0, |b| b.samples).into(),
        match resampled {
            Some(b) if b.grouped => "opening pairs".into(),
            Some(_) => "games".into(),
            None => Cell::Empty,
        },
        match resampled {
            Some(_) => Cell::Int(options.seed.min(i64::MAX as u64) as i64),
            None => Cell::Empty,
        },
        options.virtual_draws.to_string().into(),
    ]);
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leaderboard::tests::row;

    /// A small pool: a leads, b and c trade wins.
    fn pool() -> Vec<GameRow> {
        let games = [
            ("a", "b", "1-0"),
            ("b", "a", "0-1"),
            ("a", "c", "1-0"),
            ("c", "a", "1/2-1/2"),
            ("b", "c", "1-0"),
            ("c", "b", "1-0"),
            ("a", "b", "1/2-1/2"),
            ("b", "a", "1-0"),
        ];
        games
            .iter()
            .enumerate()
            .map(|(i, (w, b, r))| row(i as u32 + 1, w, b, r))
            .collect()
    }

    fn column(table: &Table, name: &str) -> Vec<Cell> {
        let c = table.columns.iter().position(|c| c == name).unwrap();
        table.rows.iter().map(|r| r[c].clone()).collect()
    }

    #[test]
    fn the_table_reads_like_ordo_and_says_how_it_was_made() {
        let tables = tables(&pool(), &Options::default());
        let [ratings, fit] = &tables[..] else {
            panic!("two tables: {tables:?}")
        };
        assert_eq!(
            ratings.columns[..7],
            ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draws"]
        );
        assert_eq!(
            column(ratings, "Name"),
            ["a", "b", "c"].map(Cell::from).to_vec()
        );
        // a: 4 of 6, two draws; the mean is 0.
        let a = &ratings.rows[0];
        assert_eq!((&a[4], &a[5]), (&Cell::Int(6), &Cell::Num(400.0 / 6.0, 1)));
        assert_eq!(a[6], Cell::Num(100.0 * 2.0 / 6.0, 1));
        let elo: f64 = column(ratings, "Elo")
            .iter()
            .map(|c| match c {
                Cell::Num(x, _) => *x,
                other => panic!("{other:?}"),
            })
            .sum();
        assert!(elo.abs() < 1e-6, "{elo}");
        for cell in column(ratings, "+/-")
            .iter()
            .chain(&column(ratings, "Rank held"))
        {
            assert!(matches!(cell, Cell::Num(x, _) if *x > 0.0), "{cell:?}");
        }
        assert!(
            ratings
                .notes
                .iter()
                .any(|n| n.contains("players' mean is 0")),
            "{:?}",
            ratings.notes
        );
        assert!(
            ratings
                .notes
                .iter()
                .any(|n| n.contains("1000 bootstrap samples"))
        );
        assert_eq!(fit.rows.len(), 1);
        assert_eq!(fit.rows[0][2], Cell::from("mean=0"));
        assert_eq!(fit.rows[0][4], Cell::from("games"));
        // The same games and seed give the same table.
        assert_eq!(super::tables(&pool(), &Options::default()), tables);
    }

    #[test]
    fn an_anchored_player_has_no_margin() {
        let options = Options {
            anchor: Some("b=1500".parse().unwrap()),
            samples: 50,
            ..Options::default()
        };
        let tables = tables(&pool(), &options);
        let b = tables[0]
            .rows
            .iter()
            .find(|r| r[1] == Cell::from("b"))
            .unwrap();
        assert_eq!((&b[2], &b[3]), (&Cell::Num(1500.0, 1), &Cell::Empty));
        assert!(
            tables[0]
                .notes
                .iter()
                .any(|n| n.contains("anchored at b = 1500"))
        );
        assert_eq!(tables[1].rows[0][2], Cell::from("b=1500"));

        // A calibrated anchor's own error widens every margin, in quadrature.
        let fuzzy = Options {
            anchor: Some("b=1500±20".parse().unwrap()),
            samples: 0,
            ..Options::default()
        };
        let exact = Options {
            anchor: Some("b=1500".parse().unwrap()),
            samples: 0,
            ..Options::default()
        };
        let (wide, narrow) = (
            super::tables(&pool(), &fuzzy),
            super::tables(&pool(), &exact),
        );
        for (w, n) in wide[0].rows.iter().zip(&narrow[0].rows) {
            assert_eq!(w[2], n[2], "the ratings do not move");
            match (&w[3], &n[3]) {
                (Cell::Num(w, _), Cell::Num(n, _)) => {
                    assert!((w - n.hypot(Z95 * 20.0)).abs() < 1e-9)
                }
                (Cell::Num(w, _), Cell::Empty) => assert!((w - Z95 * 20.0).abs() < 1e-9),
                other => panic!("{other:?}"),
            }
        }
        assert!(wide[0].notes.iter().any(|n| n.contains("b = 1500 ± 39.2")));
    }

    #[test]
    fn opening_pairs_are_grouped_and_fits_that_fail_say_why() {
        let mut rows = pool();
        for g in &mut rows {
            g.opening_label = Some(format!("book.epd:{}", g.index.div_ceil(2)));
        }
        let games = rated(&rows);
        // Games 1 and 2 are one opening between a and b; games 3 and 4 another.
        assert!(games.group(0).is_some());
        assert_eq!(games.group(0), games.group(1));
        assert_ne!(games.group(1), games.group(2));
        let tables = tables(&rows, &Options::default());
        assert_eq!(tables[1].rows[0][4], Cell::from("opening pairs"));

        // c loses everything: the pure MLE has no finite rating for it.
        let sweep = [
            row(1, "a", "c", "1-0"),
            row(2, "c", "a", "0-1"),
            row(3, "a", "b", "1/2-1/2"),
        ];
        let pure = Options {
            virtual_draws: VirtualDraws::PerPair(0.0),
            ..Options::default()
        };
        let tables = super::tables(&sweep, &pure);
        assert_eq!(tables.len(), 1);
        assert!(tables[0].rows.is_empty());
        assert!(
            tables[0].notes[0].starts_with("no Bradley-Terry fit: no finite rating for c"),
            "{:?}",
            tables[0].notes
        );
        let empty = super::tables(&[], &Options::default());
        assert_eq!(empty[0].notes, ["no finished games to fit"]);
    }

    /// Every +/- of a table pair: the players' and White's advantage.
    fn margins(tables: &[Table]) -> Vec<Cell> {
        let mut all = column(&tables[0], "+/-");
        if let Some(fit) = tables.get(1) {
            all.push(fit.rows[0][1].clone());
        }
        all
    }

    #[test]
    fn no_interval_of_width_zero_is_ever_printed() {
        let mut cases: Vec<(&str, Vec<GameRow>)> = Vec::new();
        // A single round robin: every pairing is one game.
        cases.push((
            "one game a pair",
            vec![
                row(1, "a", "b", "1-0"),
                row(2, "b", "c", "1/2-1/2"),
                row(3, "c", "a", "1/2-1/2"),
                row(4, "a", "d", "1/2-1/2"),
                row(5, "d", "b", "0-1"),
                row(6, "c", "d", "1-0"),
            ],
        ));
        // Three random movers that draw everything, one game a pair.
        cases.push((
            "all draws",
            vec![
                row(1, "r1", "r2", "1/2-1/2"),
                row(2, "r2", "r3", "1/2-1/2"),
                row(3, "r3", "r1", "1/2-1/2"),
            ],
        ));
        // Two games a pair, but both colours of one opening: one unit per pairing.
        let mut book = pool();
        for g in &mut book {
            let pair = if g.white < g.black {
                format!("{}{}", g.white, g.black)
            } else {
                format!("{}{}", g.black, g.white)
            };
            g.opening_label = Some(format!("book.epd:{pair}"));
        }
        cases.push(("one opening pair a pairing", book));
        // Four games a pair, and x wins all of its own: its results cannot vary.
        let mut sweep = Vec::new();
        for k in 0..4u32 {
            let r = ["1-0", "0-1", "1/2-1/2", "1-0"][k as usize];
            sweep.push(row(3 * k + 1, "y", "z", r));
            sweep.push(row(
                3 * k + 2,
                "x",
                "y",
                if k % 2 == 0 { "1-0" } else { "0-1" },
            ));
            sweep.push(row(3 * k + 3, "x", "z", "1-0"));
        }
        for g in &mut sweep {
            if g.result.as_deref() == Some("0-1") && g.white == "x" {
                // x plays Black in this one and wins it.
                std::mem::swap(&mut g.white, &mut g.black);
            }
        }
        cases.push(("a perfect score", sweep));

        for (case, rows) in &cases {
            let tables = tables(rows, &Options::default());
            assert_eq!(tables.len(), 2, "{case}: {:?}", tables[0].notes);
            for cell in margins(&tables) {
                match cell {
                    Cell::Empty => {}
                    Cell::Num(x, 1) => assert!(x >= MIN_MARGIN, "{case}: ± {x}"),
                    other => panic!("{case}: {other:?}"),
                }
            }
            // No interval, no rank held, and the notes say why.
            for r in &tables[0].rows {
                if r[3] == Cell::Empty {
                    assert_eq!(r[7], Cell::Empty, "{case}: {r:?}");
                }
            }
            let text = tables[0].to_text();
            assert!(!text.contains("± 0.0"), "{case}: {text}");
            let blank = column(&tables[0], "+/-")
                .iter()
                .filter(|c| **c == Cell::Empty)
                .count();
            assert!(blank > 0, "{case}: every interval shown: {text}");
            assert!(
                tables[0].notes.iter().any(|n| n.starts_with("no interval")),
                "{case}: {:?}",
                tables[0].notes
            );
        }
        // In the first three cases nobody can be varied; in the last only x.
        for (case, rows) in &cases[..3] {
            let tables = tables(rows, &Options::default());
            assert!(
                column(&tables[0], "+/-").iter().all(|c| *c == Cell::Empty),
                "{case}"
            );
            assert_eq!(
                tables[1].rows[0][1],
                Cell::Empty,
                "{case}: White's advantage"
            );
        }
        let tables = tables(&cases[3].1, &Options::default());
        let shown: Vec<bool> = tables[0].rows.iter().map(|r| r[3] != Cell::Empty).collect();
        let names = column(&tables[0], "Name");
        for (name, shown) in names.iter().zip(shown) {
            assert_eq!(shown, *name != Cell::from("x"), "{name:?}");
        }
        assert!(
            tables[0]
                .notes
                .iter()
                .any(|n| n.starts_with("no interval and no rank held for x: every result")),
            "{:?}",
            tables[0].notes
        );
    }
}
