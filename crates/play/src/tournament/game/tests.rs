//! The game loop on its own: a Rust play mode instead of a Lua one, and a loopback model that
//! answers a fixed script of replies, so each rule of the loop (attempts, feedback, `say`, the
//! previous dialog, losses by protocol, script faults) is checked without Lua.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use serde_json::json;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::method};

use super::{GameEnv, GameOutcome, play};
use crate::{
    board::Termination,
    llm::{ChatMessage, LlmClient},
    script::ScriptError,
    spec::{LlmPlayerSpec, ModeBinding, PlayerSpec, TournamentSettings, TournamentSpec},
    store::{ErrorKind, GameRow, GameStatus, PlayerRecord, ScheduledGame, Store},
    tournament::{
        players::{Participant, Roster, endpoint},
        progress::Progress,
        rules::Rules,
        schedule::Format,
        turn::{Action, Decision, PlayMode, PlyOpening, RetryAction, TurnContext},
    },
};

/// A play mode that reads the model's reply as a command: `move X`, `retry TEXT`, `reset`,
/// `say TEXT`, `forfeit TEXT`, or `flaky` (a script error while `broken` is set, else the move
/// d2d4); anything else is a script error. It records every context it is given.
struct CommandMode {
    max_attempts: u32,
    max_turns: Option<u32>,
    seen: Arc<Mutex<Vec<TurnContext>>>,
    broken: Arc<AtomicBool>,
    options: serde_json::Map<String, serde_json::Value>,
}

impl PlayMode for CommandMode {
    fn start(&self, ctx: &TurnContext) -> Result<PlyOpening, ScriptError> {
        self.seen.lock().unwrap().push(ctx.clone());
        Ok(PlyOpening {
            tools: Vec::new(),
            messages: vec![ChatMessage::new(
                "user",
                format!("ply {} at {}", ctx.ply, ctx.fen),
            )],
            request: Default::default(),
        })
    }

    fn reply(&self, ctx: &TurnContext, text: &str) -> Result<Decision, ScriptError> {
        self.seen.lock().unwrap().push(ctx.clone());
        let (command, rest) = text.split_once(' ').unwrap_or((text, ""));
        let action = match command {
            "move" => Action::Move(rest.into()),
            "retry" => Action::Retry(RetryAction::Feedback(rest.into())),
            "reset" => Action::Retry(RetryAction::Reset),
            "say" => Action::Say(rest.into()),
            "forfeit" => Action::Forfeit(rest.into()),
            "flaky" if !self.broken.load(Ordering::SeqCst) => Action::Move("d2d4".into()),
            _ => {
                return Err(ScriptError::at(
                    "modes/command.lua:7",
                    "cannot read the reply",
                ));
            }
        };
        Ok(Decision {
            action,
            outcome: None,
            candidate: None,
            other_calls: None,
        })
    }

    fn options(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.options
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn max_turns(&self) -> Option<u32> {
        self.max_turns
    }

    fn exhausted(&self) -> Termination {
        Termination::TooManyWrongActions
    }
}

/// Rules whose only play mode is a [`CommandMode`].
struct TestRules {
    spec: TournamentSpec,
    sources: BTreeMap<String, String>,
    max_attempts: u32,
    max_turns: Option<u32>,
    seen: Arc<Mutex<Vec<TurnContext>>>,
    broken: Arc<AtomicBool>,
}

impl Rules for TestRules {
    fn number(&self) -> u64 {
        1
    }
    fn hash(&self) -> &str {
        "test-rules"
    }
    fn spec(&self) -> &TournamentSpec {
        &self.spec
    }
    fn sources(&self) -> &BTreeMap<String, String> {
        &self.sources
    }
    fn entry(&self) -> &Path {
        Path::new("t.lua")
    }
    fn watched(&self) -> &[PathBuf] {
        &[]
    }
    fn mode_options(&self, _: &str) -> Option<&serde_json::Map<String, serde_json::Value>> {
        None
    }
    fn play_mode(&self, _: ModeBinding<'_>) -> Result<Box<dyn PlayMode>, ScriptError> {
        Ok(Box::new(CommandMode {
            max_attempts: self.max_attempts,
            max_turns: self.max_turns,
            seen: self.seen.clone(),
            broken: self.broken.clone(),
            options: Default::default(),
        }))
    }
    fn format(&self) -> Result<Box<dyn Format>, ScriptError> {
        Err(ScriptError::bare("no format in these tests"))
    }
}

/// Answers the chat requests with `replies` in order (the last one again when they run out).
struct Replies {
    replies: Vec<&'static str>,
    next: AtomicUsize,
}

impl Respond for Replies {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        let text = self.replies[i.min(self.replies.len() - 1)];
        ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        }))
    }
}

/// A game of the model player `m` (White) against a random mover, over at most `max_plies`.
struct Setup {
    env: GameEnv,
    row: GameRow,
    rules: Arc<TestRules>,
    /// The game's lease, claimed as a worker claims it before playing.
    fence: crate::store::Fence,
    _server: MockServer,
}

async fn setup(replies: Vec<&'static str>, max_plies: u32, max_attempts: u32) -> Setup {
    setup_with_opening(replies, max_plies, max_attempts, &[], false).await
}

