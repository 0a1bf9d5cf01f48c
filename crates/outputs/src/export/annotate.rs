//! The annotations of `arena export pgn --annotate`: what the store knows about each move, in the
//! notation chess tools read (lichess's and ChessBase's `[%eval]` and `[%emt]` commands, the
//! standard NAGs, from lichess's judgements), plus the protocol failures of each ply in words.

use std::collections::HashMap;

use shakmaty::{Chess, Color};

use crate::{
    board::{
        EcoTable, Game, MoveAnnotation,
        clock::{Clock, GameClocks},
    },
    engine::Score,
    store::{CallOutcome, GameRow, PROTOCOL_FAILURE_OUTCOMES, PlyRecord, Store, StoreError},
};

/// What the annotated export adds to one game.
pub(super) struct GameNotes {
    /// `ECO`, `Opening`, `TimeControl` (or a side's own, see [`GameClocks::pgn_tags`]) and
    /// `Annotator`, in that order (the known ones).
    pub tags: Vec<(String, String)>,
    /// One annotation per stored ply.
    pub moves: Vec<MoveAnnotation>,
    /// The failures at the ply the game ended on without a move (a forfeit), in words.
    pub unplayed: Option<String>,
}

/// The value of a `[%eval]` command for the position after a move by `mover`, from White's point
/// of view as PGN tools expect: pawns with two decimals (`0.31`, `-1.05`), or `#N` / `#-N` for a
/// mate in N moves for White / for Black. The stored score is the side to move's (the mover's
/// opponent). A checkmated position is `#0`, which python-chess and lichess read as "the side to
/// move is mated", whoever that is.
pub fn white_eval(eval_after: Score, mover: Color) -> String {
    // The side to move after the move is the mover's opponent.
    let sign = if mover == Color::Black { 1 } else { -1 };
    match eval_after {
        Score::Mate(0) => "#0".to_owned(),
        Score::Mate(n) => format!("#{}", sign * n),
        Score::Cp(cp) => {
            let cp = i64::from(sign) * i64::from(cp);
            let minus = if cp < 0 { "-" } else { "" };
            format!("{minus}{}.{:02}", cp.abs() / 100, cp.abs() % 100)
        }
    }
}

