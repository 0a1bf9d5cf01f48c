//! How close arena runs to a provider's rate limit (issue 29): two players on one key against
//! `examples/fake_openai.rs --rpm 600 --latency-ms 200` (at most 10 requests in any second),
//! concurrency 64 (32 requests of each player waiting at once), 2,000 calls, once with pacing and
//! once with it turned off (only `max_concurrency` and the retries that honour `retry-after`).
//!
//! ```sh
//! cargo bench --bench provider_limits
//! ARENA_BENCH_CALLS=600 cargo bench --bench provider_limits    # a shorter run
//! ```
//!
//! Printed side by side: calls per second against the limit's 10 a second, the share of the
//! server's answers that were 429s over the whole run and after its first minute (the server's
//! own counts, `GET /stats`), and each player's calls. Target: at least 95 % of the limit and at
//! most 1 % 429s after the first minute. It prints numbers and whether the target is met; it never
//! asserts on time.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use arena::llm::{ChatMessage, ChatRequest, Endpoint, LlmClient, RetryPolicy};
use arena_testkit::{FakeOpenAi, FakeStats};

const RPM: u64 = 600;
const LATENCY_MS: u64 = 200;
const CONCURRENCY: usize = 64;

/// Builds the fake server in the profile this bench was built in, and returns its path.
fn fake_server(root: &Path) -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_arena"));
    let folder = built.parent().expect("the binary has a folder");
    let release = folder.ends_with("release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root)
        .args(["build", "--quiet", "--example", "fake_openai"]);
    if release {
        build.arg("--release");
    }
    assert!(
        build.status().expect("cargo runs").success(),
        "cargo build --example fake_openai failed"
    );
    folder.join("examples/fake_openai")
}

/// One run's figures.
struct Run {
    seconds: f64,
    calls: u64,
    total: FakeStats,
    after_first_minute: Option<(u64, u64)>,
    per_player: [u64; 2],
}

async fn run(bin: &Path, paced: bool, calls: u64) -> Run {
    let server = FakeOpenAi::start_with(bin, LATENCY_MS, &["--rpm", &RPM.to_string()]);
    arena::providers::install();
    let client = LlmClient::new().expect("http client");
    let endpoint = Endpoint {
        max_concurrency: CONCURRENCY,
        paced,
        timeout: Duration::from_secs(60),
        retry: RetryPolicy {
            max_attempts: 100_000,
            give_up_after: Duration::from_secs(3600),
            ..RetryPolicy::default()
        },
        ..Endpoint::new(server.url.clone())
    };
    let request = ChatRequest {
        model: "fake-random-mover".into(),
        messages: vec![ChatMessage::new(
            "user",
            "Your move as White? rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        )],
        max_tokens: Some(32),
        ..ChatRequest::default()
    };
    let left = Arc::new(AtomicU64::new(calls));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for player in 0..2 {
        for _ in 0..CONCURRENCY / 2 {
            let (client, request, left) = (client.clone(), request.clone(), Arc::clone(&left));
            let endpoint = Endpoint {
                lane: format!("player-{player}"),
                ..endpoint.clone()
            };
            tasks.push(tokio::spawn(async move {
                let mut made = 0;
                while left
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok()
                {
                    client.chat(&endpoint, &request).await.expect("answered");
                    made += 1;
                }
                (player, made)
            }));
        }
    }
    // The server's counts at one minute, to leave the start out.
    let at_minute = {
        let watch = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let mut per_player = [0u64; 2];
        let mut at_minute = None;
        let mut watch = Some(watch);
        let mut pending = tasks;
        while !pending.is_empty() {
            if let Some(w) = &watch
                && w.is_finished()
            {
                at_minute = Some(server.stats());
                watch = None;
            }
            let (done, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|t| t.is_finished());
            for task in done {
                let (player, made) = task.await.expect("the task ends");
                per_player[player] += made;
            }
            pending = rest;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (at_minute, per_player)
    };
    let seconds = started.elapsed().as_secs_f64();
    let total = server.stats();
    let (at_minute, per_player) = at_minute;
    Run {
        seconds,
        calls,
        total,
        after_first_minute: at_minute
            .map(|m| (total.asked - m.asked, total.rate_limited - m.rate_limited)),
        per_player,
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

#[tokio::main]
async fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let calls: u64 = std::env::var("ARENA_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let bin = fake_server(root);
    let limit = RPM as f64 / 60.0;
    println!(
        "provider_limits: 2 players on one key, concurrency {CONCURRENCY}, {calls} calls, fake server --rpm {RPM} --latency-ms {LATENCY_MS} (limit {limit:.0}/s)\n"
    );
    println!(
        "| pacing | calls/s | of limit | requests sent | 429s | 429 share | 429 share after 1st min | calls per player |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    for paced in [true, false] {
        let r = run(&bin, paced, calls).await;
        let rate = r.calls as f64 / r.seconds;
        let after = r
            .after_first_minute
            .map_or("n/a (under a minute)".to_owned(), |(asked, limited)| {
                format!("{:.2} %", share(limited, asked))
            });
        println!(
            "| {} | {rate:.2} | {:.1} % | {} | {} | {:.2} % | {after} | {} / {} |",
            if paced { "on" } else { "off" },
            100.0 * rate / limit,
            r.total.asked,
            r.total.rate_limited,
            share(r.total.rate_limited, r.total.asked),
            r.per_player[0],
            r.per_player[1],
        );
        if paced {
            let met = rate >= 0.95 * limit
                && r.after_first_minute
                    .is_none_or(|(asked, limited)| share(limited, asked) <= 1.0);
            eprintln!(
                "target (>= 95 % of the limit, <= 1 % 429s after the first minute): {}",
                if met { "met" } else { "NOT met" }
            );
        }
    }
}