/// As [`setup`], the game starting with the book line `opening` (which counts towards the move
/// limit when `include_book`).
async fn setup_with_opening(
    replies: Vec<&'static str>,
    max_plies: u32,
    max_attempts: u32,
    opening: &[&str],
    include_book: bool,
) -> Setup {
    let replies = Replies {
        replies,
        next: AtomicUsize::new(0),
    };
    setup_full(
        replies,
        json!({}),
        max_plies,
        max_attempts,
        opening,
        include_book,
    )
    .await
}

/// Answers the chat requests with `responses` in order (the last one again when they run out).
struct Responses {
    responses: Vec<ResponseTemplate>,
    next: AtomicUsize,
}

impl Responses {
    fn new(responses: Vec<ResponseTemplate>) -> Self {
        Self {
            responses,
            next: AtomicUsize::new(0),
        }
    }
}

impl Respond for Responses {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        self.responses[i.min(self.responses.len() - 1)].clone()
    }
}

/// A chat completion answering `text`, with or without usage.
fn completion(text: &str, usage: bool) -> ResponseTemplate {
    let mut body = json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
    });
    if usage {
        body["usage"] = json!({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12});
    }
    ResponseTemplate::new(200).set_body_json(body)
}

/// As [`setup`], with any responder, and `player` fields merged into the model player's spec.
async fn setup_with(
    responder: impl Respond + 'static,
    player: serde_json::Value,
    max_plies: u32,
    max_attempts: u32,
) -> Setup {
    setup_full(responder, player, max_plies, max_attempts, &[], false).await
}

/// The set-up of every test: any responder, `player` fields merged into the model player's
/// spec, and the book line `opening` (counting towards the move limit when `include_book`).
/// Retries wait milliseconds, not seconds.
async fn setup_full(
    responder: impl Respond + 'static,
    player: serde_json::Value,
    max_plies: u32,
    max_attempts: u32,
    opening: &[&str],
    include_book: bool,
) -> Setup {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(responder)
        .mount(&server)
        .await;
    let mut fields = json!({
        "name": "m", "base_url": format!("{}/v1", server.uri()), "model": "test", "outage_s": 0.0,
    });
    for (k, v) in player.as_object().unwrap() {
        fields[k] = v.clone();
    }
    let llm: LlmPlayerSpec = serde_json::from_value(fields).unwrap();
    let random = serde_json::from_value(json!({ "name": "r" })).unwrap();
    let spec = TournamentSpec {
        settings: TournamentSettings {
            name: "t".into(),
            format: "round_robin".into(),
            games_per_pair: 1,
            max_plies,
            max_plies_include_book: include_book,
            seed: 7,
            pair_seeds: false,
            concurrency: None,
            openings: None,
            format_options: None,
            analysis: None,
            budget: None,
            time_control: None,
            prices: Default::default(),
            adjudication: None,
            endings: None,
        },
        players: vec![PlayerSpec::Llm(llm.clone()), PlayerSpec::Random(random)],
        defined_at: BTreeMap::new(),
    };
    let store = Arc::new(Store::open_in_memory().unwrap());
    let t = store.open_tournament("t", "t.lua", "{}").unwrap();
    for (name, kind) in [("m", "llm"), ("r", "random")] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, kind, "{}"))
            .unwrap();
    }
    store
        .schedule_games(
            t.id,
            &[ScheduledGame {
                opening_moves: opening.iter().map(|m| m.to_string()).collect(),
                ..ScheduledGame::new(1, 1, "m", "r")
            }],
        )
        .unwrap();
    let row = store.games(t.id).unwrap().remove(0);
    let _ = rustls::crypto::ring::default_provider().install_default();
    arena_providers::install();
    let mut players = BTreeMap::new();
    let mut endpoint = endpoint(&llm.model_spec()).unwrap();
    endpoint.retry.base_delay = std::time::Duration::from_millis(5);
    endpoint.retry.max_delay = std::time::Duration::from_millis(20);
    players.insert("m".to_string(), Participant::Llm { endpoint });
    players.insert("r".to_string(), Participant::Random { seed: 3 });
    let env = GameEnv {
        store,
        roster: Arc::new(Roster {
            players,
            client: LlmClient::new().unwrap(),
        }),
        tournament: t.id,
        seed: 7,
        seed_by_round: false,
        progress: Arc::new(Progress::new(1, 0, 0, 0, 0)),
        adjudication: None,
    };
    let rules = Arc::new(TestRules {
        spec,
        sources: BTreeMap::new(),
        max_attempts,
        max_turns: None,
        seen: Arc::default(),
        broken: Arc::new(AtomicBool::new(true)),
    });
    let crate::store::Claim::Claimed(fence) = env
        .store
        .claim(
            crate::store::LeaseKind::Play,
            row.id,
            "test-worker",
            std::time::Duration::from_secs(600),
        )
        .unwrap()
    else {
        panic!("a new game's lease is free");
    };
    Setup {
        env,
        row,
        rules,
        fence,
        _server: server,
    }
}

