//! Opening names and ECO codes from lichess's CC0 opening table (`data/chess-openings/`, see its
//! PROVENANCE), compiled into the binary.
//!
//! A game is named by the position, not the move order: the table's lines are replayed once (with
//! pgn-reader and shakmaty) into a map from EPD (the FEN without its counters, en passant only when
//! a capture is legal, as lichess writes it) to the opening, and a game takes the name of the
//! latest position it reached that is in the map. That is lichess's own rule ("play moves
//! backwards until a named position is found") and it names transpositions correctly: `1. Nf3 d5
//! 2. d4` is a Queen's Pawn Game whatever came first.

use std::{collections::HashMap, io, ops::ControlFlow, sync::LazyLock};

use pgn_reader::{Reader, SanPlus, Visitor};
use shakmaty::{Chess, EnPassantMode, Position, fen::Epd};

use super::BoardError;

/// The five files of lichess's table, by ECO volume.
const LICHESS_FILES: [(&str, &str); 5] = [
    (
        "a.tsv",
        include_str!("../../../../data/chess-openings/a.tsv"),
    ),
    (
        "b.tsv",
        include_str!("../../../../data/chess-openings/b.tsv"),
    ),
    (
        "c.tsv",
        include_str!("../../../../data/chess-openings/c.tsv"),
    ),
    (
        "d.tsv",
        include_str!("../../../../data/chess-openings/d.tsv"),
    ),
    (
        "e.tsv",
        include_str!("../../../../data/chess-openings/e.tsv"),
    ),
];

/// A named opening of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedOpening {
    /// The ECO code, `A00` to `E99`.
    pub eco: String,
    /// The name, `Family: Variation, Subvariation`.
    pub name: String,
    /// The table's line to the named position (SAN with move numbers).
    pub pgn: String,
    /// The number of plies of that line.
    pub plies: usize,
}

/// Opening names by position.
#[derive(Debug, Default)]
pub struct EcoTable {
    by_epd: HashMap<String, NamedOpening>,
}

/// The key of a position in the table.
fn epd(position: &Chess) -> String {
    Epd::from_position(position, EnPassantMode::Legal).to_string()
}

/// Replays one SAN line from the initial position with pgn-reader, stopping at the first move that
/// does not parse or is not legal.
struct LineVisitor;

impl Visitor for LineVisitor {
    type Tags = ();
    type Movetext = (Chess, usize);
    type Output = Result<(Chess, usize), String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, (): ()) -> ControlFlow<Self::Output, Self::Movetext> {
        ControlFlow::Continue((Chess::default(), 0))
    }

    fn san(
        &mut self,
        (position, plies): &mut Self::Movetext,
        san_plus: SanPlus,
    ) -> ControlFlow<Self::Output> {
        match san_plus.san.to_move(position) {
            Ok(m) => {
                position.play_unchecked(m);
                *plies += 1;
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(Err(format!("`{san_plus}` after {plies} plies: {e}"))),
        }
    }

    fn end_game(&mut self, (position, plies): Self::Movetext) -> Self::Output {
        Ok((position, plies))
    }
}

