//! Properties of the TRF reader (`pairing::trf`): generated tournaments written by `arena export
//! trf` read back as the same tournament, and any bytes give a tournament or an error naming a
//! line. See `crate::fuzz`
//! for the case counts and the hostile corpus.

use std::path::Path;

use proptest::prelude::*;

use super::write_trf as trf;
use crate::fuzz::{config, corpus};
use crate::pairing::trf::{TrfError, TrfFile, parse_trf, read_trf};
use crate::pairing::{Colour, Player, Record, RoundEntry, Tournament, UnplayedGame};

/// A tournament arena could write: each round pairs the present players in a random order; a
/// pair plays (any result, either colour), is void (a double forfeit) or is forfeited by one
/// side; an odd player out gets the pairing-allocated bye; an absent player a bye of 0, ½ or 1.
fn build(
    n: usize,
    rounds: usize,
    choices: &[u32],
    bye_points: u32,
    initial_colour: Colour,
) -> Record {
    let mut next = {
        let mut i = 0;
        move || {
            i += 1;
            choices[i % choices.len()]
        }
    };
    let mut entries: Vec<Vec<RoundEntry>> = vec![Vec::new(); n];
    let mut unplayed = Vec::new();
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, next() as usize % (i + 1));
        }
        let mut present = Vec::new();
        for p in order {
            if next() % 8 == 0 {
                let points = [0, 5, 10][next() as usize % 3];
                entries[p].push(RoundEntry::Unplayed { points });
            } else {
                present.push(p);
            }
        }
        for pair in present.chunks(2) {
            let &[a, b] = pair else {
                entries[pair[0]].push(RoundEntry::PairingBye { points: bye_points });
                continue;
            };
            let (white, black) = if next() % 2 == 0 { (a, b) } else { (b, a) };
            match next() % 8 {
                0 => {
                    entries[white].push(RoundEntry::Unplayed { points: 0 });
                    entries[black].push(RoundEntry::Unplayed { points: 0 });
                    unplayed.push(UnplayedGame {
                        round,
                        white,
                        black,
                    });
                }
                1 => {
                    let winner_white = next() % 2 == 0;
                    entries[white].push(RoundEntry::Unplayed {
                        points: if winner_white { 10 } else { 0 },
                    });
                    entries[black].push(RoundEntry::Unplayed {
                        points: if winner_white { 0 } else { 10 },
                    });
                    unplayed.push(UnplayedGame {
                        round,
                        white,
                        black,
                    });
                }
                _ => {
                    let points = [0, 5, 10][next() as usize % 3];
                    entries[white].push(RoundEntry::Played {
                        opponent: black,
                        colour: Colour::White,
                        points,
                    });
                    entries[black].push(RoundEntry::Played {
                        opponent: white,
                        colour: Colour::Black,
                        points: 10 - points,
                    });
                }
            }
        }
    }
    Record {
        tournament: Tournament {
            players: entries
                .into_iter()
                .map(|rounds| Player {
                    rounds,
                    available: true,
                })
                .collect(),
            total_rounds: rounds,
            points_for_win: 10,
            points_for_draw: 5,
            initial_colour,
            forbidden: Vec::new(),
        },
        names: vec![String::new(); n],
        ratings: vec![None; n],
        unplayed,
    }
}

/// Any tournament [`build`] makes, with its name.
fn any_tournament() -> impl Strategy<Value = (String, Record)> {
    let name = prop_oneof![Just(String::new()), "[!-~é♞]([ -~é♞]{0,40}[!-~é♞])?"];
    (1usize..12, 0usize..7, 0usize..3).prop_flat_map(move |(n, rounds, extra)| {
        (
            name.clone(),
            proptest::collection::vec(any::<u32>(), 1..64),
            proptest::collection::vec(
                prop_oneof![
                    Just(String::new()),
                    "[A-Za-z0-9é♞]([A-Za-z0-9 ._é♞-]{0,31}[A-Za-z0-9é♞])?"
                ],
                n,
            ),
            proptest::collection::vec(proptest::option::of(1u16..10000), n),
            proptest::sample::select(vec![0u32, 5, 10]),
            any::<bool>(),
            proptest::collection::vec((0usize..12, 0usize..12), 0..4),
        )
            .prop_map(
                move |(name, choices, names, ratings, bye, white, forbidden)| {
                    let colour = if white { Colour::White } else { Colour::Black };
                    let mut record = build(n, rounds, &choices, bye, colour);
                    record.tournament.total_rounds = rounds + extra;
                    record.tournament.forbidden =
                        forbidden.iter().map(|&(a, b)| (a % n, b % n)).collect();
                    record.names = names;
                    record.ratings = ratings.into_iter().map(|r| r.map(f64::from)).collect();
                    (name, record)
                },
            )
    })
}