/// The stored outcome of every call of the game, in order.
fn outcomes(store: &Store, game: i64, plies: u32) -> Vec<String> {
    (0..plies)
        .flat_map(|ply| store.llm_calls(game, ply).unwrap())
        .map(|c| c.outcome.unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn feedback_say_and_moves_are_played_and_stored_in_order() {
    let s = setup(
        vec!["retry not that", "move e2e4", "say look again", "move d2d4"],
        4,
        3,
    )
    .await;
    let outcome = play(&s.env, &s.row, s.rules.clone(), &s.fence).await;
    let GameOutcome::Finished(end) = outcome else {
        panic!("the game should finish: {outcome:?}");
    };
    assert_eq!(end.termination, Termination::MoveLimit);
    let plies = s.env.store.plies(s.row.id).unwrap();
    let played: Vec<(&str, &str, u32)> = plies
        .iter()
        .map(|p| (p.uci.as_str(), p.player.as_str(), p.attempts))
        .collect();
    assert_eq!(played.len(), 4);
    assert_eq!((played[0].0, played[0].1, played[0].2), ("e2e4", "m", 2));
    assert_eq!((played[2].0, played[2].1, played[2].2), ("d2d4", "m", 1));
    assert_eq!(
        outcomes(&s.env.store, s.row.id, 4),
        ["retry", "move", "say", "move"]
    );

    let seen = s.rules.seen.lock().unwrap();
    // Ply 0: start, reply (retry), reply (move); the retry's feedback follows the reply.
    assert_eq!(seen[2].attempt, 2);
    let dialog: Vec<&str> = seen[2].dialog.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(dialog[1..], ["retry not that", "not that", "move e2e4"]);
    // Ply 2 builds on ply 0's final dialog, kept in memory.
    let ply2 = &seen[3];
    assert_eq!(ply2.ply, 2);
    assert_eq!(ply2.previous_dialog, seen[2].dialog);
    // `say` answered without spending an attempt.
    assert_eq!(seen[5].attempt, 1);
}

#[tokio::test]
async fn a_resumed_game_replays_stored_replies_and_rebuilds_the_previous_dialog() {
    let s = setup(vec!["move e2e4", "flaky"], 4, 3).await;
    // Ply 2's reply is stored, then the mode fails on it: the game is set aside there.
    let GameOutcome::Errored(error) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the broken mode sets the game aside");
    };
    assert_eq!(error.kind(), ErrorKind::Script);
    let first: Vec<TurnContext> = s.rules.seen.lock().unwrap().clone();
    let asked = s._server.received_requests().await.unwrap().len();
    assert_eq!(asked, 2);

    // Fixed, the game resumes at ply 2 from the stored reply, with ply 0's dialog rebuilt.
    s.rules.broken.store(false, Ordering::SeqCst);
    s.rules.seen.lock().unwrap().clear();
    let row = s.env.store.game(s.row.id).unwrap();
    let GameOutcome::Finished(end) = play(&s.env, &row, s.rules.clone(), &s.fence).await else {
        panic!("the resumed game should finish");
    };
    assert_eq!(end.termination, Termination::MoveLimit);
    assert_eq!(
        s._server.received_requests().await.unwrap().len(),
        asked,
        "the stored reply is used, not asked again"
    );
    let resumed = s.rules.seen.lock().unwrap();
    assert_eq!(resumed[0].ply, 2);
    assert_eq!(resumed[0].previous_dialog, first[1].dialog);
    let plies = s.env.store.plies(s.row.id).unwrap();
    assert_eq!(plies[2].uci, "d2d4");
    assert_eq!(s.env.store.game(s.row.id).unwrap().error_kind, None);
}

#[tokio::test]
async fn a_resumed_vote_reuses_its_samples_and_builds_on_the_played_one() {
    // Ply 0: three samples, e2e4 wins 2–1 (sample 1's reply is played, the last sample lost);
    // ply 2: the broken mode fails on the first sample, after all three are stored.
    let replies = Replies {
        replies: vec!["move e2e4", "move e2e4", "move d2d4", "flaky"],
        next: AtomicUsize::new(0),
    };
    let player = json!({"temperature": 0.5, "max_concurrency": 1, "options": {"samples": 3}});
    let s = setup_with(replies, player, 4, 1).await;
    let GameOutcome::Errored(error) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the broken mode sets the game aside");
    };
    assert_eq!(error.kind(), ErrorKind::Script);
    assert_eq!(s._server.received_requests().await.unwrap().len(), 6);
    assert_eq!(s.env.store.plies(s.row.id).unwrap()[0].uci, "e2e4");
    let first: Vec<TurnContext> = s.rules.seen.lock().unwrap().clone();
    // The dialog kept after ply 0 ends with the played reply.
    let kept = first
        .iter()
        .find(|c| c.ply == 2)
        .unwrap()
        .previous_dialog
        .clone();
    assert_eq!(kept.last().unwrap().content, "move e2e4");

    s.rules.broken.store(false, Ordering::SeqCst);
    s.rules.seen.lock().unwrap().clear();
    let row = s.env.store.game(s.row.id).unwrap();
    let GameOutcome::Finished(_) = play(&s.env, &row, s.rules.clone(), &s.fence).await else {
        panic!("the resumed game should finish");
    };
    assert_eq!(
        s._server.received_requests().await.unwrap().len(),
        6,
        "the stored samples are read again, not asked"
    );
    let resumed = s.rules.seen.lock().unwrap();
    assert_eq!(resumed[0].ply, 2);
    assert_eq!(
        resumed[0].previous_dialog, kept,
        "rebuilt from the store, on the played sample"
    );
    assert_eq!(s.env.store.plies(s.row.id).unwrap()[2].uci, "d2d4");
    let outcomes = outcomes(&s.env.store, s.row.id, 3);
    assert_eq!(
        outcomes,
        ["move", "sample", "sample", "move", "sample", "sample"]
    );
}

