//! The tables of `arena leaderboard`: Glicko-1 ratings (ChessArena's Table 1 layout), batch
//! Bradley–Terry ratings with bootstrap intervals (ordo's layout), standings, and on
//! request the protocol statistics and terminations of the paper's tables, plus the engine
//! analysis when games were analysed (by `arena analyze` or during `arena run`).

pub mod bradley_terry;
pub mod ladder;

pub mod llm_chess;
pub mod scales;

use std::collections::BTreeMap;

use crate::{
    analysis,
    board::{GameResult, Termination},
    rating::bradley_terry::Games,
    rating::glicko::{self, Compat, GlickoConfig},
    store::{
        GameRow, GameStatus, PlayerRow, StandingRow, Store, StoreError, TerminationCount,
        TournamentRow, VOID_RESULT,
    },
    table::{Cell, Table},
};

/// What to show.
#[derive(Debug, Clone)]
pub struct Options {
    /// Glicko variant: correct, or ChessArena's published (buggy) update.
    pub compat: Compat,
    /// Players with an RD above this are provisional: shown marked, or hidden without `show_all`.
    pub max_rd: f64,
    /// Show provisional players too, marked (the default: a small tournament's players are all
    /// provisional, and an empty table says nothing).
    pub show_all: bool,
    /// Add the attempt and termination statistics.
    pub stats: bool,
    /// Add one row per game: result, termination, length and each side's attempts.
    pub games: bool,
    /// Add the LLM Chess table (added anyway when a player plays the agentic mode or is a mixture
    /// of agents).
    pub llm_chess: bool,
    /// How to fit and resample the Bradley–Terry table.
    pub bradley_terry: bradley_terry::Options,
    /// The tournament's own format tables (a Swiss table, a knockout bracket), shown after the
    /// standings. The caller makes them: only it can run the format's scripts.
    pub format_tables: Vec<Table>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            compat: Compat::Correct,
            max_rd: 100.0,
            show_all: true,
            stats: false,
            games: false,
            llm_chess: false,
            bradley_terry: bradley_terry::Options::default(),
            format_tables: Vec::new(),
        }
    }
}

/// Every table of one tournament.
///
/// # Errors
/// When the store cannot be read.
pub fn tables(
    store: &Store,
    tournament: &TournamentRow,
    options: &Options,
) -> Result<Vec<Table>, StoreError> {
    // Nothing here holds the tournament's games: the ratings read them a row at a time in
    // schedule order, the terminations are summed by the database, and the void games are read
    // alone. A tournament of 100,000 games costs one pass over its rated rows.
    let players = store.players(tournament.id)?;
    let standings = store.standings(tournament.id)?;
    // The ratings see each schedule slot's current attempt, in slot order: the same games in the
    // same order as a tournament that no harness fault interrupted.
    let rated = bradley_terry::rated_in(store, tournament.id)?;
    // A tournament (or a player, an experiment's arm) that compared no chess says so first: its
    // ratings below measure no chess.
    let mut out: Vec<Table> =
        crate::tournament::degenerate::ChessCompared::read(store, tournament.id)?
            .table()
            .into_iter()
            .collect();
    out.push(ratings_of(&rated, &players, options));
    out.extend(bradley_terry::tables_of(&rated, &options.bradley_terry));
    out.push(standings_table(&standings));
    out.extend(options.format_tables.iter().cloned());
    let voids = store.void_games(tournament.id)?;
    if voids.iter().any(GameRow::is_void) {
        out.push(void_games_table(&voids));
    }
    if options.stats {
        out.push(attempts(&standings));
        out.push(terminations_of(
            &store.termination_counts(tournament.id)?,
            &players,
        ));
    }
    if options.games {
        // One row a game: this table is as long as the tournament, so it reads every game.
        let games = store.games(tournament.id)?;
        out.push(games_table(&games, &store.call_summaries(tournament.id)?));
    }
    if options.llm_chess || llm_chess::applies(&players) {
        out.push(llm_chess::table_for(store, tournament)?);
    }
    out.extend(scales::table_of(
        &rated,
        &players,
        crate::rating::calibration::Calibration::builtin(),
    ));
    if let Some(table) = analysis_table(store, tournament.id)? {
        out.push(table);
    }
    for t in &mut out {
        t.set_tournament(&tournament.name);
    }
    Ok(out)
}