/// What a record reads back as: the forbidden pairs the export writes (those that never played,
/// lower number first, sorted) and the unplayed games in order.
fn normalised(mut record: Record) -> Record {
    record.tournament.forbidden = record.tournament.barred_pairs();
    record.unplayed.sort_by_key(|g| (g.round, g.white, g.black));
    record
}

fn read(text: &str) -> Result<TrfFile, TrfError> {
    parse_trf(text.as_bytes(), "t.trf")
}

/// The line an error names, if any.
fn error_line(e: &TrfError) -> Option<usize> {
    match e {
        TrfError::Line { line, .. } => Some(*line),
        _ => None,
    }
}

/// Checks what any input read: an error names a line of it; a tournament is consistent (the two
/// cells of a game name each other with opposite colours) and reads back the same after being
/// written again.
fn check_any(bytes: &[u8]) -> Result<(), TestCaseError> {
    let lines = bytes.split(|b| *b == b'\n').count();
    match parse_trf(bytes, "t.trf") {
        Err(e) => {
            let line = error_line(&e);
            prop_assert!(
                line.is_some_and(|l| (1..=lines).contains(&l)),
                "{e} (of {lines} lines)"
            );
            prop_assert!(!e.to_string().is_empty());
        }
        Ok(file) => {
            let t = &file.record.tournament;
            let n = t.players.len();
            prop_assert_eq!(file.record.names.len(), n);
            prop_assert_eq!(file.record.ratings.len(), n);
            for (p, player) in t.players.iter().enumerate() {
                for (r, entry) in player.rounds.iter().enumerate() {
                    if let RoundEntry::Played {
                        opponent, colour, ..
                    } = *entry
                    {
                        prop_assert!(opponent < n && opponent != p);
                        let mirrored = matches!(
                            t.players[opponent].rounds[r],
                            RoundEntry::Played { opponent: o, colour: c, .. } if o == p && c == colour.invert()
                        );
                        prop_assert!(mirrored, "round {} of {}", r + 1, p + 1);
                    }
                }
            }
            // The export writes scores in the four columns TRF gives them (under 100 points) and
            // results in arena's own unit (a win is 1.0, a draw 0.5).
            let scores_fit = t.players.iter().all(|p| {
                p.rounds
                    .iter()
                    .map(|r| match *r {
                        RoundEntry::Played { points, .. }
                        | RoundEntry::PairingBye { points }
                        | RoundEntry::Unplayed { points } => u64::from(points),
                    })
                    .sum::<u64>()
                    < 1000
            });
            if t.points_for_win == 10 && t.points_for_draw == 5 && scores_fit {
                let again = read(&trf(&file.name, &file.record))
                    .map_err(|e| TestCaseError::fail(format!("written again: {e}")))?;
                prop_assert_eq!(&again.name, &file.name);
                prop_assert_eq!(again.record, normalised(file.record));
            }
        }
    }
    Ok(())
}

/// Text shaped like a TRF file: an exported tournament with bytes changed, lines cut or
/// repeated, or lines of TRF fragments.
fn trf_bytes() -> impl Strategy<Value = Vec<u8>> {
    const WORDS: &[&str] = &[
        "001 ",
        "012 ",
        "XXR ",
        "XXC ",
        "XXP ",
        "BBU ",
        "BBW ",
        "BBD ",
        "white1",
        "black1",
        "   1",
        "   2",
        "   3",
        "9999",
        "0000",
        " w ",
        " b ",
        " - ",
        "1",
        "0",
        "=",
        "+",
        "-",
        "U",
        "F",
        "H",
        "Z",
        "W",
        "D",
        "L",
        "  ",
        "          ",
        "\n",
        "\r\n",
        " 1.0",
        "0.5",
        "é",
        "\u{0}",
    ];
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..400),
        proptest::collection::vec(proptest::sample::select(WORDS), 0..120)
            .prop_map(|w| w.concat().into_bytes()),
        (
            any_tournament(),
            proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
            proptest::option::of(any::<usize>()),
        )
            .prop_map(|((name, record), edits, cut)| {
                let mut bytes = trf(&name, &record).into_bytes();
                for (at, byte) in edits {
                    if !bytes.is_empty() {
                        let at = at % bytes.len();
                        bytes[at] = byte;
                    }
                }
                if let Some(cut) = cut {
                    bytes.truncate(cut % (bytes.len() + 1));
                }
                bytes
            }),
    ]
}

