//! The Dutch pairer against bbpPairings: every round of every tournament in
//! `tests/fixtures/swiss/` (made by bbpPairings' generator, see the README there) is paired again
//! from the rounds before it, and must come out as bbpPairings paired it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Colour, Player, RoundEntry, Tournament, pair_round};

/// One round of one player as a TRF file writes it.
#[derive(Debug, Clone, Copy)]
struct Cell {
    opponent: Option<usize>,
    colour: Option<Colour>,
    code: char,
}

/// A TRF tournament: per player (by pairing number) the rounds.
struct Trf {
    cells: Vec<Vec<Option<Cell>>>,
    rounds: usize,
}

fn read_trf(path: &Path) -> Trf {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows: Vec<(usize, Vec<Option<Cell>>)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if !line.starts_with("001") {
            continue;
        }
        let id: usize = line[4..8]
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}:{}", path.display(), n + 1));
        let mut cells = Vec::new();
        let mut at = 91;
        while at + 8 <= line.len() {
            let chunk = &line[at..at + 8];
            let opp = chunk[0..4].trim();
            let colour = match &chunk[5..6] {
                "w" => Some(Colour::White),
                "b" => Some(Colour::Black),
                _ => None,
            };
            let code = chunk[7..8].chars().next().unwrap();
            if opp.is_empty() && code == ' ' {
                cells.push(None);
            } else {
                let o: usize = opp.parse().unwrap();
                cells.push(Some(Cell {
                    opponent: (o > 0).then(|| o - 1),
                    colour,
                    code,
                }));
            }
            at += 10;
        }
        rows.push((id - 1, cells));
    }
    rows.sort_by_key(|r| r.0);
    let rounds = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let cells = rows
        .into_iter()
        .map(|(_, mut c)| {
            c.resize(rounds, None);
            c
        })
        .collect();
    Trf { cells, rounds }
}

/// Points in tenths for a result code; whether the game was played.
fn points(code: char) -> (u32, bool) {
    match code {
        '1' | 'W' => (10, true),
        '=' | 'D' => (5, true),
        '0' | 'L' => (0, true),
        '+' | 'F' | 'U' => (10, false),
        'H' => (5, false),
        _ => (0, false),
    }
}

/// The tournament before round `round` (1-based) and bbpPairings' pairing of that round.
fn before(trf: &Trf, round: usize) -> (Tournament, BTreeSet<(usize, usize)>, Option<usize>) {
    let mut players = Vec::new();
    for cells in &trf.cells {
        let rounds = cells[..round - 1]
            .iter()
            .map(|c| match c {
                Some(c) => {
                    let (pts, played) = points(c.code);
                    match (played, c.opponent, c.colour, c.code) {
                        (true, Some(opponent), Some(colour), _) => RoundEntry::Played {
                            opponent,
                            colour,
                            points: pts,
                        },
                        (_, _, _, 'U') => RoundEntry::PairingBye { points: pts },
                        _ => RoundEntry::Unplayed { points: pts },
                    }
                }
                None => RoundEntry::Unplayed { points: 0 },
            })
            .collect();
        let available =
            matches!(cells[round - 1], Some(c) if c.opponent.is_some() || c.code == 'U');
        players.push(Player { rounds, available });
    }
    let mut pairs = BTreeSet::new();
    let mut bye = None;
    for (p, cells) in trf.cells.iter().enumerate() {
        if let Some(c) = cells[round - 1] {
            match (c.opponent, c.colour) {
                (Some(o), Some(Colour::White)) => {
                    pairs.insert((p, o));
                }
                (None, _) if c.code == 'U' => bye = Some(p),
                _ => {}
            }
        }
    }
    // The initial colour: player 1's in round 1, or the next player's reversed, and so on.
    let mut initial = Colour::White;
    for (p, cells) in trf.cells.iter().enumerate() {
        if let Some(Cell {
            colour: Some(c), ..
        }) = cells[0]
        {
            initial = if p % 2 == 0 { c } else { c.invert() };
            break;
        }
    }
    let t = Tournament {
        players,
        total_rounds: trf.rounds,
        points_for_win: 10,
        points_for_draw: 5,
        initial_colour: initial,
        forbidden: Vec::new(),
    };
    (t, pairs, bye)
}

fn fixture_files() -> Vec<PathBuf> {
    trf_files("tests/fixtures/swiss")
}

fn trf_files(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "trf"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_round_of_every_fixture_is_paired_as_bbp_pairings_paired_it() {
    let files = fixture_files();
    assert!(
        files.len() >= 390,
        "expected the fixture set, found {} files",
        files.len()
    );
    let (mut total, mut same) = (0, 0);
    let mut misses = Vec::new();
    for file in &files {
        let trf = read_trf(file);
        for round in 1..=trf.rounds {
            let (t, pairs, bye) = before(&trf, round);
            total += 1;
            match pair_round(&t) {
                Ok(p) => {
                    let ours: BTreeSet<(usize, usize)> = p.pairs.iter().copied().collect();
                    if ours == pairs && p.bye == bye {
                        same += 1;
                    } else {
                        misses.push(format!(
                            "{} round {round}: ours {:?} bye {:?}, bbpPairings {:?} bye {:?}",
                            file.file_name().unwrap().to_string_lossy(),
                            ours.iter().map(|(a, b)| (a + 1, b + 1)).collect::<Vec<_>>(),
                            p.bye.map(|b| b + 1),
                            pairs
                                .iter()
                                .map(|(a, b)| (a + 1, b + 1))
                                .collect::<Vec<_>>(),
                            bye.map(|b| b + 1)
                        ));
                    }
                }
                Err(e) => misses.push(format!(
                    "{} round {round}: {e}",
                    file.file_name().unwrap().to_string_lossy()
                )),
            }
        }
    }
    println!(
        "{same} of {total} rounds in {} tournaments paired as bbpPairings paired them",
        files.len()
    );
    for m in misses.iter().take(40) {
        println!("{m}");
    }
    assert!(
        misses.is_empty(),
        "{} of {total} rounds differ",
        misses.len()
    );
}

#[test]
fn every_round_of_the_exported_fixtures_is_paired_as_the_file_says() {
    // TRF files arena wrote (`tests/fixtures/swiss/exported/`, each checked clean by
    // `bbpPairings --dutch FILE -c`, its output committed beside it): read back as a checker
    // reads them (a double forfeit is a pairing of its round, and no meeting), every round is
    // paired again as the file has it.
    let files = trf_files("tests/fixtures/swiss/exported");
    assert!(!files.is_empty(), "no exported fixtures");
    for file in &files {
        let trf = read_trf(file);
        for round in 1..=trf.rounds {
            let (t, pairs, bye) = before(&trf, round);
            let p = pair_round(&t).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let ours: BTreeSet<(usize, usize)> = p.pairs.iter().copied().collect();
            assert_eq!(
                (ours, p.bye),
                (pairs, bye),
                "{} round {round}",
                file.display()
            );
        }
    }
}
