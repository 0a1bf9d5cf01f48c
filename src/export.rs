//! Exports of stored tournaments.

mod annotate;

use crate::{
    board::{GameResult, PgnGame, Termination, write_pgn},
    store::{GameStatus, Store, StoreError, TournamentRow},
};

pub use annotate::{emt, white_eval};

/// What a PGN export writes beyond the moves and tags of [`pgn`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgnOptions {
    /// Annotate every move from the store: `[%eval]` from the engine analysis, NAGs from its move
    /// classes, `[%emt]` from the ply's time, the protocol failures of the ply in words, and the
    /// `ECO`, `Opening`, `TimeControl` and `Annotator` tags.
    pub annotate: bool,
    /// With `annotate`, add every reply of the model (and its separate reasoning text, if the
    /// provider returned one) to the move's comment.
    pub reasoning: bool,
}

/// Every game of `tournaments` as PGN, one after the other. Unfinished games are written with the
/// result `*`, so that what was played so far is not hidden.
///
/// # Errors
/// When the store cannot be read.
pub fn pgn(store: &Store, tournaments: &[TournamentRow]) -> Result<String, StoreError> {
    pgn_with(store, tournaments, PgnOptions::default())
}

/// [`pgn`] with options; `PgnOptions::default()` writes exactly what [`pgn`] writes.
///
/// # Errors
/// When the store cannot be read.
pub fn pgn_with(
    store: &Store,
    tournaments: &[TournamentRow],
    options: PgnOptions,
) -> Result<String, StoreError> {
    let mut out = String::new();
    for t in tournaments {
        let date = t
            .created_at
            .get(..10)
            .unwrap_or("????-??-??")
            .replace('-', ".");
        for game in store.games(t.id)? {
            let plies = store.plies(game.id)?;
            let finished = game.status == GameStatus::Finished;
            let result = finished
                .then(|| {
                    game.result
                        .as_deref()
                        .and_then(|r| r.parse::<GameResult>().ok())
                })
                .flatten();
            let termination = finished
                .then(|| {
                    game.termination
                        .as_deref()
                        .and_then(|r| r.parse::<Termination>().ok())
                })
                .flatten();
            let mut extra_tags = Vec::new();
            let mut annotations = None;
            let mut comment = game.reason.clone();
            if options.annotate {
                let notes = annotate::game(store, &game, &plies, options.reasoning)?;
                extra_tags = notes.tags;
                annotations = Some(notes.moves);
                comment = match (comment, notes.unplayed) {
                    (Some(reason), Some(failures)) => Some(format!("{reason} | {failures}")),
                    (reason, failures) => reason.or(failures),
                };
            }
            extra_tags.push(("ArenaGame".to_string(), game.index.to_string()));
            if let Some(hash) = &game.script_hash {
                extra_tags.push(("ArenaScripts".into(), hash.clone()));
            }
            if let Some(label) = &game.opening_label {
                extra_tags.push(("ArenaOpening".into(), label.clone()));
            }
            let record = PgnGame {
                event: t.name.clone(),
                site: "arena".into(),
                date: date.clone(),
                round: game.round.to_string(),
                white: game.white.clone(),
                black: game.black.clone(),
                result,
                termination,
                start_fen: game.start_fen.clone(),
                san_moves: plies.iter().map(|p| p.san.clone()).collect(),
                extra_tags,
                comment,
                annotations,
            };
            out.push_str(&write_pgn(&record));
            out.push('\n');
        }
    }
    Ok(out)
}
