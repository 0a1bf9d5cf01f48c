//! Results that compared no chess: a model player, an experiment's arm or a whole tournament
//! whose games mostly ended before its model had a move played (every reply cut at the token
//! limit, unreadable, illegal, or refused by the provider). Such a result has no Elo worth
//! reading: the verdict names it, with the counts of what went wrong and the likely fixes.
//!
//! The rule, named *no chess compared*: a finished game with a result (void games count for
//! nobody) is a **no-move game** of a model player (an LLM or a mixture of agents) when none of
//! that player's replies in it became a played move (no call with the outcome `move`), whatever
//! ended the game: its own forfeit, a refusal, the opponent's forfeit before it was asked. A
//! player compared no chess when **more than half** of its games are no-move games. A
//! tournament compared no chess when more than half of its games are a no-move game of at least
//! one of their model players. An experiment's arm compared no chess when its player or the
//! baseline did. A normal tournament, where models move in most games, is not touched, and one
//! whose models play a few moves before failing is chess (badly played), not this.

use std::collections::BTreeMap;

use crate::{
    store::{GameMoves, PlayerRow, StandingRow, Store, StoreError},
    table::{Cell, Table},
};

/// The kind (and snake_case table name) of the no-chess table.
pub const KIND: &str = "no_chess";

/// The verdict an experiment's arm gets in place of `H0`, `H1` or `undecided`.
pub const NO_CHESS_VERDICT: &str = "no_chess";

/// Terminations that are a refusal of the player's requests by the provider.
const REFUSALS: [&str; 2] = ["request_rejected", "context_exceeded"];

/// What one model player's games came to, for the verdict and its hint.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerChess {
    /// The player's name.
    pub player: String,
    /// Finished games with a result.
    pub games: u32,
    /// Of those, games in which none of its replies became a played move.
    pub no_move_games: u32,
    /// Games it lost by a protocol failure (the standings' forfeits).
    pub forfeits: u32,
    /// Games that ended because the provider refused its request (`request_rejected`,
    /// `context_exceeded`) and it lost.
    pub refusals: u32,
    /// Replies cut at the token limit without a move (`cut_off`).
    pub cut_offs: u64,
    /// Replies without a readable move (parse errors).
    pub parse_errors: u64,
    /// Replies naming an illegal or ambiguous move.
    pub illegal_moves: u64,
    /// Replies refused for forbidden reasoning.
    pub forbidden_reasoning: u64,
    /// The player's `max_tokens`, if it sets one.
    pub max_tokens: Option<u64>,
}

impl PlayerChess {
    /// Whether this player compared no chess: more than half of its games are no-move games.
    pub fn no_chess(&self) -> bool {
        self.games > 0 && 2 * self.no_move_games > self.games
    }

    /// The verdict's words, e.g. `no chess compared: 12 of 12 games of `think` without a move of
    /// its own (12 forfeited); 11 replies cut at max_tokens = 128`.
    pub fn verdict(&self) -> String {
        let mut line = format!(
            "no chess compared: {} of {} games of `{}` without a move of its own ({} forfeited)",
            self.no_move_games, self.games, self.player, self.forfeits
        );
        for cause in self.causes() {
            line += "; ";
            line += &cause;
        }
        line
    }

