//! Streamed replies (`stream = true`): a game against the fake server streaming its answers
//! stores the replies a non-streamed game stores; a stream cut midway, or stopped by a chess
//! clock, keeps its partial reply in the store as a failed call and is never scored as chess;
//! the local model streams text and usage.

use std::{ops::ControlFlow, time::Duration};

use arena::{
    llm::{ChatMessage, ChatRequest, Endpoint, LlmClient, LlmError, RetryPolicy},
    store::{GameStatus, Store},
};

use crate::common::{TestDir, fake_openai_with, finished, local_llm, open_store, stderr};

/// A seeded game of the fake's random mover against arena's, with `stream` as the player says.
fn play(url: &str, stream: bool, extra: &str) -> TestDir {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "streamed", games_per_pair = 2, max_plies = 12, seed = 3, concurrency = 1,
  players = {{
    arena.llm {{ name = "m", model = "fake", base_url = "{url}", stream = {stream}, {extra} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
        ),
    );
    dir
}

fn games(store: &Store) -> Vec<arena::store::GameRow> {
    let t = store
        .find_tournament("streamed")
        .unwrap()
        .expect("the tournament");
    store.games(t.id).unwrap()
}

/// Each stored call's reply, reasoning, finish reason and token counts, game by game.
type Stored = Vec<(
    Option<String>,
    Option<String>,
    Option<String>,
    Option<u64>,
    Option<u64>,
)>;

fn stored_replies(store: &Store) -> (Stored, Vec<String>) {
    let mut replies = Vec::new();
    let mut bodies = Vec::new();
    for game in games(store) {
        assert_eq!(game.status, GameStatus::Finished, "{game:?}");
        for row in store.game_calls(game.id).unwrap() {
            let c = row.call;
            replies.push((
                c.reply_text,
                c.reasoning,
                c.finish_reason,
                c.prompt_tokens,
                c.completion_tokens,
            ));
            bodies.push(c.raw_body.unwrap_or_default());
        }
    }
    (replies, bodies)
}

#[test]
fn a_game_against_the_streaming_fake_stores_the_same_replies() {
    let plain = fake_openai_with(0, &[]);
    let dir = play(&plain.url, false, "");
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let (plain_replies, plain_bodies) = stored_replies(&open_store(&dir.db()));

    let streaming = fake_openai_with(0, &["--stream"]);
    let dir = play(&streaming.url, true, "");
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let (replies, bodies) = stored_replies(&open_store(&dir.db()));

    assert!(!replies.is_empty());
    assert!(
        replies.iter().all(|r| r.3.is_some() && r.4.is_some()),
        "usage is counted: {replies:?}"
    );
    assert_eq!(replies, plain_replies);
    // The raw bodies are what each server sent: events when streamed, JSON when not.
    assert!(
        bodies
            .iter()
            .all(|b| b.starts_with("data: ") && b.ends_with("data: [DONE]\n\n")),
        "{bodies:?}"
    );
    assert!(plain_bodies.iter().all(|b| b.starts_with('{')));
}

/// An endpoint of the fake server that streams, retrying `outage` at most.
fn streaming_endpoint(url: &str, outage: Duration) -> Endpoint {
    Endpoint {
        stream: true,
        stream_idle_timeout: Duration::from_millis(300),
        retry: RetryPolicy {
            give_up_after: outage,
            ..RetryPolicy::default()
        },
        ..Endpoint::new(url)
    }
}

fn move_request() -> ChatRequest {
    ChatRequest {
        model: "fake".into(),
        messages: vec![ChatMessage::new(
            "user",
            "Position: rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1. Your move?",
        )],
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn a_stream_cut_midway_keeps_its_partial_text() {
    // The role chunk and two words of "I pick a random legal move. ...", then the connection drops.
    let cut = fake_openai_with(0, &["--stream", "--cut-stream-after", "3"]);
    arena::providers::install();
    let client = LlmClient::new().unwrap();
    let mut shown = Vec::new();
    let error = client
        .chat_observed(
            &streaming_endpoint(&cut.url, Duration::ZERO),
            &move_request(),
            |failed| {
                shown.push((
                    failed.http_status,
                    failed.body.to_owned(),
                    failed.error.to_string(),
                ));
                ControlFlow::Continue(())
            },
        )
        .await
        .expect_err("every stream is cut");
    let LlmError::StreamCut {
        partial, events, ..
    } = &error
    else {
        panic!("not a cut stream: {error}");
    };
    // Trimmed, as every stored answer is.
    assert_eq!(partial.text, "I pick");
    assert_eq!(partial.reasoning, None);
    assert_eq!(*events, 3);
    assert!(
        error.is_transient(),
        "a cut stream is retried like a dropped connection"
    );
    // The attempt was shown (for the store) with the events as they came.
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].0, 200);
    assert_eq!(shown[0].1, partial.body);
    assert_eq!(
        partial.body.matches("data: ").count(),
        3,
        "{}",
        partial.body
    );
    assert!(
        shown[0].2.contains("cut after 3 event(s)"),
        "{}",
        shown[0].2
    );
}

#[test]
fn a_game_whose_streams_are_cut_is_set_aside_with_the_partial_replies_stored() {
    let cut = fake_openai_with(0, &["--stream", "--cut-stream-after", "4"]);
    let dir = play(&cut.url, true, "outage_s = 0");
    let out = dir.run("t.lua");
    let store = open_store(&dir.db());
    let games = games(&store);
    assert!(!games.is_empty(), "{}", stderr(&out));
    for game in &games {
        // A harness fault: no result, never scored as chess.
        assert_eq!(game.status, GameStatus::Errored, "{game:?}");
        assert_eq!(game.result, None, "{game:?}");
    }
    let failed: Vec<_> = games
        .iter()
        .flat_map(|g| store.failed_calls(g.id).unwrap())
        .collect();
    assert!(!failed.is_empty());
    for row in &failed {
        assert_eq!(row.call.http_status, 200);
        assert!(
            row.call.raw_body.contains(r#""content":"I ""#),
            "{}",
            row.call.raw_body
        );
        assert!(
            row.call.raw_body.contains(r#""content":"pick ""#),
            "{}",
            row.call.raw_body
        );
        assert!(
            row.call.error.contains("was cut after 4 event(s)"),
            "{}",
            row.call.error
        );
        assert!(
            row.call.error.contains("8 characters of answer"),
            "{}",
            row.call.error
        );
    }
}

#[test]
fn a_clock_stops_a_silent_stream_and_keeps_what_it_said() {
    // Every stream says "I pick " and falls silent: the player's clock runs out in it.
    let stalls = fake_openai_with(0, &["--stream", "--stall-stream-after", "3"]);
    let dir = play(
        &stalls.url,
        true,
        "stream_idle_s = 600, time_control = { per_move_s = 0.5 }",
    );
    let out = dir.run("t.lua");
    assert!(finished(out.status), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = games(&store);
    assert_eq!(games.len(), 2);
    for game in &games {
        assert_eq!(
            game.termination.as_deref(),
            Some("time_forfeit"),
            "{game:?}"
        );
        let failed = store.failed_calls(game.id).unwrap();
        assert_eq!(failed.len(), 1, "{failed:?}");
        let call = &failed[0].call;
        assert_eq!(
            call.raw_body.matches("data: ").count(),
            3,
            "{}",
            call.raw_body
        );
        assert!(
            call.raw_body.contains(r#""content":"pick ""#),
            "{}",
            call.raw_body
        );
        assert!(call.error.contains("clock ran out"), "{}", call.error);
    }
}

#[tokio::test]
async fn the_local_model_streams_text_and_usage() {
    let Some(url) = local_llm("the_local_model_streams_text_and_usage") else {
        return;
    };
    arena::providers::install();
    let client = LlmClient::new().unwrap();
    let endpoint = Endpoint {
        stream: true,
        max_concurrency: 1,
        ..Endpoint::new(url)
    };
    let request = ChatRequest {
        model: "smollm2-135m-instruct".into(),
        messages: vec![ChatMessage::new("user", "Name one chess piece.")],
        max_tokens: Some(16),
        temperature: Some(0.0),
        ..ChatRequest::default()
    };
    let reply = client
        .chat(&endpoint, &request)
        .await
        .expect("a streamed reply");
    assert!(!reply.content.is_empty(), "{reply:?}");
    let usage = reply.usage.expect("usage is streamed with include_usage");
    assert!(
        usage.prompt_tokens > 0 && usage.completion_tokens > 0,
        "{usage:?}"
    );
    assert!(reply.finish_reason.is_some(), "{reply:?}");
    assert!(reply.raw_body.starts_with("data: "), "{}", reply.raw_body);
    assert!(reply.raw_body.contains("[DONE]"), "{}", reply.raw_body);
}

#[tokio::test]
async fn a_silent_stream_is_cut_after_its_idle_timeout() {
    // "I pick " and then nothing, on a connection that stays open.
    let stalls = fake_openai_with(0, &["--stream", "--stall-stream-after", "3"]);
    arena::providers::install();
    let error = LlmClient::new()
        .unwrap()
        .chat(
            &streaming_endpoint(&stalls.url, Duration::ZERO),
            &move_request(),
        )
        .await
        .expect_err("the stream stalls");
    let LlmError::StreamCut {
        partial, detail, ..
    } = &error
    else {
        panic!("not a cut stream: {error}");
    };
    assert!(detail.contains("idle timeout"), "{detail}");
    assert_eq!(partial.text, "I pick");
}
