//! Self-consistency voting: a model player with the mode option `samples = N` (N > 1) is asked
//! the same request N times at its sampling `temperature`, every reply goes through the play
//! mode's reply hook on its own, and the move most of them decided is played.
//!
//! The rules, as the book's players page states them:
//! - The vote is over the legal moves the samples decided (a reply the mode read as a move the
//!   board refuses counts for nothing). The move with the most votes wins; a tie goes to the tied
//!   move whose first vote came from the earliest sample (lowest `seq`). The reply of that
//!   earliest sample is the one played: its row gets the mode's outcome (`move`) and the dialog
//!   continues from it.
//! - When no sample decided a legal move, the first sample's decision is the attempt's decision,
//!   exactly as if it had been the only reply: its feedback, its forfeit, its outcome (`illegal`,
//!   `no_move_found`, ...), so the mode's retry and failure path runs unchanged.
//! - Every other sample's row gets the outcome [`SAMPLE_OUTCOME`], with what the mode made of it
//!   (and the tally) in its detail. So each attempt has exactly one decided row, and the
//!   per-attempt rates (ChessArena's parse errors and illegal moves, LLM Chess's wrong actions
//!   and wrong moves) keep their meaning: they count the vote's decisions, one per attempt, while
//!   calls, tokens and cost count every sample.
//!
//! Only modes with one reply per attempt can vote: a mode with a `max_turns` option holds a dialog
//! within a ply (the agentic mode), and a sample answered with `say` has no move to vote for, so
//! `arena check` refuses `samples` there, and a reply hook that answers `say` to a sample sets the
//! game aside as a script error.

use std::collections::BTreeMap;

pub use crate::spec::samples::{SAMPLES_OPTION, mode_options, samples_of};

/// The outcome of a sample's call that is not the attempt's decision.
pub const SAMPLE_OUTCOME: &str = crate::store::SAMPLE_OUTCOME;

/// The request seed of sample `index` (0-based): the player's seed plus the index, so that a
/// server that honours seeds does not answer every sample alike; `None` stays `None`.
pub(crate) fn sample_seed(seed: Option<u64>, index: u32) -> Option<u64> {
    seed.map(|s| s.wrapping_add(u64::from(index)))
}

/// The result of a vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    /// The move played (UCI).
    pub winner: String,
    /// The sample whose reply is played: the earliest that voted for the winner (0-based).
    pub played: usize,
    /// Every legal move voted for, with its votes, most votes first, ties in the order of their
    /// first vote.
    pub counts: Vec<(String, u32)>,
    /// The samples (votes cast or not).
    pub samples: usize,
}

impl Tally {
    /// The tally in words: `e2e4 3, d2d4 2 of 5 samples`.
    pub fn summary(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        format!("{} of {} samples", counts.join(", "), self.samples)
    }
}

/// The vote over the samples' legal moves, in sample order (`None`: the sample decided no legal
/// move); `None` when no sample did. The most votes win; a tie goes to the move voted for first.
pub fn vote(moves: &[Option<String>]) -> Option<Tally> {
    // Move -> (votes, first sample that voted for it).
    let mut votes: BTreeMap<&str, (u32, usize)> = BTreeMap::new();
    for (i, m) in moves.iter().enumerate() {
        if let Some(m) = m {
            votes.entry(m).or_insert((0, i)).0 += 1;
        }
    }
    let mut counts: Vec<(&str, (u32, usize))> = votes.into_iter().collect();
    // Most votes first, then the earliest first vote: the winner is the first.
    counts.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    let (winner, (_, played)) = *counts.first()?;
    Some(Tally {
        winner: winner.to_string(),
        played,
        counts: counts
            .iter()
            .map(|(m, (n, _))| (m.to_string(), *n))
            .collect(),
        samples: moves.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(list: &[Option<&str>]) -> Vec<Option<String>> {
        list.iter().map(|m| m.map(str::to_string)).collect()
    }

    #[test]
    fn the_majority_move_wins_and_its_earliest_sample_is_played() {
        let t = vote(&moves(&[
            Some("d2d4"),
            Some("e2e4"),
            None,
            Some("e2e4"),
            Some("d2d4"),
            Some("e2e4"),
        ]))
        .unwrap();
        assert_eq!(t.winner, "e2e4");
        assert_eq!(t.played, 1);
        assert_eq!(
            t.counts,
            vec![("e2e4".to_string(), 3), ("d2d4".to_string(), 2)]
        );
        assert_eq!(t.summary(), "e2e4 3, d2d4 2 of 6 samples");
    }

    #[test]
    fn a_tie_goes_to_the_move_voted_for_first() {
        let t = vote(&moves(&[
            None,
            Some("g1f3"),
            Some("e2e4"),
            Some("e2e4"),
            Some("g1f3"),
        ]))
        .unwrap();
        assert_eq!((t.winner.as_str(), t.played), ("g1f3", 1));
        // Not alphabetical: e2e4 sorts first but was voted for later.
        let t = vote(&moves(&[
            Some("e2e4"),
            Some("a2a3"),
            Some("a2a3"),
            Some("e2e4"),
        ]))
        .unwrap();
        assert_eq!((t.winner.as_str(), t.played), ("e2e4", 0));
    }

    #[test]
    fn no_legal_move_is_no_vote() {
        assert_eq!(vote(&moves(&[None, None, None])), None);
        assert_eq!(vote(&[]), None);
        let t = vote(&moves(&[None, None, Some("h2h3")])).unwrap();
        assert_eq!((t.winner.as_str(), t.played), ("h2h3", 2));
    }

    #[test]
    fn samples_are_a_whole_number_in_range_and_hidden_from_the_mode() {
        let options = |v: serde_json::Value| {
            let mut m = serde_json::Map::new();
            m.insert("samples".into(), v);
            m.insert("history".into(), 3.into());
            m
        };
        assert_eq!(samples_of(&serde_json::Map::new()), Ok(1));
        assert_eq!(samples_of(&options(5.into())), Ok(5));
        for bad in [0.into(), 33.into(), 2.5.into(), "5".into()] {
            let e = samples_of(&options(bad)).unwrap_err();
            assert!(e.contains("from 1 to 32"), "{e}");
        }
        let given = options(5.into());
        let seen = mode_options(&given);
        assert!(!seen.contains_key("samples"));
        assert_eq!(seen.get("history"), Some(&3.into()));
    }

    #[test]
    fn each_sample_gets_its_own_seed() {
        assert_eq!(sample_seed(Some(7), 0), Some(7));
        assert_eq!(sample_seed(Some(7), 3), Some(10));
        assert_eq!(sample_seed(Some(u64::MAX), 1), Some(0));
        assert_eq!(sample_seed(None, 2), None);
    }
}