    /// What went wrong, most telling first.
    fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.cut_offs > 0 {
            out.push(match self.max_tokens {
                Some(n) => format!("{} replies cut at max_tokens = {n}", self.cut_offs),
                None => format!("{} replies cut at the model's token limit", self.cut_offs),
            });
        }
        if self.parse_errors > 0 {
            out.push(format!(
                "{} replies without a readable move",
                self.parse_errors
            ));
        }
        if self.illegal_moves > 0 {
            out.push(format!("{} illegal moves", self.illegal_moves));
        }
        if self.forbidden_reasoning > 0 {
            out.push(format!(
                "{} replies refused for forbidden reasoning",
                self.forbidden_reasoning
            ));
        }
        if self.refusals > 0 {
            out.push(format!(
                "{} games ended by the provider refusing a request",
                self.refusals
            ));
        }
        out
    }

    /// The likely fixes, chosen from the causes seen, most likely first.
    pub fn hint(&self) -> String {
        let mut fixes: Vec<String> = Vec::new();
        if self.cut_offs > 0 {
            fixes.push(match self.max_tokens {
                Some(n) => format!("raise `max_tokens` (now {n}) so a reply can reach its move"),
                None => "set a larger `max_tokens`".to_owned(),
            });
            fixes.push(
                "or ask for a shorter answer: `options.on_cut_off = \"retry_shorter\"`, or a prompt without step-by-step reasoning"
                    .to_owned(),
            );
        }
        if self.parse_errors > 0 {
            fixes.push(
                "a lenient parser (`options.parser = \"tolerant\"`) or the grammar (`options.grammar = true`, llama.cpp servers)"
                    .to_owned(),
            );
        }
        if self.illegal_moves > 0 {
            fixes.push(
                "the legal moves in the prompt (`options.legal_moves = true`) or the grammar"
                    .to_owned(),
            );
        }
        if self.forbidden_reasoning > 0 {
            fixes.push("a mode that allows the model's reasoning".to_owned());
        }
        if self.refusals > 0 {
            fixes.push(
                "look at the refused requests' errors (`arena leaderboard --stats`, the report): a setting the model does not take, or a prompt over its context (`options.history`)"
                    .to_owned(),
            );
        }
        if fixes.is_empty() {
            fixes.push(
                "read a game's replies in the report's viewer (`arena report`) to see why no move was played"
                    .to_owned(),
            );
        }
        format!("try: {}", fixes.join("; "))
    }
}

/// Whether a tournament, and which of its model players, compared no chess.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChessCompared {
    /// Every model player with finished games, in name order.
    pub players: Vec<PlayerChess>,
    /// Finished games with a result.
    pub games: u32,
    /// Of those, games that are a no-move game of at least one model player.
    pub no_move_games: u32,
}

impl ChessCompared {
    /// The tournament's figures from its standings, its players and its games' moves.
    pub fn of<'a>(
        standings: &[StandingRow],
        players: &[PlayerRow],
        games: impl IntoIterator<Item = &'a GameMoves>,
    ) -> Self {
        let mut tally = Tally::new(players);
        for g in games {
            tally.add(g);
        }
        tally.finish(standings)
    }

    /// [`ChessCompared::of`] read from the store, its games one at a time.
    ///
    /// # Errors
    /// A store failure.
    pub fn read(store: &Store, tournament: i64) -> Result<Self, StoreError> {
        let players = store.players(tournament)?;
        let mut tally = Tally::new(&players);
        store.for_each_game_moves(tournament, |g| tally.add(&g))?;
        Ok(tally.finish(&store.standings(tournament)?))
    }

    /// Whether the whole tournament compared no chess: more than half of its games are a
    /// no-move game of a model player.
    pub fn tournament_no_chess(&self) -> bool {
        self.games > 0 && 2 * self.no_move_games > self.games
    }

    /// The player `name`, if it is a model player with games.
    pub fn player(&self, name: &str) -> Option<&PlayerChess> {
        self.players.iter().find(|p| p.player == name)
    }

    /// The players that compared no chess.
    pub fn no_chess_players(&self) -> impl Iterator<Item = &PlayerChess> {
        self.players.iter().filter(|p| p.no_chess())
    }

    /// The tournament's verdict line when it compared no chess, e.g. `no chess compared: 12 of
    /// 12 games without a move of a model player`.
    pub fn tournament_verdict(&self) -> Option<String> {
        self.tournament_no_chess().then(|| {
            format!(
                "no chess compared: {} of {} games ended without a move of a model player",
                self.no_move_games, self.games
            )
        })
    }

    /// The table of kind `no_chess`, or none when every model player and the tournament
    /// compared chess: one row per player that did not (`player`, `games`, `no_move_games`,
    /// `forfeits`, `refusals`, `cut_off`, `parse_errors`, `illegal_moves`, `max_tokens`,
    /// `verdict`, `hint`), the verdict lines as notes.
    pub fn table(&self) -> Option<Table> {
        let players: Vec<&PlayerChess> = self.no_chess_players().collect();
        if players.is_empty() && !self.tournament_no_chess() {
            return None;
        }
        let mut t = Table::new(
            "no chess compared",
            &[
                "player",
                "games",
                "no move games",
                "forfeits",
                "refusals",
                "cut off",
                "parse errors",
                "illegal moves",
                "max tokens",
                "verdict",
                "hint",
            ],
        )
        .of_kind(KIND);
        for p in &players {
            t.rows.push(vec![
                p.player.clone().into(),
                p.games.into(),
                p.no_move_games.into(),
                p.forfeits.into(),
                p.refusals.into(),
                p.cut_offs.into(),
                p.parse_errors.into(),
                p.illegal_moves.into(),
                p.max_tokens.map_or(Cell::Empty, |n| n.into()),
                p.verdict().into(),
                p.hint().into(),
            ]);
        }
        if let Some(line) = self.tournament_verdict() {
            t.notes.push(line);
        }
        for p in &players {
            t.notes.push(p.verdict());
            t.notes.push(p.hint());
        }
        t.notes.push(
            "no chess compared: more than half of a model player's games ended without one of \
             its replies becoming a move (a tournament: more than half of its games, for some \
             model player in them); its ratings and verdicts measure no chess"
                .into(),
        );
        Some(t)
    }

    /// Marks an experiment's table (kind `experiment`): an arm whose player or `baseline`
    /// compared no chess gets the verdict `no_chess`, no Elo, and its summary note replaced by
    /// the no-chess verdict and hint. Returns whether an arm was marked.
    pub(crate) fn mark_experiment(&self, table: &mut Table, baseline: &str) -> bool {
        let key = |name: &str| table.columns.iter().position(|c| c == name);
        let (Some(variant), Some(verdict)) = (key("variant"), key("verdict")) else {
            return false;
        };
        let elo: Vec<usize> = ["elo", "elo_low", "elo_high"]
            .iter()
            .filter_map(|c| key(c))
            .collect();
        let base = self.player(baseline).filter(|p| p.no_chess());
        let mut marked = false;
        for row in &mut table.rows {
            let Some(Cell::Text(name)) = row.get(variant).cloned() else {
                continue;
            };
            let Some(culprit) = self.player(&name).filter(|p| p.no_chess()).or(base) else {
                continue;
            };
            row[verdict] = NO_CHESS_VERDICT.into();
            for &i in &elo {
                row[i] = Cell::Empty;
            }
            let prefix = format!("{name} vs {baseline}: ");
            let line = format!("{prefix}{}; {}", culprit.verdict(), culprit.hint());
            match table.notes.iter_mut().find(|n| n.starts_with(&prefix)) {
                Some(note) => *note = line,
                None => table.notes.push(line),
            }
            marked = true;
        }
        marked
    }
}