#[tokio::test]
async fn a_sample_answered_with_say_is_a_script_fault_not_chess() {
    let replies = Replies {
        replies: vec!["move e2e4", "say look again"],
        next: AtomicUsize::new(0),
    };
    let player = json!({"temperature": 0.5, "max_concurrency": 1, "options": {"samples": 2}});
    let s = setup_with(replies, player, 4, 1).await;
    let outcome = play(&s.env, &s.row, s.rules.clone(), &s.fence).await;
    let GameOutcome::Errored(error) = outcome else {
        panic!("a dialog mode cannot vote: {outcome:?}");
    };
    assert_eq!(error.kind(), ErrorKind::Script);
    assert!(
        error
            .to_string()
            .contains("answered sample 2 of 2 with `say`"),
        "{error}"
    );
    assert_eq!(s.env.store.game(s.row.id).unwrap().result, None);
    assert_eq!(s.env.store.llm_calls(s.row.id, 0).unwrap().len(), 2);
}

#[tokio::test]
async fn using_up_the_attempts_loses_by_the_modes_termination() {
    let s = setup(vec!["move e2e5", "reset", "retry no"], 10, 3).await;
    let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the game should finish");
    };
    assert_eq!(end.termination, Termination::TooManyWrongActions);
    assert_eq!(end.result_token(), "0-1");
    assert!(
        end.reason
            .as_deref()
            .unwrap()
            // The first ply, numbered as the viewer's "Ply 1".
            .contains("3 failed attempts at ply 1"),
        "{end:?}"
    );
    assert_eq!(
        outcomes(&s.env.store, s.row.id, 1),
        ["illegal", "retry", "retry"]
    );
    // The reset started the ply's dialog over: the third call saw only the new opening.
    let seen = s.rules.seen.lock().unwrap();
    let last = seen.last().unwrap();
    assert_eq!(last.dialog.len(), 2, "{:?}", last.dialog);
}

#[tokio::test]
async fn a_script_fault_sets_the_game_aside_with_its_kind_and_is_not_scored() {
    let s = setup(vec!["gibberish"], 10, 3).await;
    let outcome = play(&s.env, &s.row, s.rules.clone(), &s.fence).await;
    let GameOutcome::Errored(error) = outcome else {
        panic!("a script error is not chess: {outcome:?}");
    };
    assert_eq!(error.kind(), ErrorKind::Script);
    assert!(
        error
            .to_string()
            .contains("player `m`: modes/command.lua:7: cannot read the reply"),
        "{error}"
    );
    let row = s.env.store.game(s.row.id).unwrap();
    assert_eq!(row.status, GameStatus::Errored);
    assert_eq!(row.error_kind, Some(ErrorKind::Script));
    assert_eq!(row.result, None);
}

#[tokio::test]
async fn the_move_limit_counts_the_plies_after_the_book_line_and_the_store_keeps_them_all() {
    // Two book plies, then four played: White (the model) plays twice, the random mover twice.
    let replies = vec!["move g1f3", "move f1c4"];
    let s = setup_with_opening(replies.clone(), 4, 3, &["e2e4", "e7e5"], false).await;
    let outcome = play(&s.env, &s.row, s.rules.clone(), &s.fence).await;
    let GameOutcome::Finished(end) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(end.termination, Termination::MoveLimit);
    let plies = s.env.store.plies(s.row.id).unwrap();
    let players: Vec<&str> = plies.iter().map(|p| p.player.as_str()).collect();
    assert_eq!(players, ["book", "book", "m", "r", "m", "r"]);
    // The export counts the book plies too (PlyCount 6): see export's
    // `pgn_counts_the_book_plies_and_the_played_ones`.

    // Counting the book too, as before: the limit is reached after two played plies.
    let s = setup_with_opening(replies, 4, 3, &["e2e4", "e7e5"], true).await;
    let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the game ends")
    };
    assert_eq!(end.termination, Termination::MoveLimit);
    assert_eq!(s.env.store.plies(s.row.id).unwrap().len(), 4);
}

#[tokio::test]
async fn a_reply_without_usage_is_stored_as_unknown_tokens_not_zero() {
    let s = setup_with(
        Responses::new(vec![
            completion("move e2e4", false),
            completion("move d2d4", true),
        ]),
        json!({}),
        4,
        3,
    )
    .await;
    let GameOutcome::Finished(_) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the game should finish");
    };
    let first = &s.env.store.llm_calls(s.row.id, 0).unwrap()[0].call;
    assert_eq!((first.prompt_tokens, first.completion_tokens), (None, None));
    let second = &s.env.store.llm_calls(s.row.id, 2).unwrap()[0].call;
    assert_eq!(
        (second.prompt_tokens, second.completion_tokens),
        (Some(10), Some(2))
    );
    let standings = s.env.store.standings(s.env.tournament).unwrap();
    let m = standings.iter().find(|r| r.player == "m").unwrap();
    assert_eq!((m.llm_calls, m.calls_without_usage), (2, 1));
    // How the standings table words it: leaderboard's
    // `the_standings_table_names_replies_without_token_usage`.
}