/// The engine analysis table of a tournament (with each LLM player's legal-move rate), or `None`
/// when no game is analysed.
///
/// # Errors
/// When the store cannot be read.
pub fn analysis_table(store: &Store, tournament: i64) -> Result<Option<Table>, StoreError> {
    let analysed = store.analysis_summary(tournament)?;
    if !analysed.iter().any(|r| r.plies > 0) {
        return Ok(None);
    }
    let legal = legal_move_rates(&store.standings(tournament)?);
    let lichess = analysis::lichess::figures(store, tournament)?;
    Ok(Some(analysis::summary_table(&analysed, &legal, &lichess)))
}

/// ChessArena's legal-move rate per player that answers through LLM calls: accepted moves per
/// attempt (the complement of the parse-error, illegal-move and forbidden-reasoning rates).
pub fn legal_move_rates(rows: &[StandingRow]) -> BTreeMap<String, f64> {
    rows.iter()
        .filter_map(|r| Some((r.player.clone(), r.legal_move_rate()?)))
        .collect()
}

/// Glicko-1 ratings over the finished games in schedule order (game number), each game its own
/// rating period (ChessArena, appendix C): rank, player, mode, legal moves, rating, RD, 95 %
/// interval, games. Schedule order, not the order the games happened to finish in, so that the
/// same games give the same ratings at any concurrency and after any resume.
pub fn ratings(games: &[GameRow], players: &[PlayerRow], options: &Options) -> Table {
    ratings_of(&bradley_terry::rated(games), players, options)
}

/// [`ratings`] over rated games ([`bradley_terry::rated`], [`bradley_terry::rated_in`]).
pub(crate) fn ratings_of(games: &Games, players: &[PlayerRow], options: &Options) -> Table {
    let config = GlickoConfig {
        compat: options.compat,
        ..GlickoConfig::default()
    };
    let ratings = glicko(games, options.compat, false);
    let title = match options.compat {
        Compat::Correct => "ratings (Glicko-1)",
        Compat::ChessArena => "ratings (Glicko-1, ChessArena-compatible update)",
    };
    let mut table = Table::new(
        title,
        &[
            "#",
            "player",
            "mode",
            "legal moves",
            "rating",
            "RD",
            "95% interval",
            "games",
        ],
    )
    .of_kind("glicko");
    let identity: BTreeMap<&str, (String, String)> = players
        .iter()
        .map(|p| (p.name.as_str(), identity(p)))
        .collect();
    let mut rows: Vec<(String, (glicko::Rating, u32))> = players
        .iter()
        .map(|p| {
            let r = ratings
                .player(&p.name)
                .map(|r| (r.current(), r.games))
                .unwrap_or((config.initial(), 0));
            (p.name.clone(), r)
        })
        .collect();
    rows.sort_by(|a, b| b.1.0.rating.total_cmp(&a.1.0.rating));
    let mut hidden = 0;
    let mut shown_provisional = 0;
    let mut rank = 0;
    for (name, (r, games)) in rows {
        let provisional = r.rd > options.max_rd;
        if provisional && !options.show_all {
            hidden += 1;
            continue;
        }
        shown_provisional += usize::from(provisional);
        rank += 1;
        let (mode, legal) = identity.get(name.as_str()).cloned().unwrap_or_default();
        let (low, high) = glicko::interval95(&r);
        table.rows.push(vec![
            if provisional {
                Cell::Text(format!("{rank}*"))
            } else {
                Cell::Int(rank)
            },
            name.into(),
            mode.into(),
            legal.into(),
            Cell::Num(r.rating, 0),
            Cell::Num(r.rd, 0),
            Cell::Text(format!(
                "{} to {}",
                crate::table::fixed(low, 0),
                crate::table::fixed(high, 0)
            )),
            games.into(),
        ]);
    }
    if shown_provisional > 0 {
        table.notes.push(format!(
            "* provisional: RD above {:.0}, so the 95 % interval is wider than ± {:.0}: too few \
             games yet for a settled rating (every player starts at RD 350; ChessArena's \
             leaderboard leaves such players out; --hide-provisional does too)",
            options.max_rd,
            crate::rating::Z95 * options.max_rd
        ));
    }
    if hidden > 0 {
        table.notes.push(format!(
            "{hidden} provisional player(s) (RD above {:.0}) not shown (--hide-provisional)",
            options.max_rd
        ));
    }
    table
}