/// The figures of [`ChessCompared`] as its games come, one at a time.
struct Tally<'p> {
    /// The model players by name.
    models: BTreeMap<&'p str, &'p PlayerRow>,
    by_player: BTreeMap<String, PlayerChess>,
    games: u32,
    no_move_games: u32,
}

impl<'p> Tally<'p> {
    fn new(players: &'p [PlayerRow]) -> Self {
        Tally {
            models: players
                .iter()
                .filter(|p| matches!(p.kind.as_str(), "llm" | "moa"))
                .map(|p| (p.name.as_str(), p))
                .collect(),
            by_player: BTreeMap::new(),
            games: 0,
            no_move_games: 0,
        }
    }

    fn add(&mut self, g: &GameMoves) {
        self.games += 1;
        let mut any = false;
        for (me, moves, lost) in [
            (&g.white, g.white_moves, g.result == "0-1"),
            (&g.black, g.black_moves, g.result == "1-0"),
        ] {
            let Some(p) = self.models.get(me.as_str()) else {
                continue;
            };
            let entry = self
                .by_player
                .entry(me.clone())
                .or_insert_with(|| empty(&p.name, &p.settings_json));
            entry.games += 1;
            if moves == 0 {
                entry.no_move_games += 1;
                any = true;
            }
            if lost
                && g.termination
                    .as_deref()
                    .is_some_and(|t| REFUSALS.contains(&t))
            {
                entry.refusals += 1;
            }
        }
        if any {
            self.no_move_games += 1;
        }
    }

    fn finish(mut self, standings: &[StandingRow]) -> ChessCompared {
        for row in standings {
            if let Some(p) = self.by_player.get_mut(&row.player) {
                p.forfeits = row.forfeits;
                p.cut_offs = row.cut_offs;
                p.parse_errors = row.parse_errors;
                p.illegal_moves = row.illegal_moves;
                p.forbidden_reasoning = row.forbidden_reasoning;
            }
        }
        ChessCompared {
            players: self.by_player.into_values().collect(),
            games: self.games,
            no_move_games: self.no_move_games,
        }
    }
}

