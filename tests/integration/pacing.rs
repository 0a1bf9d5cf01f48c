//! Pacing against `examples/fake_openai.rs --rpm N`: the fake server refuses past its limit as
//! providers do, and counts its 429s, so that what pacing saves is counted, not timed.

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use arena::llm::{ChatMessage, ChatRequest, Endpoint, LlmClient, RateLimit, RetryPolicy};

use crate::common::fake_openai_with;

fn request() -> ChatRequest {
    ChatRequest {
        model: "fake-random-mover".into(),
        messages: vec![ChatMessage::new(
            "user",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        )],
        max_tokens: Some(16),
        ..ChatRequest::default()
    }
}

fn endpoint(url: &str, paced: bool, rate: RateLimit) -> Endpoint {
    Endpoint {
        max_concurrency: 32,
        paced,
        rate,
        timeout: Duration::from_secs(30),
        retry: RetryPolicy {
            max_attempts: 50,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_millis(200),
            give_up_after: Duration::from_secs(120),
            decode_retries: 0,
        },
        ..Endpoint::new(url)
    }
}

/// Sends requests from `tasks` tasks per lane, every one on `endpoint`'s URL and key, until
/// `skip + calls` have been answered, and returns how many of the answers after the first `skip`
/// each lane got (answers to requests still in flight then are not counted: they were sent, not
/// yet shared out).
async fn run(
    client: &LlmClient,
    endpoint: &Endpoint,
    lanes: &[(&str, usize)],
    skip: u64,
    calls: u64,
) -> HashMap<String, u64> {
    let answered = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for (lane, tasks) in lanes {
        for _ in 0..*tasks {
            let client = client.clone();
            let endpoint = Endpoint {
                lane: (*lane).to_owned(),
                ..endpoint.clone()
            };
            let answered = Arc::clone(&answered);
            handles.push(tokio::spawn(async move {
                let mut made = 0;
                while answered.load(Ordering::SeqCst) < skip + calls {
                    client
                        .chat(&endpoint, &request())
                        .await
                        .expect("the fake server answers in the end");
                    if (skip..skip + calls).contains(&answered.fetch_add(1, Ordering::SeqCst)) {
                        made += 1;
                    }
                }
                (endpoint.lane, made)
            }));
        }
    }
    let mut made: HashMap<String, u64> = HashMap::new();
    for handle in handles {
        let (lane, n) = handle.await.expect("the task ends");
        *made.entry(lane).or_default() += n;
    }
    made
}

#[tokio::test(flavor = "multi_thread")]
async fn paced_requests_stay_under_the_servers_limit() {
    // 600 a minute: at most 10 in any second. Unpaced, 32 requests at once overrun it.
    let unpaced_server = fake_openai_with(20, &["--rpm", "600"]);
    arena::providers::install();
    let client = LlmClient::new().unwrap();
    let unpaced = Endpoint {
        retry: RetryPolicy {
            // A storm of 429s: every task retries many times.
            max_attempts: 10_000,
            ..RetryPolicy::default()
        },
        ..endpoint(&unpaced_server.url, false, RateLimit::default())
    };
    run(&client, &unpaced, &[("a", 32)], 0, 40).await;
    let stats = unpaced_server.stats();
    assert!(stats.answers >= 40, "{stats:?}");
    assert!(
        stats.rate_limited > 0,
        "without pacing the server must refuse some: {stats:?}"
    );

    // Limits learned from the headers: the first answer tells them.
    let server = fake_openai_with(20, &["--rpm", "600"]);
    arena::providers::install();
    let client = LlmClient::new().unwrap();
    let learned = endpoint(&server.url, true, RateLimit::default());
    run(&client, &learned, &[("a", 32)], 0, 40).await;
    let stats = server.stats();
    assert_eq!(stats.rate_limited, 0, "{stats:?}");
    let load = client.load();
    assert_eq!(load.len(), 1);
    assert_eq!(load[0].rpm_limit, Some(600.0));
    assert_eq!((load[0].requests, load[0].rate_limited), (stats.asked, 0));
    assert!(stats.answers >= 40, "{stats:?}");

    // A declared rate below the server's: paced to it from the first request on.
    let server = fake_openai_with(20, &["--rpm", "600", "--tpm", "20000"]);
    arena::providers::install();
    let client = LlmClient::new().unwrap();
    let declared = endpoint(
        &server.url,
        true,
        RateLimit {
            rpm: Some(300),
            tpm: None,
        },
    );
    run(&client, &declared, &[("a", 32)], 0, 30).await;
    let stats = server.stats();
    assert_eq!(stats.rate_limited, 0, "{stats:?}");
    assert!(stats.answers >= 30, "{stats:?}");
    let load = &client.load()[0];
    assert_eq!(load.rpm_limit, Some(300.0));
    assert_eq!(load.tpm_limit, Some(20_000.0));
}

#[tokio::test(flavor = "multi_thread")]
async fn players_on_one_key_get_equal_shares() {
    // One player with six times the other's games in flight: turns by player, not by arrival,
    // keep their calls within 10 % of each other once the pace is set (in the first second's
    // burst, the player with few games has all of them in flight and the other may use the
    // rest).
    let server = fake_openai_with(20, &["--rpm", "1200"]);
    arena::providers::install();
    let client = LlmClient::new().unwrap();
    let shared = endpoint(&server.url, true, RateLimit::default());
    let made = run(&client, &shared, &[("many", 24), ("few", 4)], 40, 120).await;
    let (many, few) = (made["many"], made["few"]);
    assert_eq!(many + few, 120);
    let gap = many.abs_diff(few) as f64 / many.max(few) as f64;
    assert!(gap <= 0.10, "calls {many} and {few} differ by {gap:.2}");
    assert_eq!(server.stats().rate_limited, 0);
}