#[tokio::test]
async fn undecodable_success_bodies_are_stored_then_set_the_game_aside() {
    let gateway = || {
        ResponseTemplate::new(200)
            .insert_header("x-request-id", "req-42")
            .insert_header("set-cookie", "session=secret")
            .set_body_raw("<html>upstream hiccup</html>", "text/html")
    };
    let s = setup_with(
        Responses::new(vec![gateway()]),
        json!({"outage_s": 600.0}),
        4,
        3,
    )
    .await;
    let GameOutcome::Errored(error) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("an undecodable reply is not chess");
    };
    assert_eq!(error.kind(), ErrorKind::Api);
    assert!(
        matches!(&error, super::GameError::Api { source, .. }
            if matches!(**source, crate::llm::LlmError::Decode { attempts: 4, .. })),
        "{error:?}"
    );
    // The default: one try and three retries, each body stored before the next request.
    assert_eq!(s._server.received_requests().await.unwrap().len(), 4);
    let failed = s.env.store.failed_calls(s.row.id).unwrap();
    assert_eq!(failed.len(), 4);
    for (i, f) in failed.iter().enumerate() {
        let c = &f.call;
        assert_eq!((c.ply, c.seq, c.attempt), (Some(0), 0, i as u32 + 1));
        assert_eq!(
            (c.http_status, c.raw_body.as_str()),
            (200, "<html>upstream hiccup</html>")
        );
        let headers: serde_json::Value = serde_json::from_str(&c.headers_json).unwrap();
        assert_eq!(headers["content-type"], "text/html");
        assert_eq!(headers["x-request-id"], "req-42");
        assert!(headers.get("set-cookie").is_none(), "{headers}");
        assert!(c.error.contains("failed to decode"), "{}", c.error);
        assert!(
            c.request_json.contains("\"model\":\"test\""),
            "{}",
            c.request_json
        );
    }
    assert!(s.env.store.llm_calls(s.row.id, 0).unwrap().is_empty());
    let row = s.env.store.game(s.row.id).unwrap();
    assert_eq!(
        (row.status, row.error_kind),
        (GameStatus::Errored, Some(ErrorKind::Api))
    );
}

#[tokio::test]
async fn decode_retries_are_a_player_setting_and_a_later_good_reply_is_used() {
    let gateway = ResponseTemplate::new(200).set_body_string("{\"choices\": [{\"mess");
    let s = setup_with(
        Responses::new(vec![gateway.clone(), completion("move e2e4", true)]),
        json!({"outage_s": 600.0, "decode_retries": 0}),
        2,
        3,
    )
    .await;
    // No retry at all: the first truncated body sets the game aside.
    let GameOutcome::Errored(_) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("decode_retries = 0 gives up at once");
    };
    assert_eq!(s.env.store.failed_calls(s.row.id).unwrap().len(), 1);

    let s = setup_with(
        Responses::new(vec![
            gateway,
            completion("move e2e4", true),
            completion("move d2d4", true),
        ]),
        json!({"outage_s": 600.0, "decode_retries": 1}),
        2,
        3,
    )
    .await;
    let GameOutcome::Finished(_) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the retry gets a good reply");
    };
    let failed = s.env.store.failed_calls(s.row.id).unwrap();
    assert_eq!(failed.len(), 1);
    let calls = s.env.store.llm_calls(s.row.id, 0).unwrap();
    assert_eq!(
        calls.len(),
        1,
        "one row per (game, ply, seq): the replay key"
    );
    assert_eq!((calls[0].call.transport_retries, calls[0].call.seq), (1, 0));
}

fn refusal(fixture: &str) -> ResponseTemplate {
    ResponseTemplate::new(400).set_body_raw(fixture.to_owned(), "application/json")
}

const LLAMA_CONTEXT: &str = include_str!("../../../../llm/src/fixtures/llamacpp_400_context.json");
const INVALID_PROMPT: &str =
    include_str!("../../../../llm/src/fixtures/openai_400_invalid_prompt.json");

#[tokio::test]
async fn a_prompt_over_the_context_ends_the_game_void_with_its_own_termination() {
    let s = setup_with(
        Responses::new(vec![refusal(LLAMA_CONTEXT)]),
        json!({}),
        10,
        3,
    )
    .await;
    let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("a refused prompt must end the game, not set it aside for ever");
    };
    assert_eq!(end.termination, Termination::ContextExceeded);
    assert_eq!(end.result, None, "void");
    assert!(
        end.reason
            .as_deref()
            .unwrap()
            .contains("exceeds the available context size"),
        "{end:?}"
    );
    let row = s.env.store.game(s.row.id).unwrap();
    assert_eq!(row.status, GameStatus::Finished);
    assert!(row.is_void());
    assert_eq!(row.termination.as_deref(), Some("context_exceeded"));
    // A 400 is not retried; its body is kept like any failed attempt.
    assert_eq!(s._server.received_requests().await.unwrap().len(), 1);
    let failed = s.env.store.failed_calls(s.row.id).unwrap();
    assert_eq!((failed.len(), failed[0].call.http_status), (1, 400));
    let standings = s.env.store.standings(s.env.tournament).unwrap();
    for r in &standings {
        assert_eq!((r.games, r.voids, r.forfeits), (0, 1, 0), "{}", r.player);
    }
    // A void game is in no rating and is listed as such: leaderboard's
    // `a_void_game_is_in_no_rating_and_listed_as_context_exceeded`.
}