/// A model player with no games counted yet; its `max_tokens` read from its stored settings.
fn empty(name: &str, settings_json: &str) -> PlayerChess {
    let max_tokens = serde_json::from_str::<serde_json::Value>(settings_json)
        .ok()
        .and_then(|v| v.get("max_tokens").and_then(serde_json::Value::as_u64));
    PlayerChess {
        player: name.to_owned(),
        games: 0,
        no_move_games: 0,
        forfeits: 0,
        refusals: 0,
        cut_offs: 0,
        parse_errors: 0,
        illegal_moves: 0,
        forbidden_reasoning: 0,
        max_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(name: &str, kind: &str) -> PlayerRow {
        PlayerRow {
            id: 0,
            tournament: 1,
            name: name.into(),
            kind: kind.into(),
            settings_json: r#"{"max_tokens":128}"#.into(),
        }
    }

    fn game(white: &str, black: &str, result: &str, moves: (u64, u64)) -> GameMoves {
        GameMoves {
            white: white.into(),
            black: black.into(),
            result: result.into(),
            termination: Some("forfeit".into()),
            white_moves: moves.0,
            black_moves: moves.1,
        }
    }

    #[test]
    fn more_than_half_of_the_games_without_a_move_is_no_chess() {
        let players = [player("think", "llm"), player("sf", "engine")];
        // 2 of 3 games without a move of `think`: no chess; the engine is never judged.
        let games = [
            game("think", "sf", "0-1", (0, 0)),
            game("sf", "think", "1-0", (1, 0)),
            game("think", "sf", "0-1", (5, 5)),
        ];
        let c = ChessCompared::of(&[], &players, &games);
        assert_eq!(c.players.len(), 1);
        let p = &c.players[0];
        assert_eq!((p.games, p.no_move_games), (3, 2));
        assert!(p.no_chess() && c.tournament_no_chess());
        assert_eq!(p.max_tokens, Some(128));
        // Exactly half is not most.
        let half = ChessCompared::of(&[], &players, &games[1..]);
        assert!(!half.players[0].no_chess() && !half.tournament_no_chess());
        assert!(half.table().is_none());
    }

    #[test]
    fn the_verdict_names_the_causes_and_the_hint_their_fixes() {
        let p = PlayerChess {
            player: "think".into(),
            games: 12,
            no_move_games: 12,
            forfeits: 12,
            refusals: 0,
            cut_offs: 11,
            parse_errors: 0,
            illegal_moves: 2,
            forbidden_reasoning: 0,
            max_tokens: Some(128),
        };
        assert_eq!(
            p.verdict(),
            "no chess compared: 12 of 12 games of `think` without a move of its own (12 forfeited); 11 replies cut at max_tokens = 128; 2 illegal moves"
        );
        let hint = p.hint();
        assert!(hint.contains("raise `max_tokens` (now 128)"), "{hint}");
        assert!(hint.contains("retry_shorter"), "{hint}");
        assert!(hint.contains("legal_moves"), "{hint}");
        assert!(!hint.contains("parser"), "{hint}");
    }

    #[test]
    fn an_arm_against_a_baseline_without_chess_is_marked() {
        let players = [
            player("plain", "llm"),
            player("think", "llm"),
            player("null", "llm"),
        ];
        let games = [
            game("think", "plain", "1-0", (0, 0)),
            game("plain", "think", "0-1", (0, 3)),
        ];
        let c = ChessCompared::of(&[], &players, &games);
        let mut t = Table::new("experiment", &["variant", "verdict", "elo"]);
        t.rows
            .push(vec!["think".into(), "H1".into(), Cell::Num(400.0, 1)]);
        t.notes.push("think vs plain: H1 after 1 pairs".into());
        assert!(c.mark_experiment(&mut t, "plain"));
        assert_eq!(t.rows[0][1], Cell::Text(NO_CHESS_VERDICT.into()));
        assert_eq!(t.rows[0][2], Cell::Empty);
        assert!(
            t.notes[0].starts_with("think vs plain: no chess compared: 2 of 2 games of `plain`"),
            "{}",
            t.notes[0]
        );
    }
}
