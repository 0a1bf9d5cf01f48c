//! The parts of the server that need no socket: token comparison and the live events.

use super::*;
use crate::store::{GameProgress, TournamentProgress};

#[test]
fn a_token_matches_only_itself() {
    assert!(same("abc", "abc"));
    assert!(!same("abd", "abc"));
    assert!(!same("ab", "abc"));
    assert!(!same("", "abc"));
    let t = new_token();
    assert_eq!(t.len(), 32);
    assert_ne!(t, new_token());
}

fn progress(finished: u64, running: &[(i64, u64, u64)]) -> TournamentProgress {
    TournamentProgress {
        games: 4,
        finished,
        last_game: 4,
        running: running
            .iter()
            .map(|&(game, plies, calls)| GameProgress { game, plies, calls })
            .collect(),
    }
}

fn names(before: Option<&TournamentProgress>, now: &TournamentProgress) -> Vec<String> {
    live::changes(before, now)
        .into_iter()
        .map(|e| {
            // An event renders as `event: NAME\ndata: ...`.
            let text = format!("{e:?}");
            ["hello", "ply", "games", "leaderboard"]
                .into_iter()
                .find(|n| text.contains(&format!("event: {n}\\n")))
                .unwrap_or("?")
                .to_owned()
        })
        .collect()
}

#[test]
fn a_stored_ply_a_new_game_and_a_finished_one_each_make_their_event() {
    let start = progress(0, &[(1, 3, 0)]);
    assert_eq!(names(None, &start), ["hello"]);
    assert!(names(Some(&start), &start).is_empty(), "nothing changed");
    let ply = progress(0, &[(1, 4, 0)]);
    assert_eq!(names(Some(&start), &ply), ["ply"]);
    let second = progress(0, &[(1, 4, 0), (2, 0, 0)]);
    assert_eq!(names(Some(&ply), &second), ["ply", "games"]);
    let finished = progress(1, &[(2, 0, 0)]);
    assert_eq!(
        names(Some(&second), &finished),
        ["ply", "games", "leaderboard"]
    );
}
