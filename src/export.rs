//! Exports of stored tournaments.

use crate::{
    board::{GameResult, PgnGame, Termination, write_pgn},
    store::{GameStatus, Store, StoreError, TournamentRow},
};

/// Every game of `tournaments` as PGN, one after the other. Unfinished games are written with the
/// result `*`, so that what was played so far is not hidden.
///
/// # Errors
/// When the store cannot be read.
pub fn pgn(store: &Store, tournaments: &[TournamentRow]) -> Result<String, StoreError> {
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
            let mut extra_tags = vec![("ArenaGame".to_string(), game.index.to_string())];
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
                comment: game.reason.clone(),
            };
            out.push_str(&write_pgn(&record));
            out.push('\n');
        }
    }
    Ok(out)
}