#[tokio::test]
async fn a_player_may_count_a_refused_prompt_as_its_forfeit() {
    let s = setup_with(
        Responses::new(vec![refusal(LLAMA_CONTEXT)]),
        json!({"on_rejected": "forfeit"}),
        10,
        3,
    )
    .await;
    let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the game ends");
    };
    assert_eq!(
        (end.result_token(), end.termination),
        ("0-1", Termination::ContextExceeded)
    );
    let standings = s.env.store.standings(s.env.tournament).unwrap();
    let m = standings.iter().find(|r| r.player == "m").unwrap();
    assert_eq!((m.games, m.losses, m.forfeits, m.voids), (1, 1, 1, 0));
}

#[tokio::test]
async fn a_refused_request_is_void_after_an_accepted_one_and_set_aside_at_the_first() {
    // Refused at the player's very first request: most likely its settings, which would fail
    // every game alike; the game is set aside for the user to fix them, not scored.
    let s = setup_with(
        Responses::new(vec![refusal(INVALID_PROMPT)]),
        json!({}),
        10,
        3,
    )
    .await;
    let GameOutcome::Errored(error) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("a first-call refusal is not a result");
    };
    assert_eq!(error.kind(), ErrorKind::Api);

    // Refused after the same settings were accepted: this request's own content.
    let s = setup_with(
        Responses::new(vec![completion("move e2e4", true), refusal(INVALID_PROMPT)]),
        json!({}),
        10,
        3,
    )
    .await;
    let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
        panic!("the refusal ends the game");
    };
    assert_eq!(
        (end.result, end.termination),
        (None, Termination::RequestRejected)
    );
    // Two plies were played: the refusal is at the third, counted from 1 as the viewer does.
    assert!(
        end.reason.as_deref().unwrap().contains("(ply 3)"),
        "{end:?}"
    );
    assert_eq!(s.env.store.plies(s.row.id).unwrap().len(), 2);
}

mod clocks {
    use shakmaty::Color;

    use super::super::{engine_movetime, time_forfeit, uci_clock};
    use crate::{
        board::{
            Game, GameResult, Termination,
            clock::{Clock, Flag, TimeControl},
        },
        engine::{ClockTimes, UciClock},
    };

    fn control(base_ms: Option<u64>, increment_ms: u64, per_move_ms: Option<u64>) -> TimeControl {
        TimeControl {
            base_ms,
            increment_ms,
            per_move_ms,
        }
    }

    #[test]
    fn engines_are_told_both_clocks_and_a_per_move_limit_with_room_to_spare() {
        let mut white = Clock::new(control(Some(60_000), 600, None));
        white.charge(1_000).unwrap();
        let black = Clock::new(control(Some(60_000), 600, Some(10_000)));
        let clocks = [Some(white), Some(black)];
        assert_eq!(
            uci_clock(&clocks, Color::White),
            Some(UciClock {
                white: Some(ClockTimes {
                    time_ms: 59_600,
                    inc_ms: 600
                }),
                black: Some(ClockTimes {
                    time_ms: 60_000,
                    inc_ms: 600
                }),
                movetime_ms: None,
                allowance_ms: 59_600,
            })
        );
        let for_black = uci_clock(&clocks, Color::Black).unwrap();
        assert_eq!(
            (for_black.movetime_ms, for_black.allowance_ms),
            (Some(9_500), 10_000)
        );
        // An untimed mover gets no clock, whatever its opponent has.
        assert_eq!(uci_clock(&[None, Some(black)], Color::White), None);
        assert_eq!(engine_movetime(60_000), 59_000);
        assert_eq!(engine_movetime(1_000), 950);
        assert_eq!(engine_movetime(10), 10);
    }

    #[test]
    fn a_flag_loses_unless_the_opponent_cannot_mate() {
        let flag = Flag::Base {
            used_ms: 120,
            left_ms: 100,
        };
        // White to move flags; Black has a queen.
        let game = Game::new(Some("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1"), 0).unwrap();
        let end = time_forfeit(&game, "w", flag);
        assert_eq!(
            (end.result, end.termination),
            (Some(GameResult::BlackWins), Termination::TimeForfeit)
        );
        assert!(end.reason.unwrap().starts_with("`w` ran out of time"));
        // Black has a lone knight: it cannot mate, so the flag draws.
        let game = Game::new(Some("4k3/8/8/8/8/8/3n4/4K2Q w - - 0 1"), 0).unwrap();
        let end = time_forfeit(&game, "w", flag);
        assert_eq!(
            (end.result, end.termination),
            (Some(GameResult::Draw), Termination::TimeForfeit)
        );
        assert!(end.reason.unwrap().contains("too little material to mate"));
    }
}

mod llm_clocks {
    use std::time::Duration;

    use serde_json::json;
    use wiremock::ResponseTemplate;

    use super::{GameOutcome, Ordering, Responses, completion, play, setup_with};
    use crate::board::{GameResult, Termination};

    fn slow(text: &str, ms: u64) -> ResponseTemplate {
        completion(text, true).set_delay(Duration::from_millis(ms))
    }

    #[tokio::test]
    async fn a_slow_model_loses_on_time_without_waiting_for_its_reply() {
        let s = setup_with(
            Responses::new(vec![slow("move e2e4", 1500)]),
            json!({"time_control": {"per_move_s": 0.3}}),
            10,
            3,
        )
        .await;
        let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await
        else {
            panic!("a loss on time is a finished game");
        };
        assert_eq!(
            (end.result, end.termination),
            (Some(GameResult::BlackWins), Termination::TimeForfeit)
        );
        let reason = end.reason.unwrap();
        assert!(
            reason.starts_with("`m` took 0.301 s for a move, over the per-move limit of 0.300 s"),
            "{reason}"
        );
        // Cut off at the clock: no reply, no move, and no endpoint fault recorded.
        assert!(s.env.store.plies(s.row.id).unwrap().is_empty());
        assert!(s.env.store.llm_calls(s.row.id, 0).unwrap().is_empty());
        let events = s.env.store.events(s.env.tournament).unwrap();
        assert!(events.is_empty(), "{events:?}");
    }