/// The value of an `[%emt]` command (elapsed move time): `H:MM:SS` with the milliseconds as a
/// decimal fraction when there are any (`0:00:01.25`), as python-chess writes it.
pub fn emt(ms: u64) -> String {
    let (hours, minutes, seconds, millis) =
        (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let mut text = format!("{hours}:{minutes:02}:{seconds:02}");
    if millis > 0 {
        let fraction = format!("{millis:03}");
        text.push('.');
        text.push_str(fraction.trim_end_matches('0'));
    }
    text
}

/// The clock commands of each stored ply under the game's `clocks`: for a move of a side on a
/// clock, `[%clk]` (its base clock after the move, increment added, as lichess writes it) when it
/// has a base clock, and `[%emt]` (the time charged for the move); nothing for book moves and
/// untimed sides. The clocks are replayed from the stored charges, as a resumed game does.
pub(super) fn clock_commands(clocks: &GameClocks, plies: &[PlyRecord]) -> Vec<Vec<String>> {
    let mut running = [clocks.white.map(Clock::new), clocks.black.map(Clock::new)];
    plies
        .iter()
        .map(|p| {
            let side = usize::from(mover(p) == Color::Black);
            let Some(clock) = running[side].as_mut().filter(|_| p.player != "book") else {
                return Vec::new();
            };
            let used = p.clock_ms.unwrap_or(p.elapsed_ms);
            // A stored move was made in time; a store of an older arena has no charge.
            let _ = clock.charge(used);
            let mut commands = Vec::new();
            if let Some(left) = clock.left_ms() {
                commands.push(format!("[%clk {}]", emt(left)));
            }
            commands.push(format!("[%emt {}]", emt(used)));
            commands
        })
        .collect()
}

fn mover(ply: &PlyRecord) -> Color {
    if ply.fen_before.split_whitespace().nth(1) == Some("b") {
        Color::Black
    } else {
        Color::White
    }
}

/// The protocol failures among one ply's calls, in words, by outcome in order of first
/// occurrence, with the moves the play mode read where it said: `2 illegal: e1g1, e1c1; 1 no
/// move found`.
fn failures(calls: &[&CallOutcome]) -> Option<String> {
    let mut counts: Vec<(&str, usize, Vec<&str>)> = Vec::new();
    for call in calls {
        let Some(outcome) = call.outcome.as_deref() else {
            continue;
        };
        if !PROTOCOL_FAILURE_OUTCOMES.contains(&outcome) {
            continue;
        }
        let candidate = call.candidate.as_deref();
        match counts.iter_mut().find(|(o, _, _)| *o == outcome) {
            Some((_, n, moves)) => {
                *n += 1;
                moves.extend(candidate);
            }
            None => counts.push((outcome, 1, candidate.into_iter().collect())),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(outcome, n, moves)| {
            let mut part = format!("{n} {}", outcome.replace('_', " "));
            if !moves.is_empty() {
                part.push_str(": ");
                part.push_str(&moves.join(", "));
            }
            part
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Every reply of one ply's calls, numbered by call and labelled with its outcome, with the
/// provider's separate reasoning text before it.
fn replies(calls: &[&CallOutcome]) -> Option<String> {
    let mut parts = Vec::new();
    for call in calls {
        let n = call.seq + 1;
        if let Some(reasoning) = call.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
            parts.push(format!("reasoning {n}: {reasoning}"));
        }
        if let Some(reply) = &call.reply_text {
            let outcome = call.outcome.as_deref().unwrap_or("unused");
            parts.push(format!("reply {n} ({outcome}): {reply}"));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}

/// The annotations of one stored game.
pub(super) fn game(
    store: &Store,
    game: &GameRow,
    plies: &[PlyRecord],
    clocks: Option<&GameClocks>,
    reasoning: bool,
) -> Result<GameNotes, StoreError> {
    let analyses = store.ply_analyses(game.id)?;
    let calls = store.call_outcomes(game.id)?;
    let mut by_ply: HashMap<u32, Vec<&CallOutcome>> = HashMap::new();
    for call in &calls {
        by_ply.entry(call.ply).or_default().push(call);
    }
    let words = |ply: u32| {
        let calls = by_ply.get(&ply).map_or(&[][..], Vec::as_slice);
        let mut text = failures(calls);
        if reasoning && let Some(replies) = replies(calls) {
            text = Some(match text {
                Some(failures) => format!("{failures} | {replies}"),
                None => replies,
            });
        }
        text
    };

    let mut moves: Vec<MoveAnnotation> = plies
        .iter()
        .map(|p| MoveAnnotation {
            text: words(p.ply),
            ..MoveAnnotation::default()
        })
        .collect();
    let timed = clocks.map(|c| clock_commands(c, plies)).unwrap_or_default();
    for (i, (p, note)) in plies.iter().zip(&mut moves).enumerate() {
        // The time first, after the eval, as lichess orders its commands; a side on a clock
        // shows the clock's times, any other its wall time.
        match timed.get(i).filter(|c| !c.is_empty()) {
            Some(commands) => note.commands.extend(commands.iter().cloned()),
            None if p.player != "book" => {
                note.commands.push(format!("[%emt {}]", emt(p.elapsed_ms)));
            }
            None => {}
        }
    }
    for a in &analyses {
        let (Some(p), Some(note)) = (plies.get(a.ply as usize), moves.get_mut(a.ply as usize))
        else {
            continue;
        };
        note.commands
            .insert(0, format!("[%eval {}]", white_eval(a.eval_after, mover(p))));
        // Lichess's judgement, as the tools that show `?!`, `?` and `??` expect.
        note.nag = crate::analysis::lichess::judgement(p, a).map(|j| j.nag());
    }

    let mut tags = Vec::new();
    if let Some(opening) = EcoTable::lichess().classify(&positions(game, plies)) {
        tags.push(("ECO".to_owned(), opening.eco.clone()));
        tags.push(("Opening".to_owned(), opening.name.clone()));
    }
    match clocks {
        Some(clocks) => tags.extend(clocks.pgn_tags()),
        // No clock: the game was played without one (time is shown per move by `[%emt]`).
        None => tags.push(("TimeControl".to_owned(), "-".to_owned())),
    }
    if let Some(a) = analyses.first() {
        tags.push((
            "Annotator".to_owned(),
            format!("arena analysis: {} ({})", a.engine_id, a.limits_key),
        ));
    }
    Ok(GameNotes {
        tags,
        moves,
        unplayed: words(plies.len() as u32),
    })
}

/// The positions of a game from its start, as far as its stored moves replay.
fn positions(game: &GameRow, plies: &[PlyRecord]) -> Vec<Chess> {
    let Ok(mut board) = Game::new_in(game.variant, game.start_fen.as_deref(), 0) else {
        return Vec::new();
    };
    let mut all = vec![board.position().clone()];
    for p in plies {
        if board.play_uci(&p.uci).is_err() {
            break;
        }
        all.push(board.position().clone());
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluations_are_from_whites_point_of_view() {
        // After White's move Black is to move: the stored score is Black's.
        assert_eq!(white_eval(Score::Cp(-31), Color::White), "0.31");
        assert_eq!(white_eval(Score::Cp(31), Color::White), "-0.31");
        assert_eq!(white_eval(Score::Cp(-105), Color::Black), "-1.05");
        assert_eq!(white_eval(Score::Cp(0), Color::Black), "0.00");
        assert_eq!(white_eval(Score::Cp(7), Color::Black), "0.07");
        assert_eq!(white_eval(Score::Cp(-1234), Color::White), "12.34");
        // Black to move and being mated in 2: White mates.
        assert_eq!(white_eval(Score::Mate(-2), Color::White), "#2");
        assert_eq!(white_eval(Score::Mate(3), Color::White), "#-3");
        assert_eq!(white_eval(Score::Mate(3), Color::Black), "#3");
        assert_eq!(white_eval(Score::Mate(0), Color::Black), "#0");
    }

    #[test]
    fn move_times_are_hours_minutes_seconds() {
        assert_eq!(emt(0), "0:00:00");
        assert_eq!(emt(1250), "0:00:01.25");
        assert_eq!(emt(5), "0:00:00.005");
        assert_eq!(emt(61_000), "0:01:01");
        assert_eq!(emt(3_723_400), "1:02:03.4");
    }

    #[test]
    fn failures_are_counted_by_outcome_in_order() {
        let call = |seq, outcome: &str, candidate: Option<&str>| CallOutcome {
            ply: 4,
            seq,
            outcome: Some(outcome.to_owned()),
            outcome_detail: None,
            candidate: candidate.map(str::to_owned),
            reply_text: Some(format!("text {seq}")),
            reasoning: None,
        };
        let calls = [
            call(0, "illegal", Some("e1g1")),
            call(1, "no_move_found", None),
            call(2, "illegal", Some("e1c1")),
            call(3, "move", None),
        ];
        let refs: Vec<&CallOutcome> = calls.iter().collect();
        assert_eq!(
            failures(&refs).as_deref(),
            Some("2 illegal: e1g1, e1c1; 1 no move found")
        );
        assert_eq!(failures(&refs[3..]), None);
        assert_eq!(
            replies(&refs[2..]).as_deref(),
            Some("reply 3 (illegal): text 2 | reply 4 (move): text 3")
        );
    }
}