/// Glicko-1 over the finished games in schedule order (slot, then game number), each game its own rating period
/// (ChessArena, appendix C): what [`ratings`] shows, for callers that want the numbers (the HTML
/// report's plot).
pub fn rate(games: &[GameRow], compat: Compat) -> glicko::Ratings {
    // Schedule order, not finish order: the same games give the same ratings at any concurrency.
    // A replay takes its slot's place, so a game an engine crash made void and that was played
    // again rates where it was scheduled.
    rate_of(&bradley_terry::rated(games), compat)
}

/// [`rate`] over rated games, already in schedule order.
pub(crate) fn rate_of(games: &Games, compat: Compat) -> glicko::Ratings {
    glicko(games, compat, true)
}

/// Glicko-1 over `games` in their order, with each player's history or (for a table, which
/// shows only where each player ended) without.
fn glicko(games: &Games, compat: Compat, history: bool) -> glicko::Ratings {
    let config = GlickoConfig {
        compat,
        ..GlickoConfig::default()
    };
    let mut ratings = glicko::Ratings::new(config).expect("the default Glicko settings are valid");
    for (white, black, score_white) in games.iter() {
        let game = glicko::GameResult {
            white: white.to_owned(),
            black: black.to_owned(),
            score_white,
        };
        let recorded = if history {
            ratings.record(&game).map(|_| ())
        } else {
            ratings.record_current(&game)
        };
        if let Err(e) = recorded {
            tracing::warn!("a game of {white} against {black} left out of the ratings: {e}");
        }
    }
    ratings
}

/// A player's mode and whether it saw the legal moves, from its stored settings.
fn identity(p: &PlayerRow) -> (String, String) {
    let settings: serde_json::Value = serde_json::from_str(&p.settings_json).unwrap_or_default();
    match p.kind.as_str() {
        "llm" => {
            let mode = settings["mode"].as_str().unwrap_or("?").to_string();
            let legal = match settings["mode_options"]["legal_moves"].as_bool() {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            };
            (mode, legal.to_string())
        }
        other => (other.to_string(), "-".to_string()),
    }
}