    #[tokio::test]
    async fn time_in_retries_after_server_errors_is_not_charged() {
        let failing = ResponseTemplate::new(503)
            .set_body_string("overloaded")
            .set_delay(Duration::from_millis(250));
        let s = setup_with(
            Responses::new(vec![
                failing.clone(),
                failing,
                completion("move e2e4", true),
            ]),
            json!({"outage_s": 600.0, "time_control": {"per_move_s": 0.3}}),
            2,
            3,
        )
        .await;
        let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await
        else {
            panic!("the game is played");
        };
        assert_eq!(end.termination, Termination::MoveLimit, "{end:?}");
        let ply = &s.env.store.plies(s.row.id).unwrap()[0];
        let charged = ply.clock_ms.expect("a timed move carries its charge");
        // Two failed attempts of at least 250 ms each passed on the wall clock, not on its clock.
        assert!(ply.elapsed_ms >= 500, "{ply:?}");
        assert!(charged < 300, "{ply:?}");
        let call = &s.env.store.llm_calls(s.row.id, 0).unwrap()[0];
        assert_eq!(charged, call.call.latency_ms);
        assert_eq!(s.env.store.failed_calls(s.row.id).unwrap().len(), 2);
    }

    #[tokio::test]
    async fn re_asks_after_a_bad_answer_are_charged() {
        let s = setup_with(
            Responses::new(vec![slow("retry no", 200), slow("move e2e4", 200)]),
            json!({"time_control": {"per_move_s": 0.3}}),
            10,
            3,
        )
        .await;
        let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await
        else {
            panic!("a loss on time is a finished game");
        };
        assert_eq!(end.termination, Termination::TimeForfeit, "{end:?}");
        let calls = s.env.store.llm_calls(s.row.id, 0).unwrap();
        assert_eq!(calls.len(), 1, "the second call was cut off: {calls:?}");
        assert_eq!(calls[0].outcome.as_deref(), Some("retry"));
    }

    #[tokio::test]
    async fn a_move_over_the_clock_is_not_stored_but_its_reply_s_verdict_is() {
        let s = setup_with(
            Responses::new(vec![completion("move d2d4", true)]),
            json!({"time_control": {"per_move_s": 0.3}}),
            10,
            3,
        )
        .await;
        // A run killed after ply 0's reply was stored: it took 400 ms, over the per-move limit,
        // and is charged that again when it is replayed.
        let call = crate::store::LlmCallRecord {
            game_id: Some(s.row.id),
            ply: 0,
            seq: 0,
            player: "m".into(),
            model: "test".into(),
            endpoint: "http://127.0.0.1:1/v1".into(),
            request_json: r#"{"messages":[]}"#.into(),
            reply_text: Some("move e2e4".into()),
            reasoning: None,
            raw_body: None,
            finish_reason: Some("stop".into()),
            http_status: Some(200),
            prompt_tokens: Some(10),
            completion_tokens: Some(2),
            latency_ms: 400,
            transport_retries: 0,
            error: None,
            details: Default::default(),
        };
        s.env.store.record_llm_call(&call).unwrap();
        let GameOutcome::Finished(end) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await
        else {
            panic!("a loss on time is a finished game");
        };
        assert_eq!(end.termination, Termination::TimeForfeit, "{end:?}");
        assert!(s.env.store.plies(s.row.id).unwrap().is_empty());
        let calls = s.env.store.llm_calls(s.row.id, 0).unwrap();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].outcome.as_deref(), Some("move"));
    }

    #[tokio::test]
    async fn a_resumed_game_restores_its_clocks_and_charges_stored_replies_their_time() {
        let replies = [
            "move e2e4",
            "flaky",
            "move g1f3",
            "move b1c3",
            "move g2g3",
            "move a2a3",
        ];
        let s = setup_with(
            Responses::new(replies.iter().map(|r| slow(r, 120)).collect()),
            json!({"time_control": {"base_s": 0.5, "increment_s": 0.01}}),
            40,
            3,
        )
        .await;
        // The mode fails on ply 2's stored reply: the game is set aside there.
        let GameOutcome::Errored(_) = play(&s.env, &s.row, s.rules.clone(), &s.fence).await else {
            panic!("the broken mode sets the game aside");
        };
        assert_eq!(s.env.store.plies(s.row.id).unwrap().len(), 2);
        s.rules.broken.store(false, Ordering::SeqCst);
        let row = s.env.store.game(s.row.id).unwrap();
        let GameOutcome::Finished(end) = play(&s.env, &row, s.rules.clone(), &s.fence).await else {
            panic!("the resumed game finishes");
        };
        assert_eq!(end.termination, Termination::TimeForfeit, "{end:?}");
        let plies = s.env.store.plies(s.row.id).unwrap();
        // The replayed reply of ply 2 is charged what it took when it was asked, not nothing.
        let replayed = &s.env.store.llm_calls(s.row.id, 2).unwrap()[0];
        assert!(replayed.call.latency_ms >= 120);
        assert_eq!(plies[2].clock_ms, Some(replayed.call.latency_ms));
        // The clock read exactly what the stored charges leave, across the resume.
        let moves = plies.iter().filter(|p| p.player == "m").count() as u64;
        let spent: u64 = plies.iter().filter_map(|p| p.clock_ms).sum();
        let left = 500 + 10 * moves - spent;
        let reason = end.reason.unwrap();
        assert!(
            reason.contains(&format!("with {:.3} s left", left as f64 / 1000.0)),
            "{reason} (expected {left} ms left)"
        );
    }
}