impl EcoTable {
    /// Lichess's table, built on first use (a few milliseconds).
    ///
    /// # Panics
    ///
    /// If the vendored files are broken, which the unit tests rule out.
    pub fn lichess() -> &'static EcoTable {
        static TABLE: LazyLock<EcoTable> = LazyLock::new(|| {
            let mut table = EcoTable::default();
            for (name, text) in LICHESS_FILES {
                table
                    .add_tsv(name, text)
                    .unwrap_or_else(|e| panic!("the vendored opening table is broken: {e}"));
            }
            table
        });
        &TABLE
    }

    /// Adds the lines of one table file in lichess's format: a header `eco\tname\tpgn`, then one
    /// opening a line. A position named twice keeps its first name.
    ///
    /// # Errors
    ///
    /// [`BoardError::Opening`] naming `file:line` for a line without three columns or with moves
    /// that are not legal from the initial position.
    pub(crate) fn add_tsv(&mut self, file: &str, text: &str) -> Result<(), BoardError> {
        for (index, line) in text.lines().enumerate() {
            let error = |message: String| BoardError::Opening {
                source_name: format!("{file}:{}", index + 1),
                message,
            };
            let columns: Vec<&str> = line.split('\t').collect();
            let [eco, name, pgn] = columns[..] else {
                return Err(error(format!(
                    "expected 3 tab-separated columns, got {}",
                    columns.len()
                )));
            };
            if index == 0 && [eco, name, pgn] == ["eco", "name", "pgn"] {
                continue;
            }
            let (position, plies) = Reader::new(io::Cursor::new(pgn.as_bytes()))
                .read_game(&mut LineVisitor)
                .map_err(|e| error(e.to_string()))?
                .ok_or_else(|| error("no moves".to_owned()))?
                .map_err(error)?;
            self.by_epd
                .entry(epd(&position))
                .or_insert_with(|| NamedOpening {
                    eco: eco.to_owned(),
                    name: name.to_owned(),
                    pgn: pgn.to_owned(),
                    plies,
                });
        }
        Ok(())
    }

    /// The number of named positions.
    pub fn len(&self) -> usize {
        self.by_epd.len()
    }

    /// Whether the table names no position.
    pub fn is_empty(&self) -> bool {
        self.by_epd.is_empty()
    }

    /// The opening of the position, if the table names it.
    pub fn get(&self, position: &Chess) -> Option<&NamedOpening> {
        self.by_epd.get(&epd(position))
    }

    /// The opening of a game given as the positions it went through in order (the start position
    /// first): the name of the latest named one.
    pub fn classify<'a>(
        &self,
        positions: impl IntoIterator<Item = &'a Chess>,
    ) -> Option<&NamedOpening> {
        positions.into_iter().filter_map(|p| self.get(p)).last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Game;

    fn positions(fen: Option<&str>, moves: &[&str]) -> Vec<Chess> {
        let mut game = Game::new(fen, 0).unwrap();
        let mut all = vec![game.position().clone()];
        for m in moves {
            game.play_uci(m).unwrap();
            all.push(game.position().clone());
        }
        all
    }

    fn name_of(fen: Option<&str>, moves: &[&str]) -> Option<(String, String)> {
        EcoTable::lichess()
            .classify(&positions(fen, moves))
            .map(|o| (o.eco.clone(), o.name.clone()))
    }

    #[test]
    fn every_line_of_the_vendored_table_is_read_and_no_position_is_named_twice() {
        let lines: usize = LICHESS_FILES
            .iter()
            .map(|(_, text)| text.lines().count() - 1)
            .sum();
        assert_eq!(lines, 3807, "the PROVENANCE note counts 3,807 lines");
        // Lichess's own lint rejects duplicate positions, so every line names its own.
        assert_eq!(EcoTable::lichess().len(), lines);
    }

    #[test]
    fn games_are_named_by_the_latest_named_position() {
        assert_eq!(name_of(None, &[]), None, "the initial position has no name");
        assert_eq!(
            name_of(None, &["e2e4", "c7c5"]),
            Some(("B20".into(), "Sicilian Defense".into()))
        );
        // Najdorf, then moves beyond the table: the last named position wins.
        let najdorf = [
            "e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6", "b1c3", "a7a6", "h2h3",
            "h7h6",
        ];
        let (eco, name) = name_of(None, &najdorf).unwrap();
        assert_eq!(eco, "B90");
        assert!(
            name.starts_with("Sicilian Defense: Najdorf Variation"),
            "{name}"
        );
    }

    #[test]
    fn transpositions_reach_the_same_name() {
        // The Queen's Gambit Declined from 1. d4 d5 2. c4 e6 and from 1. c4 e6 2. d4 d5.
        let direct = name_of(None, &["d2d4", "d7d5", "c2c4", "e7e6"]);
        let transposed = name_of(None, &["c2c4", "e7e6", "d2d4", "d7d5"]);
        assert_eq!(
            direct,
            Some(("D30".into(), "Queen's Gambit Declined".into()))
        );
        assert_eq!(transposed, direct);
    }

    #[test]
    fn a_game_from_a_book_fen_is_named_from_its_start_position() {
        // The Italian Game's position given as a FEN, with no move played yet.
        let italian = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3";
        assert_eq!(
            name_of(Some(italian), &[]).map(|(eco, _)| eco),
            Some("C50".into())
        );
    }

    #[test]
    fn bad_lines_name_their_place() {
        let mut table = EcoTable::default();
        let err = table
            .add_tsv("x.tsv", "eco\tname\tpgn\nA00\tNonsense\t1. e4 e4\n")
            .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("x.tsv:2: `e4` after 1 plies"), "{text}");
        let err = table.add_tsv("x.tsv", "A00\tno pgn\n").unwrap_err();
        assert!(err.to_string().contains("x.tsv:1: expected 3"), "{err}");
        assert!(table.is_empty());
    }
}