proptest! {
    #![proptest_config(config(256))]

    /// A generated tournament written as TRF reads back with the same name, players, ratings,
    /// rounds, colours, results, byes, forfeits and barred pairs.
    #[test]
    fn trf_round_trip((name, record) in any_tournament()) {
        let text = trf(&name, &record);
        let file = read(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&file.name, &name);
        prop_assert_eq!(file.record, normalised(record), "{}", text);
    }

    /// Any bytes as a TRF file give a tournament or an error naming one of its lines.
    #[test]
    fn fuzz_any_trf_gives_a_tournament_or_a_line(bytes in trf_bytes()) {
        check_any(&bytes)?;
    }
}

/// Every TRF file bbpPairings wrote for the pairing tests (and arena's exported ones) reads, with
/// each player's points as its score column says.
#[test]
fn every_bbp_pairings_file_reads_with_its_scores() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/swiss");
    let mut files = Vec::new();
    for dir in [root.clone(), root.join("exported")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "trf") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 50, "{} files", files.len());
    let mut forfeits = 0;
    for path in files {
        let file = read_trf(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&path).unwrap();
        let scores: Vec<u32> = text
            .lines()
            .filter(|l| l.starts_with("001"))
            .map(|l| {
                let (whole, tenth) = l[80..84].trim().split_once('.').unwrap();
                whole.parse::<u32>().unwrap() * 10 + tenth.parse::<u32>().unwrap()
            })
            .collect();
        let t = &file.record.tournament;
        assert_eq!(t.players.len(), scores.len(), "{}", path.display());
        for (p, player) in t.players.iter().enumerate() {
            let sum: u32 = player
                .rounds
                .iter()
                .map(|r| match *r {
                    RoundEntry::Played { points, .. }
                    | RoundEntry::PairingBye { points }
                    | RoundEntry::Unplayed { points } => points,
                })
                .sum();
            assert_eq!(sum, scores[p], "{} player {}", path.display(), p + 1);
        }
        forfeits += file.record.unplayed.len();
    }
    assert!(forfeits > 0, "the fixtures hold forfeits");
}

/// A bad line is refused with its number and what is wrong.
#[test]
fn errors_name_the_line() {
    let err = |text: &str| read(text).unwrap_err().to_string();
    let player = |n: &str, rounds: &str| {
        format!(
            "001 {n:>4}      {:<33} {:>4}                            {:>4} {:>4}{rounds}",
            "p", "", "0.0", "1"
        )
    };
    let two = format!(
        "{}\n{}\n",
        player("1", "     2 w 1"),
        player("2", "     1 w 0")
    );
    assert_eq!(
        err(&format!("012 x\n{two}")),
        "t.trf:2: round 1: the opponent 2's cell does not match"
    );
    let text = format!(
        "XXR 1\n{}\n{}\n",
        player("1", "     3 w 1"),
        player("2", "")
    );
    assert_eq!(
        err(&text),
        "t.trf:2: round 1: opponent 3 is not among the 2 players"
    );
    assert_eq!(
        err(&format!("{}\n{}\n", player("1", ""), player("1", ""))),
        "t.trf:2: pairing number 1 is given twice"
    );
    assert_eq!(
        err("XXC red\n"),
        "t.trf:1: XXC needs `white1` or `black1`: `XXC red`"
    );
    let long = format!("012 {}\n", "x".repeat(5000));
    assert_eq!(
        err(&long),
        "t.trf:1: the line is longer than the limit of 4096 bytes"
    );
}

/// The hostile corpus as TRF files.
#[test]
fn fuzz_corpus_through_the_trf_reader() {
    for (name, bytes) in corpus() {
        check_any(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