/// A resumed game goes on with the dialog of its last stored request, pictures included: the
/// request names them, the store gives their bytes back.
#[tokio::test]
async fn a_resumed_dialog_gets_its_pictures_back_from_the_store() {
    use crate::llm::{ChatMessage, Image};
    let s = setup(vec![], 10, 3).await;
    let shown = ChatMessage::new("user", "the board").with_image(Image::new(
        "image/png",
        crate::board::image::png(
            &crate::board::game::chess960_fen(518).unwrap(),
            64,
            &Default::default(),
        )
        .unwrap(),
    ));
    let request = crate::llm::ChatRequest {
        model: "test".into(),
        messages: vec![shown.clone()],
        ..Default::default()
    };
    s.env.store.put_images(&request.messages).unwrap();
    let call = crate::store::LlmCallRecord {
        game_id: Some(s.row.id),
        ply: 0,
        seq: 0,
        player: "m".into(),
        model: "test".into(),
        endpoint: "http://127.0.0.1:1/v1".into(),
        request_json: serde_json::to_string(&request).unwrap(),
        reply_text: Some("move e2e4".into()),
        reasoning: None,
        raw_body: None,
        finish_reason: Some("stop".into()),
        http_status: Some(200),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: 1,
        transport_retries: 0,
        error: None,
        details: Default::default(),
    };
    s.env.store.record_llm_call(&call).unwrap();
    let dialog = super::stored_dialog(&s.env.store, s.row.id, 2, 1, None).unwrap();
    assert_eq!(dialog, [shown, ChatMessage::new("assistant", "move e2e4")]);
}

#[tokio::test]
async fn a_resumed_text_dialog_gets_its_thinking_back_from_the_stored_body() {
    use crate::llm::{ChatMessage, Provider};
    let s = setup(vec![], 10, 3).await;
    let asked = ChatMessage::new("user", "Your move?");
    let request = crate::llm::ChatRequest {
        model: "claude".into(),
        messages: vec![asked.clone()],
        ..Default::default()
    };
    let body = r#"{"type":"message","stop_reason":"end_turn","content":[
        {"type":"thinking","thinking":"The centre.","signature":"sig-1"},
        {"type":"redacted_thinking","data":"enc-2"},
        {"type":"text","text":"move e2e4"}],"usage":{"input_tokens":9,"output_tokens":40}}"#;
    let call = crate::store::LlmCallRecord {
        game_id: Some(s.row.id),
        ply: 0,
        seq: 0,
        player: "m".into(),
        model: "claude".into(),
        endpoint: "http://127.0.0.1:1/v1".into(),
        request_json: serde_json::to_string(&request).unwrap(),
        reply_text: Some("move e2e4".into()),
        reasoning: Some("The centre.".into()),
        raw_body: Some(body.into()),
        finish_reason: Some("stop".into()),
        http_status: Some(200),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: 1,
        transport_retries: 0,
        error: None,
        details: Default::default(),
    };
    s.env.store.record_llm_call(&call).unwrap();
    let resumed =
        super::stored_dialog(&s.env.store, s.row.id, 2, 1, Some(Provider::Anthropic)).unwrap();
    let mut answer = ChatMessage::new("assistant", "move e2e4");
    answer.thinking = vec![
        serde_json::json!({"type": "thinking", "thinking": "The centre.", "signature": "sig-1"}),
        serde_json::json!({"type": "redacted_thinking", "data": "enc-2"}),
    ];
    assert_eq!(resumed, [asked.clone(), answer]);
    // Another wire format has nothing to bring back from the same row.
    let other =
        super::stored_dialog(&s.env.store, s.row.id, 2, 1, Some(Provider::OpenAiChat)).unwrap();
    assert_eq!(other, [asked, ChatMessage::new("assistant", "move e2e4")]);
}

#[test]
fn a_reply_a_mode_carries_over_from_the_previous_ply_gets_its_thinking_back() {
    use crate::llm::ChatMessage;
    let mut thought = ChatMessage::new("assistant", "e2e4");
    thought.thinking = vec![serde_json::json!({"type": "redacted_thinking", "data": "enc"})];
    let previous = [ChatMessage::new("user", "Your move?"), thought.clone()];
    // As a mode rebuilds it from `ctx.previous_dialog`: role and text only.
    let mut dialog = vec![
        ChatMessage::new("user", "Your move?"),
        ChatMessage::new("assistant", "e2e4"),
        ChatMessage::new("assistant", "d2d4"),
        ChatMessage::new("user", "Now?"),
    ];
    super::with_earlier_thinking(&mut dialog, &previous);
    assert_eq!(dialog[1], thought);
    assert!(dialog[2].thinking.is_empty(), "another text has none");
    assert!(dialog[0].thinking.is_empty() && dialog[3].thinking.is_empty());
}
