//! A Swiss tournament as a FIDE TRF file (the TRF-16 layout with the TRF(x) extensions that
//! pairing programs such as JaVaFo and bbpPairings read), so that anyone can check its pairings
//! with their own program (`bbpPairings --dutch FILE -c`).
//!
//! Written: the tournament's name (012), its number of rounds (XXR), the colour of pairing
//! number 1 in round 1 (XXC), the points of a pairing-allocated bye when not a win (BBU), pairs
//! barred from meeting although they never played (XXP: two players of a void game), and one
//! player line (001) per player with each round's opponent, colour and result. A void game (a
//! harness fault, scored for nobody) is a double forfeit: the opponent and colour with `-` on
//! both sides, so that a checker sees the round's pairing as it was made (and, as arena does,
//! lets the pair meet again); a forfeit paired but won by one side is `+` for it and `-` for the
//! other. A round without a game is `0000 - U` for the
//! pairing-allocated bye, else `0000 - Z`, `H` or `F` by the points it scored.

use std::fmt::Write as _;

use crate::pairing::{Colour, Record, RoundEntry};

/// Points are tenths in a [`Record`]; the file writes them with one decimal.
fn tenths(points: u32) -> String {
    format!("{}.{}", points / 10, points % 10)
}

/// The TRF text of `record` under the tournament name `name`.
#[must_use]
pub fn write_trf(name: &str, record: &Record) -> String {
    let t = &record.tournament;
    let mut out = String::new();
    let _ = writeln!(out, "012 {name}");
    let _ = writeln!(out, "XXR {}", t.total_rounds);
    let first = match t.initial_colour {
        Colour::White => "white1",
        Colour::Black => "black1",
    };
    let _ = writeln!(out, "XXC {first}");
    let bye_points = t
        .players
        .iter()
        .flat_map(|p| &p.rounds)
        .find_map(|r| match r {
            RoundEntry::PairingBye { points } => Some(*points),
            _ => None,
        });
    if let Some(points) = bye_points.filter(|&p| p != t.points_for_win) {
        let _ = writeln!(out, "BBU {:>4}", tenths(points));
    }
    for (a, b) in t.barred_pairs() {
        let _ = writeln!(out, "XXP {} {}", a + 1, b + 1);
    }
    // The rank column: by points, then pairing number.
    let score = |i: usize| -> u32 { t.players[i].rounds.iter().map(entry_points).sum() };
    let mut by_rank: Vec<usize> = (0..t.players.len()).collect();
    by_rank.sort_by_key(|&i| (std::cmp::Reverse(score(i)), i));
    let mut rank = vec![0; t.players.len()];
    for (r, &i) in by_rank.iter().enumerate() {
        rank[i] = r + 1;
    }
    for (i, player) in t.players.iter().enumerate() {
        let name: String = record.names[i].chars().take(33).collect();
        let rating = record
            .ratings
            .get(i)
            .copied()
            .flatten()
            .filter(|r| (1.0..10000.0).contains(r))
            .map_or_else(String::new, |r| format!("{:.0}", r.round()));
        let mut line = format!(
            "001 {:>4}      {:<33} {:>4}                            {:>4} {:>4}",
            i + 1,
            name,
            rating,
            tenths(score(i)),
            rank[i]
        );
        for (round, entry) in player.rounds.iter().enumerate() {
            line.push_str("  ");
            // A void game: paired, so a checker must see the pairing; unplayed, with no points,
            // so a double forfeit (`-` on both sides), which counts in no colour history.
            let paired = record
                .unplayed
                .iter()
                .filter(|g| g.round == round)
                .find_map(|g| {
                    if g.white == i {
                        Some((g.black, 'w'))
                    } else if g.black == i {
                        Some((g.white, 'b'))
                    } else {
                        None
                    }
                });
            if let (Some((opponent, c)), RoundEntry::Unplayed { points }) = (paired, entry) {
                // A forfeit: `+` for the side that scored the win, `-` for the other.
                let code = match *points {
                    0 => Some('-'),
                    p if p >= t.points_for_win => Some('+'),
                    _ => None,
                };
                if let Some(code) = code {
                    let _ = write!(line, "{:>4} {c} {code}", opponent + 1);
                    continue;
                }
            }
            match *entry {
                RoundEntry::Played {
                    opponent,
                    colour,
                    points,
                } => {
                    let c = if colour == Colour::White { 'w' } else { 'b' };
                    let result = match points {
                        p if p >= t.points_for_win => '1',
                        0 => '0',
                        _ => '=',
                    };
                    let _ = write!(line, "{:>4} {c} {result}", opponent + 1);
                }
                RoundEntry::PairingBye { .. } => line.push_str("0000 - U"),
                RoundEntry::Unplayed { points } => {
                    let code = match points {
                        0 => 'Z',
                        p if p >= t.points_for_win => 'F',
                        _ => 'H',
                    };
                    let _ = write!(line, "0000 - {code}");
                }
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn entry_points(r: &RoundEntry) -> u32 {
    match *r {
        RoundEntry::Played { points, .. }
        | RoundEntry::PairingBye { points }
        | RoundEntry::Unplayed { points } => points,
    }
}

#[cfg(test)]
mod tests {
    use super::write_trf;
    use crate::pairing::{Colour, Player, Record, RoundEntry, Tournament};

    #[test]
    fn player_lines_keep_the_trf_columns() {
        let played = |opponent, colour, points| RoundEntry::Played {
            opponent,
            colour,
            points,
        };
        let record = Record {
            tournament: Tournament {
                players: vec![
                    Player {
                        rounds: vec![played(1, Colour::White, 10)],
                        available: true,
                    },
                    Player {
                        rounds: vec![played(0, Colour::Black, 0)],
                        available: true,
                    },
                    Player {
                        rounds: vec![RoundEntry::PairingBye { points: 5 }],
                        available: true,
                    },
                ],
                total_rounds: 3,
                points_for_win: 10,
                points_for_draw: 5,
                initial_colour: Colour::White,
                forbidden: vec![(0, 1), (1, 2)],
            },
            names: vec!["gpt".into(), "claude".into(), "sf".into()],
            ratings: vec![Some(1500.0), None, Some(2100.4)],
            unplayed: Vec::new(),
        };
        let text = write_trf("demo", &record);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            &lines[..5],
            &["012 demo", "XXR 3", "XXC white1", "BBU  0.5", "XXP 2 3"]
        );
        let p1 = lines[5];
        assert_eq!(&p1[4..8], "   1");
        assert_eq!(p1[14..47].trim_end(), "gpt");
        assert_eq!(&p1[48..52], "1500");
        assert_eq!(&p1[80..84], " 1.0");
        assert_eq!(&p1[85..89], "   1");
        assert_eq!(&p1[91..99], "   2 w 1");
        assert_eq!(&lines[6][91..99], "   1 b 0");
        assert_eq!(&lines[7][48..52], "2100");
        assert_eq!(&lines[7][91..99], "0000 - U");
        assert_eq!(&lines[7][80..84], " 0.5");
    }
}