/// Results and the protocol failures that are the model's own: player, games, W/D/L, score %,
/// forfeits, parse errors, illegal moves, LLM calls, tokens. A `void` column (games that ended
/// without a result and count for nobody) appears when a player has one, and an `at limit W-D-L`
/// column (the adjudication engine's verdicts on games that reached the move limit, apart from
/// their official draws) when a game has a verdict; tokens say `unknown` for a player with a
/// call whose reply reported no usage. When a model answered in the tournament, `cut off %`
/// (replies cut at the token limit without a move, per attempt) and `completion tokens/move`
/// (completion tokens over accepted moves: what the model's writing costs per move) follow.
pub fn standings_table(rows: &[StandingRow]) -> Table {
    let any_void = rows.iter().any(|r| r.voids > 0);
    let any_limit = rows.iter().any(|r| r.at_limit.games() > 0);
    let mut columns = vec!["#", "player", "games", "W", "D", "L"];
    if any_void {
        columns.push("void");
    }
    columns.push("score %");
    if any_limit {
        columns.push("at limit W-D-L");
    }
    columns.extend([
        "forfeits",
        "parse errors",
        "illegal moves",
        "LLM calls",
        "tokens",
    ]);
    // Only where a model answered: a table of engines alone stays as it was.
    let any_calls = rows.iter().any(|r| r.llm_calls > 0);
    if any_calls {
        columns.extend(["cut off %", "completion tokens/move"]);
    }
    let mut table = Table::new("standings", &columns).of_kind("standings");
    for (i, r) in rows.iter().enumerate() {
        let mut row: Vec<Cell> = vec![
            (i + 1).into(),
            r.player.clone().into(),
            r.games.into(),
            r.wins.into(),
            r.draws.into(),
            r.losses.into(),
        ];
        if any_void {
            row.push(r.voids.into());
        }
        row.push(Cell::Num(r.score_percent(), 1));
        if any_limit {
            let l = r.at_limit;
            row.push(if l.games() == 0 {
                Cell::Empty
            } else {
                format!("{}-{}-{}", l.wins, l.draws, l.losses).into()
            });
        }
        row.extend([
            r.forfeits.into(),
            r.parse_errors.into(),
            r.illegal_moves.into(),
            r.llm_calls.into(),
            if r.calls_without_usage > 0 {
                Cell::Text(llm_chess::UNKNOWN.into())
            } else {
                (r.prompt_tokens + r.completion_tokens).into()
            },
        ]);
        if any_calls {
            let num = |v: Option<f64>, places| v.map_or(Cell::Empty, |v| Cell::Num(v, places));
            row.push(num(r.cut_off_percent(), 1));
            row.push(if r.llm_calls > 0 && r.calls_without_usage > 0 {
                Cell::Text(llm_chess::UNKNOWN.into())
            } else {
                num(r.completion_tokens_per_move(), 1)
            });
        }
        table.rows.push(row);
    }
    if rows.iter().any(|r| r.cut_offs > 0) {
        table.notes.push(
            "cut off %: replies that ended on the token limit (`max_tokens`) before a move could \
             be read, per attempt; they are not in parse errors here, while ChessArena's parsing \
             error % (attempts table) and LLM Chess's wrong actions count them, as their sources \
             do not tell a cut reply apart"
                .into(),
        );
    }
    if any_void {
        table.notes.push(
            "void: games that ended without a result (see the terminations); they count for \
             nobody, in no rating and in none of games, W, D, L or score"
                .into(),
        );
    }
    if any_limit {
        table.notes.push(
            "at limit W-D-L: the games that reached the move limit, as the adjudication \
             engine's evaluation of the final position judges them (adjudication.move_limit); \
             their official result stays a draw, in games, W, D, L, score and every rating"
                .into(),
        );
    }
    // Self-consistency: say what the failure counts are over, since calls are not attempts.
    for r in rows.iter().filter(|r| r.unplayed_samples > 0) {
        table.notes.push(format!(
            "{} votes over samples: its parse errors and illegal moves count one decision per \
             attempt (the vote's), while LLM calls and tokens count every call, {} of its {} \
             calls being samples that did not decide their attempt",
            r.player, r.unplayed_samples, r.llm_calls
        ));
    }
    let without_usage: Vec<String> = rows
        .iter()
        .filter(|r| r.calls_without_usage > 0)
        .map(|r| {
            format!(
                "{} ({} of {} calls)",
                r.player, r.calls_without_usage, r.llm_calls
            )
        })
        .collect();
    if !without_usage.is_empty() {
        table.notes.push(format!(
            "tokens unknown: replies without token usage from {}",
            without_usage.join(", ")
        ));
    }
    table
}

/// Every void game (finished without a result, in no rating or score): its number, players,
/// termination, plies, what becomes of its slot, and the error that ended it. A game a harness
/// fault made void (an engine crashed or hung) names the game that plays it again, or says the
/// next run will; one void by the model's own limits (`context_exceeded`, `request_rejected`) is
/// not replayed, since it would end the same way.
pub(crate) fn void_games_table(games: &[GameRow]) -> Table {
    let mut table = Table::new(
        "void games",
        &[
            "game",
            "white",
            "black",
            "termination",
            "plies",
            "replayed by",
            "error",
        ],
    )
    .of_kind("void_games");
    for g in games.iter().filter(|g| g.is_void()) {
        let replay = games.iter().find(|r| r.replay_of == Some(g.id));
        let replayed = match replay {
            Some(r) => format!("game {}", r.index),
            None if g.is_harness_void() => "the next run".into(),
            None => "-".into(),
        };
        table.rows.push(vec![
            Cell::Int(i64::from(g.index)),
            g.white.clone().into(),
            g.black.clone().into(),
            g.termination.clone().unwrap_or_default().into(),
            g.ply_count.into(),
            replayed.into(),
            g.reason.clone().unwrap_or_default().into(),
        ]);
    }
    table.notes.push(
        "void games count for nobody: no rating, score or W/D/L; a harness fault's slot is played again from its opening, reusing the stored replies wherever the game takes the same path".into(),
    );
    table
}

/// The attempt statistics of ChessArena's tables, for players that answer through LLM calls.
/// Its parsing errors include the replies cut off at the token limit, as ChessArena counts them.
pub fn attempts(rows: &[StandingRow]) -> Table {
    let mut table = Table::new(
        "attempts",
        &[
            "player",
            "attempts",
            "parsing error %",
            "illegal move %",
            "forbidden reasoning %",
            "legal move %",
        ],
    )
    .of_kind("attempts");
    for r in rows.iter().filter(|r| r.llm_calls > 0) {
        let pct = |n: u64| Cell::Num(100.0 * n as f64 / r.llm_calls as f64, 1);
        table.rows.push(vec![
            r.player.clone().into(),
            r.llm_calls.into(),
            pct(r.chessarena_parse_errors()),
            pct(r.illegal_moves),
            pct(r.forbidden_reasoning),
            pct(r.accepted_moves),
        ]);
    }
    table
}

