//! The Dutch pairer against bbpPairings: every round of every tournament in
//! `tests/fixtures/swiss/` (made by bbpPairings' generator, see the README there) is paired again
//! from the rounds before it, and must come out as bbpPairings paired it. The files are read by
//! arena's own TRF reader (`super::read_trf`), the one every TRF goes through.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Colour, Player, Record, RoundEntry, Tournament, pair_round, read_trf};

/// The tournament before round `round` (1-based) and the file's pairing of that round: the
/// pairs with White first (a game paired and not played, arena's void game, included: a checker
/// reads it as a pairing of its round) and the pairing-allocated bye.
fn before(record: &Record, round: usize) -> (Tournament, BTreeSet<(usize, usize)>, Option<usize>) {
    let index = round - 1;
    let mut pairs: BTreeSet<(usize, usize)> = record
        .unplayed
        .iter()
        .filter(|g| g.round == index)
        .map(|g| (g.white, g.black))
        .collect();
    let mut bye = None;
    for (p, player) in record.tournament.players.iter().enumerate() {
        match player.rounds.get(index) {
            Some(RoundEntry::Played {
                opponent,
                colour: Colour::White,
                ..
            }) => {
                pairs.insert((p, *opponent));
            }
            Some(RoundEntry::PairingBye { .. }) => bye = Some(p),
            _ => {}
        }
    }
    let paired: BTreeSet<usize> = pairs.iter().flat_map(|&(w, b)| [w, b]).collect();
    let players = record
        .tournament
        .players
        .iter()
        .enumerate()
        .map(|(p, player)| Player {
            rounds: player.rounds[..index.min(player.rounds.len())].to_vec(),
            available: paired.contains(&p) || bye == Some(p),
        })
        .collect();
    let t = Tournament {
        players,
        ..record.tournament.clone()
    };
    (t, pairs, bye)
}

/// A fixture read by arena's TRF reader, and its number of rounds played.
fn read(path: &Path) -> (Record, usize) {
    let file = read_trf(path).unwrap_or_else(|e| panic!("{e}"));
    let rounds = file
        .record
        .tournament
        .players
        .iter()
        .map(|p| p.rounds.len())
        .max()
        .unwrap_or(0);
    (file.record, rounds)
}

fn fixture_files() -> Vec<PathBuf> {
    trf_files("tests/fixtures/swiss")
}

fn trf_files(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(folder);
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
        let (record, rounds) = read(file);
        for round in 1..=rounds {
            let (t, pairs, bye) = before(&record, round);
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
        let (record, rounds) = read(file);
        for round in 1..=rounds {
            let (t, pairs, bye) = before(&record, round);
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