/// Wins, losses, draws and void games by termination, and the average game length, per player.
pub fn terminations(games: &[GameRow], players: &[PlayerRow]) -> Table {
    let counts: Vec<TerminationCount> = games
        .iter()
        .filter(|g| g.status == GameStatus::Finished)
        .map(|g| TerminationCount {
            white: g.white.clone(),
            black: g.black.clone(),
            result: g.result.clone(),
            termination: g.termination.clone(),
            games: 1,
            plies: u64::from(g.ply_count),
        })
        .collect();
    terminations_of(&counts, players)
}

/// [`terminations`] from the finished games counted by the store
/// ([`Store::termination_counts`]).
pub(crate) fn terminations_of(finished: &[TerminationCount], players: &[PlayerRow]) -> Table {
    let kinds = Termination::ALL;
    // Per termination: won, lost, drawn, void (a game that ended without a result).
    const OUTCOMES: usize = 4;
    let mut columns: Vec<String> = vec!["player".into(), "games".into(), "avg plies".into()];
    for kind in kinds {
        let name = kind.as_str().replace('_', " ");
        columns.push(format!("won by {name}"));
        columns.push(format!("lost by {name}"));
        columns.push(format!("drawn by {name}"));
        columns.push(format!("void by {name}"));
    }
    #[derive(Default)]
    struct Counts {
        games: u64,
        plies: u64,
        by_kind: BTreeMap<(usize, usize), u64>,
    }
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    for g in finished {
        let result = g
            .result
            .as_deref()
            .and_then(|r| r.parse::<GameResult>().ok());
        let Some(termination) = g
            .termination
            .as_deref()
            .and_then(|t| t.parse::<Termination>().ok())
        else {
            continue;
        };
        let void = g.result.as_deref() == Some(VOID_RESULT);
        if result.is_none() && !void {
            continue;
        }
        let kind = kinds.iter().position(|k| *k == termination).unwrap_or(0);
        for (name, color) in [
            (g.white.as_str(), shakmaty::Color::White),
            (g.black.as_str(), shakmaty::Color::Black),
        ] {
            let c = counts.entry(name).or_default();
            c.games += g.games;
            c.plies += g.plies;
            let outcome = match result.map(|r| r.score_for(color)) {
                None => 3,
                Some(s) if s > 0.75 => 0,
                Some(s) if s < 0.25 => 1,
                Some(_) => 2,
            };
            *c.by_kind.entry((kind, outcome)).or_default() += g.games;
        }
    }
    // Drop the columns no game used, so the table stays readable.
    let used: Vec<bool> = (0..kinds.len() * OUTCOMES)
        .map(|i| {
            counts
                .values()
                .any(|c| c.by_kind.contains_key(&(i / OUTCOMES, i % OUTCOMES)))
        })
        .collect();
    let mut table = Table {
        title: "terminations".into(),
        kind: "terminations".into(),
        tournament: None,
        columns: columns
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < 3 || used[i - 3])
            .map(|(_, c)| c.clone())
            .collect(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for p in players {
        let Some(c) = counts.get(p.name.as_str()) else {
            continue;
        };
        let mut row: Vec<Cell> = vec![
            p.name.clone().into(),
            c.games.into(),
            Cell::Num(c.plies as f64 / c.games.max(1) as f64, 1),
        ];
        for (i, used) in used.iter().enumerate() {
            if *used {
                row.push(
                    c.by_kind
                        .get(&(i / OUTCOMES, i % OUTCOMES))
                        .copied()
                        .unwrap_or(0)
                        .into(),
                );
            }
        }
        table.rows.push(row);
    }
    table
}

/// One row per finished game: who played, the result and how it ended, its length, and each
/// side's LLM attempts and failed attempts (answers that gave no playable move).
pub(crate) fn games_table(games: &[GameRow], calls: &[crate::store::CallSummary]) -> Table {
    let any_limit = games.iter().any(|g| g.at_limit.is_some());
    let mut columns = vec!["game", "round", "white", "black", "result", "termination"];
    if any_limit {
        columns.push("at limit");
    }
    columns.extend([
        "plies",
        "white attempts",
        "white failed",
        "black attempts",
        "black failed",
    ]);
    let mut table = Table::new("games", &columns).of_kind("games");
    // (attempts, failed) by game and player.
    let mut counts: BTreeMap<(i64, &str), (u64, u64)> = BTreeMap::new();
    for c in calls {
        let entry = counts.entry((c.game_id, c.player.as_str())).or_default();
        entry.0 += 1;
        // Answers to an agentic action (`say`) and proposals of a mixture are neither; a vote's
        // unplayed samples are not attempts (the vote is one).
        match c.outcome.as_deref() {
            Some("move") | Some("proposal") | None => {}
            Some(crate::store::SAMPLE_OUTCOME) => entry.0 -= 1,
            Some(o) if o.starts_with("get_") || o == "do_reflection" || o == "reflection_notes" => {
                entry.0 -= 1;
            }
            Some(_) => entry.1 += 1,
        }
    }
    for g in games.iter().filter(|g| g.status == GameStatus::Finished) {
        let side = |name: &str| {
            counts
                .get(&(g.id, name))
                .map_or((Cell::Empty, Cell::Empty), |(a, f)| {
                    ((*a).into(), (*f).into())
                })
        };
        let (white_attempts, white_failed) = side(&g.white);
        let (black_attempts, black_failed) = side(&g.black);
        let mut row: Vec<Cell> = vec![
            g.index.into(),
            g.round.into(),
            g.white.clone().into(),
            g.black.clone().into(),
            if g.is_void() {
                "void".into()
            } else {
                g.result.clone().unwrap_or_default().into()
            },
            g.termination
                .clone()
                .unwrap_or_default()
                .replace('_', " ")
                .into(),
        ];
        if any_limit {
            row.push(g.at_limit.clone().map_or(Cell::Empty, Cell::Text));
        }
        row.extend([
            g.ply_count.into(),
            white_attempts,
            white_failed,
            black_attempts,
            black_failed,
        ]);
        table.rows.push(row);
    }
    if any_limit {
        table.notes.push(
            "at limit: the adjudication engine's verdict on a game that reached the move limit \
             (adjudication.move_limit); the official result is unchanged"
                .into(),
        );
    }
    table
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) use crate::store::testing::finished_game as row;

    fn player(name: &str) -> PlayerRow {
        PlayerRow {
            id: 0,
            tournament: 1,
            name: name.into(),
            kind: "random".into(),
            settings_json: "{}".into(),
        }
    }

    /// The standings line of a player with two calls, one of them without token usage.
    fn standing_with_a_call_without_usage(name: &str) -> StandingRow {
        StandingRow {
            player: name.into(),
            games: 1,
            voids: 0,
            wins: 1,
            draws: 0,
            losses: 0,
            score: 1.0,
            forfeits: 0,
            parse_errors: 0,
            cut_offs: 0,
            illegal_moves: 0,
            forbidden_reasoning: 0,
            accepted_moves: 2,
            llm_calls: 2,
            unplayed_samples: 0,
            prompt_tokens: 10,
            completion_tokens: 2,
            calls_without_usage: 1,
            at_limit: crate::store::AtLimit::default(),
        }
    }

    #[test]
    fn the_standings_table_names_replies_without_token_usage() {
        let table = standings_table(&[standing_with_a_call_without_usage("m")]).to_text();
        assert!(table.contains("unknown"), "{table}");
        assert!(
            table.contains("tokens unknown: replies without token usage from m (1 of 2 calls)"),
            "{table}"
        );
    }

    #[test]
    fn a_void_game_is_in_no_rating_and_listed_as_context_exceeded() {
        let mut void = row(1, "m", "r", crate::store::VOID_RESULT);
        void.termination = Some("context_exceeded".into());
        void.reason = Some("the prompt exceeds the available context size".into());
        let games = [void];
        let ratings = ratings(
            &games,
            &[player("m"), player("r")],
            &Options {
                show_all: true,
                ..Default::default()
            },
        );
        assert!(
            ratings.rows.iter().all(|r| r.last() == Some(&Cell::Int(0))),
            "a void game is in no rating: {:?}",
            ratings.rows
        );
        let listing = games_table(&games, &[]).to_text();
        assert!(
            listing.contains("void") && listing.contains("context exceeded"),
            "{listing}"
        );
    }

    #[test]
    fn glicko_rates_in_schedule_order_not_finishing_order() {
        // b loses four then wins two: Glicko-1 moves the early games most, so the order matters.
        let results = ["0-1", "0-1", "0-1", "0-1", "1-0", "1-0"];
        let scheduled: Vec<GameRow> = (1..=6)
            .map(|i| row(i, "b", "x", results[i as usize - 1]))
            .collect();
        // The same games, the last scheduled finishing first (as at high concurrency).
        let mut finished_late_first = scheduled.clone();
        for g in &mut finished_late_first {
            g.finished_at = Some(format!("2025-01-01T00:00:{:02}.000Z", 10 - g.index));
        }
        let players = [player("b"), player("x")];
        let options = Options {
            show_all: true,
            ..Options::default()
        };
        let by_schedule = ratings(&scheduled, &players, &options);
        assert_eq!(
            ratings(&finished_late_first, &players, &options),
            by_schedule
        );
        // And the order did matter: the reversed schedule rates differently.
        let mut reversed = scheduled.clone();
        reversed.reverse();
        for (i, g) in reversed.iter_mut().enumerate() {
            g.index = i as u32 + 1;
            g.slot = g.index;
        }
        assert_ne!(
            ratings(&reversed, &players, &options).rows,
            by_schedule.rows
        );
    }

    #[test]
    fn a_replay_rates_in_its_slot_and_its_void_attempt_nowhere() {
        let results = ["0-1", "0-1", "0-1", "0-1", "1-0", "1-0"];
        let scheduled: Vec<GameRow> = (1..=6)
            .map(|i| row(i, "b", "x", results[i as usize - 1]))
            .collect();
        // Game 2 was void (an engine crashed) and game 7 played its slot again.
        let mut replayed = scheduled.clone();
        replayed[1].result = Some(crate::store::VOID_RESULT.into());
        replayed[1].termination = Some("engine_failure".into());
        let mut replay = scheduled[1].clone();
        replay.id = 7;
        replay.index = 7;
        replay.replay_of = Some(2);
        replayed.push(replay);
        let players = [player("b"), player("x")];
        let options = Options {
            show_all: true,
            ..Options::default()
        };
        assert_eq!(
            ratings(&replayed, &players, &options),
            ratings(&scheduled, &players, &options)
        );
        let listed = void_games_table(&replayed);
        assert_eq!(listed.rows.len(), 1);
        assert_eq!(listed.rows[0][0], Cell::Int(2));
        assert_eq!(listed.rows[0][5], Cell::Text("game 7".into()));
        // Without its replay yet, the next run plays it again.
        let listed = void_games_table(&replayed[..6]);
        assert_eq!(listed.rows[0][5], Cell::Text("the next run".into()));
    }

    #[test]
    fn provisional_players_are_shown_marked_and_the_mark_explained() {
        let games: Vec<GameRow> = (1..=6)
            .map(|i| row(i, "b", "x", if i % 2 == 0 { "1-0" } else { "1/2-1/2" }))
            .collect();
        let players = [player("b"), player("x")];
        // Six games leave both RDs far above 100: shown by default, marked, explained.
        let table = ratings(&games, &players, &Options::default());
        assert_eq!(table.rows.len(), 2);
        assert_eq!(table.rows[0][0], Cell::Text("1*".into()));
        assert_eq!(table.notes.len(), 1, "{:?}", table.notes);
        assert!(
            table.notes[0].starts_with(
                "* provisional: RD above 100, so the 95 % interval is wider than ± 196"
            ),
            "{:?}",
            table.notes
        );
        // Hidden on request, and said so.
        let hidden = ratings(
            &games,
            &players,
            &Options {
                show_all: false,
                ..Options::default()
            },
        );
        assert!(hidden.rows.is_empty());
        assert_eq!(
            hidden.notes,
            ["2 provisional player(s) (RD above 100) not shown (--hide-provisional)"]
        );
        // No provisional player, no footnote.
        let settled = ratings(
            &games,
            &players,
            &Options {
                max_rd: 350.0,
                ..Options::default()
            },
        );
        assert_eq!(settled.rows[0][0], Cell::Int(1));
        assert!(settled.notes.is_empty(), "{:?}", settled.notes);
    }
}
