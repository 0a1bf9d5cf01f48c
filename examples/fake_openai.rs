//! A fake OpenAI-compatible chat-completions server that plays random legal moves, for measuring
//! arena's own cost per LLM ply (`cargo bench --bench llm_harness`, `benches/ply_cpu.sh`) without a
//! model in the way.
//!
//! ```sh
//! cargo run --release --example fake_openai -- --port 8799 [--latency-ms 0] [--seed 1]
//! ```
//!
//! It listens on `127.0.0.1` only (`--port 0` picks a free port) and prints
//! `listening on http://127.0.0.1:PORT/v1` once it accepts connections; point an `arena.llm`
//! player's `base_url` there. It answers
//!
//! - `GET /v1/models`: a one-model list (arena's reachability probe before a tournament);
//! - `POST /v1/chat/completions`: it takes the last FEN found in the user messages (the last user
//!   message first), picks a uniformly random legal move and answers in the blitz mode's format,
//!   a short sentence and the UCI move alone in a fence (```` ```\ne2e4\n``` ````), with a `usage`
//!   object (tokens estimated as bytes / 4). A request without a FEN, or with a FEN that has no
//!   legal move, gets a reply without a fence, which arena treats as a bad answer;
//! - `GET /stats`: its counts so far, as `{"chat_completions": N, "requests": N, "answers": N,
//!   "rate_limited": N, "images": N}`: chat completions asked for (counted as each request arrives; `requests`
//!   is the same count), answered with a reply, and refused with 429, for tests that must know
//!   when requests were made and benchmarks that count 429s; and the pictures received. A message
//!   may be a list of content parts (text and `image_url` parts); an `image_url` that is not a
//!   base64 `data:image/...` URL gets 400, as OpenAI answers it.
//!
//! `--rpm N` and `--tpm N` make it enforce rate limits as providers do over short windows: a token
//! bucket per limit, refilled at N/60 a second and holding at most N/60 (so 1,200 RPM admits at
//! most 20 requests in any second). A request costs 1 request and its tokens: the prompt's
//! estimate (bytes / 4, as in `usage`) plus its `max_tokens`, charged when it arrives, as OpenAI
//! counts a request against its token limit before answering it. A request is admitted when
//! every bucket holds its cost (a token bucket that is full admits any cost, so that a prompt
//! larger than a second's worth is slow, not impossible; the bucket then goes below zero). One
//! past a limit gets 429 with `retry-after-ms`, `retry-after` (whole seconds, rounded up) and an
//! OpenAI error body. Every chat answer, 429 or not, carries OpenAI's `x-ratelimit-limit-*`,
//! `x-ratelimit-remaining-*` and `x-ratelimit-reset-*` headers for the limits set (`requests`,
//! `tokens`; the reset is the time until the bucket is full again, as a Go duration like `1.5s`).
//!
//! It also serves the two batch APIs, answering each request of a batch as it would answer it
//! alone (the same random legal move, in the batch's wire format), once `--batch-delay-ms` (default
//! 1000) have passed since the batch was created:
//!
//! - OpenAI's: `POST /v1/files` (a `multipart/form-data` upload of JSON lines with purpose
//!   `batch`), `POST /v1/batches` (`input_file_id`, `endpoint` `/v1/chat/completions`,
//!   `completion_window`), `GET /v1/batches/{id}` (`in_progress`, then `completed` with an
//!   `output_file_id` and, when some requests failed, an `error_file_id`) and
//!   `GET /v1/files/{id}/content`;
//! - Anthropic's: `POST /v1/messages/batches` (`requests: [{custom_id, params}]`),
//!   `GET /v1/messages/batches/{id}` (`in_progress`, then `ended` with a `results_url`) and
//!   `GET /v1/messages/batches/{id}/results` (one `succeeded` or `errored` result a line).
//!
//! `--batch-error-every N` fails every Nth request of every batch (a 500 in OpenAI's error file,
//! an `errored` result in Anthropic's), as a provider fault. `/stats` then also counts
//! `batches` created, `batch_requests` submitted in them and `batch_duplicates`: requests whose
//! `custom_id` an earlier batch already held (a client that submitted an item twice).
//!
//! `--answers e2e4:3,d2d4:2` replaces the random moves by a fixed distribution, given in turn
//! whatever the position (legal or not): e2e4 for three completions, d2d4 for two, then from the
//! start again. Five samples of one request at concurrency 1 or more thus always get three e2e4
//! and two d2d4 between them, for tests of self-consistency voting.
//!
//! `--blind-illegal P` makes the server worse without the legal moves: when no user message lists
//! them (a line with "legal moves" and a colon, as the built-in prompts write it), it answers an
//! illegal move (a piece of the side to move sent to a square it cannot reach) with probability
//! P, else a legal one. With the list it always answers a legal move. So a prompt with
//! `legal_moves = true` is better than one without by a known amount, for experiments' tests.
//!
//! The moves come from one random generator seeded by `--seed` and advanced once per completion,
//! so a fresh server sees the same games again whenever the requests arrive in the same order
//! (a tournament at concurrency 1). `--latency-ms` sleeps that long before each completion,
//! without holding a thread, for concurrency benchmarks. On Ctrl-C or SIGTERM it prints how many
//! requests it served.
//!
//! `--stream` makes it answer a chat completion that asks for `stream: true` as server-sent
//! events, the way OpenAI streams one: a chunk with the role, one chunk per word of the answer,
//! a chunk with the finish reason, a chunk with the usage when the request sets
//! `stream_options.include_usage`, then `data: [DONE]`, sent as a chunked body. Without it, such a
//! request gets the plain JSON answer, as from a server that does not stream. For tests of cut
//! streams, `--cut-stream-after N` closes the connection after the N-th event of every stream and
//! `--stall-stream-after N` sends nothing more after it (the connection stays open until the
//! client closes it).
//!
//! When a request offers tools, it answers with a tool call instead, in the request's own wire
//! format: chat completions (`tool_calls`, streamed as `delta.tool_calls` pieces with
//! `--stream`), and also `POST /v1/responses` (a `function_call` item), `POST /v1/messages`
//! (a `tool_use` block; a request there without tools gets the text answer) and
//! `POST /v1/models/{model}:generateContent` (a `functionCall` part). It calls `make_move` with a
//! random move from the legal moves it was given (the last tool result that lists UCI moves, or
//! a prompt's list), else `get_legal_moves`. `--bad-tool-calls` opens each dialog with two bad
//! calls, an unknown tool (`resign_game`) and then `make_move` without its `move` argument.
//!
//! `--think-tokens N` makes its chat answers reason at length first: about N tokens of
//! step-by-step thinking before the fenced move. A request whose `max_tokens` (or
//! `max_completion_tokens`) is smaller than the whole answer gets it cut after that many tokens
//! (4 bytes each, as in `usage`), with `finish_reason: "length"` and `completion_tokens` equal to
//! the limit, as a provider cuts a reply at its token limit: the move is never reached. A request
//! whose last user message asks for an answer given "briefly" gets the short answer (no thinking),
//! as a model that heeds a request to be brief. For tests of cut-off replies and the shorter retry.
//!
//! `--think-if PHRASE` makes that thinking depend on what it is told: it thinks only when a system
//! or user message contains PHRASE (ignoring case), and answers briefly otherwise. The phrase
//! `"numbered steps"` is in `examples/think/prompts/think.lua` and not in the built-in blitz
//! prompt (whose "reason step by step as long as you like" leaves the length to the model), so the
//! two arms of `examples/think` get different answers. Its thinking then varies per reply: a
//! length drawn uniformly between half and one and a half times `--think-tokens`, from the seeded
//! generator, before the move is chosen. `--think-better` makes the thinking pay off in the move:
//! a reply that thinks plays a mate in one if there is one, else the capture of the most valuable
//! piece it can take (the first such move in shakmaty's order), else a random legal move; a reply
//! that does not think plays at random as always. So one arm plays better and the other writes
//! less, a known answer for experiments' tests and the book's worked example.
//!
//! The HTTP/1.1 is hand-written and minimal, so that the server costs as little CPU as possible
//! next to the arena it serves: keep-alive and pipelining, `Content-Length` request bodies only
//! (no chunked uploads), no TLS.

use std::{
    sync::{
        Arc, LazyLock, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use clap::Parser;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use regex::Regex;
use serde_json::{Value, json};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// Largest request head or body accepted; arena's prompts are a few kilobytes.
const MAX_REQUEST_BYTES: usize = 8 << 20;

/// A FEN's board, side to move, castling and en-passant fields; the move counters are optional.
static FEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"[pnbrqkPNBRQK1-8]{1,8}(?:/[pnbrqkPNBRQK1-8]{1,8}){7}\s+[wb]\s+(?:-|[KQkqA-Ha-h]{1,4})\s+(?:-|[a-h][36])(?:\s+\d+\s+\d+)?",
    )
    .expect("the FEN pattern is valid")
});

/// One move in UCI.
static UCI_MOVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-h][1-8][a-h][1-8][qrbn]?$").expect("the UCI pattern is valid")
});

/// A prompt line that lists the legal moves ("Your legal moves: ...", "Legal moves (UCI): ...").
static LEGAL_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)legal moves[^:\n]{0,20}:").expect("the legal-list pattern is valid")
});

#[derive(Parser)]
#[command(about = "A fake OpenAI-compatible server answering random legal chess moves")]
struct Args {
    /// Port on 127.0.0.1 (0: any free port; the chosen one is printed).
    #[arg(long, default_value_t = 8799)]
    port: u16,
    /// Milliseconds to wait before each chat completion.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Seed of the move choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Chance of an illegal answer when the request does not list the legal moves.
    #[arg(long, default_value_t = 0.0)]
    blind_illegal: f64,
    /// Requests per minute admitted (0: no limit).
    #[arg(long, default_value_t = 0)]
    rpm: u64,
    /// Tokens per minute admitted (0: no limit).
    #[arg(long, default_value_t = 0)]
    tpm: u64,
    /// Answer requests with `stream: true` as server-sent events.
    #[arg(long)]
    stream: bool,
    /// With `--stream`: close the connection after this many events of each stream (0: never).
    #[arg(long, default_value_t = 0)]
    cut_stream_after: usize,
    /// With `--stream`: send nothing more after this many events of each stream, holding the
    /// connection open (0: never).
    #[arg(long, default_value_t = 0)]
    stall_stream_after: usize,
    /// Milliseconds from a batch's creation until it is complete.
    #[arg(long, default_value_t = 1000)]
    batch_delay_ms: u64,
    /// Fail every Nth request of a batch (0: none).
    #[arg(long, default_value_t = 0)]
    batch_error_every: usize,
    /// Answer these moves instead of random ones, whatever the position, in turn: `e2e4:3,d2d4:2`
    /// answers e2e4 three times, then d2d4 twice, then again from the start.
    #[arg(long)]
    answers: Option<String>,
    /// Think about this many tokens before the move in chat answers; a request whose `max_tokens`
    /// is smaller gets its answer cut there (`finish_reason: "length"`) unless its last user
    /// message asks for a brief answer (0: no thinking).
    #[arg(long, default_value_t = 0)]
    think_tokens: usize,
    /// Think only when a system or user message contains this phrase (ignoring case), for a length
    /// drawn uniformly between half and one and a half times `--think-tokens`.
    #[arg(long)]
    think_if: Option<String>,
    /// When it thinks, play a mate in one, else the most valuable capture, else a random move.
    #[arg(long)]
    think_better: bool,
    /// With tools: open each ply with two bad calls (an unknown tool, then make_move without its
    /// `move` argument) before playing as usual.
    #[arg(long)]
    bad_tool_calls: bool,
}

/// `--answers`: `MOVE:COUNT` pairs (`:COUNT` may be left out for 1), expanded in order.
fn parse_answers(text: &str) -> Result<Vec<String>, String> {
    let mut answers = Vec::new();
    for part in text.split(',') {
        let (uci, count) = part.split_once(':').unwrap_or((part, "1"));
        let count: usize = count
            .parse()
            .map_err(|e| format!("`{part}`: the count is not a whole number ({e})"))?;
        if uci.is_empty() || count == 0 {
            return Err(format!(
                "`{part}`: expected MOVE:COUNT with a count above 0"
            ));
        }
        answers.extend(std::iter::repeat_n(uci.to_owned(), count));
    }
    Ok(answers)
}

/// Which batch API a batch came through.
#[derive(Clone, Copy, PartialEq)]
enum BatchKind {
    OpenAi,
    Anthropic,
}

/// One batch: its requests (custom id and body) and, once complete, its result lines.
struct FakeBatch {
    kind: BatchKind,
    created: Instant,
    created_unix: u64,
    input_file_id: String,
    endpoint: String,
    requests: Vec<(String, Value)>,
    /// Output and error lines, made when the batch is first seen complete.
    results: Option<(Vec<String>, Vec<String>)>,
}

/// The batch side of the server.
#[derive(Default)]
struct Batches {
    next_id: u64,
    files: std::collections::HashMap<String, String>,
    batches: std::collections::HashMap<String, FakeBatch>,
    seen: std::collections::HashSet<String>,
    created: u64,
    requests: u64,
    duplicates: u64,
}

/// A rate limit enforced as a token bucket: refilled at `per_minute / 60` a second, holding at
/// most that much.
struct Bucket {
    per_minute: f64,
    level: f64,
    at: Instant,
}

impl Bucket {
    fn new(per_minute: u64) -> Self {
        let per_minute = per_minute as f64;
        Self {
            per_minute,
            level: per_minute / 60.0,
            at: Instant::now(),
        }
    }

    fn capacity(&self) -> f64 {
        self.per_minute / 60.0
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + elapsed * self.capacity()).min(self.capacity());
        self.at = now;
    }

    /// Whether `cost` may be taken now (a full bucket admits any cost).
    fn admits(&self, cost: f64) -> bool {
        self.level >= cost.min(self.capacity())
    }

    /// How long until `cost` may be taken.
    fn wait_for(&self, cost: f64) -> Duration {
        let missing = cost.min(self.capacity()) - self.level;
        if missing <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(missing / self.capacity())
        }
    }

    /// The `x-ratelimit-*-<name>` headers of this bucket.
    fn headers(&self, name: &str) -> String {
        let until_full =
            Duration::from_secs_f64(((self.capacity() - self.level) / self.capacity()).max(0.0));
        format!(
            "x-ratelimit-limit-{name}: {}\r\nx-ratelimit-remaining-{name}: {}\r\nx-ratelimit-reset-{name}: {}\r\n",
            self.per_minute,
            self.level.max(0.0).floor(),
            go_duration(until_full),
        )
    }
}

/// A duration as OpenAI writes it in its reset headers: `20ms` below a second, else `1.5s`,
/// `1m30s`.
fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) as f64 / 1000.0)
    }
}

/// The server's rate limits, when set.
#[derive(Default)]
struct Limits {
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
}

impl Limits {
    /// Takes one request of `tokens` tokens, or says how long until it could be taken. The rate
    /// headers to send either way come along.
    fn take(&mut self, tokens: f64) -> (Result<(), Duration>, String) {
        let now = Instant::now();
        let mut wait = Duration::ZERO;
        for (bucket, cost) in [(&mut self.requests, 1.0), (&mut self.tokens, tokens)] {
            if let Some(bucket) = bucket {
                bucket.refill(now);
                if !bucket.admits(cost) {
                    wait = wait.max(bucket.wait_for(cost));
                }
            }
        }
        let admitted = wait.is_zero();
        if admitted {
            for (bucket, cost) in [(&mut self.requests, 1.0), (&mut self.tokens, tokens)] {
                if let Some(bucket) = bucket {
                    bucket.level -= cost;
                }
            }
        }
        let mut headers = String::new();
        if let Some(bucket) = &self.requests {
            headers.push_str(&bucket.headers("requests"));
        }
        if let Some(bucket) = &self.tokens {
            headers.push_str(&bucket.headers("tokens"));
        }
        (if admitted { Ok(()) } else { Err(wait) }, headers)
    }
}

/// What every connection shares.
struct Server {
    rng: Mutex<StdRng>,
    blind_illegal: f64,
    /// `--think-tokens`: thinking before the move in chat answers.
    think_tokens: usize,
    /// `--think-if`, lowercased: the phrase that asks for thinking (None: always think).
    think_if: Option<String>,
    /// `--think-better`: a reply that thinks plays the better move.
    think_better: bool,
    latency: Duration,
    completions: AtomicU64,
    answers: AtomicU64,
    rate_limited: AtomicU64,
    /// Pictures received in content parts (`image_url` data URLs).
    images: AtomicU64,
    listings: AtomicU64,
    other: AtomicU64,
    limits: Mutex<Limits>,
    stream: bool,
    cut_stream_after: usize,
    stall_stream_after: usize,
    batch_delay: Duration,
    batch_error_every: usize,
    batches: Mutex<Batches>,
    /// `http://127.0.0.1:PORT`, for the absolute `results_url` Anthropic gives.
    origin: String,
    /// `--answers`, expanded (empty: random moves), and how many of them were given so far.
    fixed_answers: Vec<String>,
    fixed_given: AtomicU64,
    /// `--bad-tool-calls`.
    bad_tool_calls: bool,
}

/// One parsed request.
struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
    close: bool,
}

/// A reply ready to be written.
struct Reply {
    status: &'static str,
    /// More header lines, each ending in CRLF.
    headers: String,
    body: String,
    /// The `data:` of each event, when the reply is streamed.
    events: Option<Vec<String>>,
}

impl Reply {
    fn json(status: &'static str, body: &Value) -> Self {
        Self {
            status,
            headers: String::new(),
            body: body.to_string(),
            events: None,
        }
    }

    fn error(status: &'static str, message: &str) -> Self {
        Self::json(
            status,
            &json!({"error": {"message": message, "type": "invalid_request_error"}}),
        )
    }
}

// One thread is plenty (a reply costs microseconds) and keeps the server off arena's second core.
#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let fixed_answers = match args.answers.as_deref().map(parse_answers) {
        None => Vec::new(),
        Some(Ok(answers)) => answers,
        Some(Err(e)) => {
            eprintln!("fake_openai: --answers: {e}");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(("127.0.0.1", args.port)).await?;
    let port = listener.local_addr()?.port();
    println!("listening on http://127.0.0.1:{port}/v1");
    let server = Arc::new(Server {
        rng: Mutex::new(StdRng::seed_from_u64(args.seed)),
        blind_illegal: args.blind_illegal,
        think_tokens: args.think_tokens,
        think_if: args.think_if.map(|p| p.to_lowercase()),
        think_better: args.think_better,
        latency: Duration::from_millis(args.latency_ms),
        completions: AtomicU64::new(0),
        answers: AtomicU64::new(0),
        rate_limited: AtomicU64::new(0),
        images: AtomicU64::new(0),
        listings: AtomicU64::new(0),
        other: AtomicU64::new(0),
        limits: Mutex::new(Limits {
            requests: (args.rpm > 0).then(|| Bucket::new(args.rpm)),
            tokens: (args.tpm > 0).then(|| Bucket::new(args.tpm)),
        }),
        stream: args.stream,
        cut_stream_after: args.cut_stream_after,
        stall_stream_after: args.stall_stream_after,
        batch_delay: Duration::from_millis(args.batch_delay_ms),
        batch_error_every: args.batch_error_every,
        batches: Mutex::new(Batches::default()),
        origin: format!("http://127.0.0.1:{port}"),
        fixed_answers,
        fixed_given: AtomicU64::new(0),
        bad_tool_calls: args.bad_tool_calls,
    });
    let accept = async {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let server = Arc::clone(&server);
                    tokio::spawn(async move {
                        if let Err(e) = serve(stream, &server).await {
                            eprintln!("fake_openai: connection dropped: {e}");
                        }
                    });
                }
                Err(e) => eprintln!("fake_openai: accept failed: {e}"),
            }
        }
    };
    tokio::select! {
        () = accept => {}
        () = shutdown_signal() => {}
    }
    eprintln!(
        "fake_openai: served {} chat completions, {} rate-limited, {} model listings, {} other requests",
        server.completions.load(Ordering::Relaxed),
        server.rate_limited.load(Ordering::Relaxed),
        server.listings.load(Ordering::Relaxed),
        server.other.load(Ordering::Relaxed),
    );
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM (how the benchmark runner stops the server).
async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("SIGTERM can be watched");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Answers the requests of one connection until the client closes it or asks to.
async fn serve(mut stream: TcpStream, server: &Server) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(16 << 10);
    loop {
        let Some(request) = read_request(&mut stream, &mut buf).await? else {
            return Ok(());
        };
        let reply = route(&request, server).await;
        if let Some(events) = &reply.events {
            if !send_events(&mut stream, &reply, events, server).await? || request.close {
                return Ok(());
            }
            continue;
        }
        let head = format!(
            "HTTP/1.1 {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}{}\r\n",
            reply.status,
            reply.body.len(),
            reply.headers,
            if request.close {
                "connection: close\r\n"
            } else {
                ""
            },
        );
        let mut out = head.into_bytes();
        out.extend_from_slice(reply.body.as_bytes());
        stream.write_all(&out).await?;
        if request.close {
            return Ok(());
        }
    }
}

/// Reads one request, keeping any bytes of the next one in `buf`. `None` when the client closed
/// the connection between requests.
async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<Request>> {
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_REQUEST_BYTES {
            return Err(invalid("request head too large"));
        }
        if !fill(stream, buf).await? {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(invalid("connection closed inside a request head"))
            };
        }
    };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| invalid("non-UTF-8 head"))?;
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or_default().split(' ');
    let method = start.next().unwrap_or_default().to_owned();
    let path = start.next().unwrap_or_default().to_owned();
    let http10 = start.next() == Some("HTTP/1.0");
    let mut length = 0;
    let mut close = http10;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().map_err(|_| invalid("bad content-length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(invalid("chunked request bodies are not supported"));
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    if length > MAX_REQUEST_BYTES {
        return Err(invalid("request body too large"));
    }
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        if !fill(stream, buf).await? {
            return Err(invalid("connection closed inside a request body"));
        }
    }
    let body = buf[body_start..body_start + length].to_vec();
    buf.drain(..body_start + length);
    Ok(Some(Request {
        method,
        path,
        body,
        close,
    }))
}

/// Appends what the socket has; `false` at end of stream.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut chunk = [0u8; 16 << 10];
    let n = stream.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n > 0)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.to_owned())
}

async fn route(request: &Request, server: &Server) -> Reply {
    let path = request.path.split('?').next().unwrap_or_default();
    match (request.method.as_str(), path) {
        ("GET", "/v1/models") => {
            server.listings.fetch_add(1, Ordering::Relaxed);
            Reply::json(
                "200 OK",
                &json!({"object": "list", "data": [
                    {"id": "fake-random-mover", "object": "model", "created": 0, "owned_by": "fake_openai"}
                ]}),
            )
        }
        ("GET", "/stats") => {
            let asked = server.completions.load(Ordering::Relaxed);
            let batches = server
                .batches
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            Reply::json(
                "200 OK",
                &json!({
                    "chat_completions": asked,
                    "requests": asked,
                    "answers": server.answers.load(Ordering::Relaxed),
                    "rate_limited": server.rate_limited.load(Ordering::Relaxed),
                    "images": server.images.load(Ordering::Relaxed),
                    "batches": batches.created,
                    "batch_requests": batches.requests,
                    "batch_duplicates": batches.duplicates,
                }),
            )
        }
        (_, p)
            if p.starts_with("/v1/files")
                || p.starts_with("/v1/batches")
                || p.starts_with("/v1/messages/batches") =>
        {
            batch_route(request, path, server)
        }
        ("POST", "/v1/chat/completions") => {
            server.completions.fetch_add(1, Ordering::Relaxed);
            let parsed: Value = match serde_json::from_slice(&request.body) {
                Ok(v) => v,
                Err(e) => return Reply::error("400 Bad Request", &format!("invalid json: {e}")),
            };
            let (admitted, headers) = server
                .limits
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(token_cost(&parsed));
            if let Err(wait) = admitted {
                server.rate_limited.fetch_add(1, Ordering::Relaxed);
                let mut reply = Reply::json(
                    "429 Too Many Requests",
                    &json!({"error": {
                        "message": format!("Rate limit reached for fake-random-mover; please try again in {}.", go_duration(wait)),
                        "type": "requests",
                        "param": null,
                        "code": "rate_limit_exceeded",
                    }}),
                );
                reply.headers = format!(
                    "{headers}retry-after-ms: {}\r\nretry-after: {}\r\n",
                    wait.as_millis().max(1),
                    wait.as_secs_f64().ceil().max(1.0),
                );
                return reply;
            }
            if !server.latency.is_zero() {
                tokio::time::sleep(server.latency).await;
            }
            let mut reply = match tool_call(&parsed, Format::Chat, server) {
                Some(call) => call_reply(&parsed, Format::Chat, call, server),
                None => complete(&parsed, server),
            };
            if reply.status.starts_with("200") {
                server.answers.fetch_add(1, Ordering::Relaxed);
                if server.stream && parsed["stream"] == true {
                    reply.events = Some(chunks(
                        &reply.body,
                        parsed["stream_options"]["include_usage"] == true,
                    ));
                }
            }
            reply.headers = headers;
            reply
        }
        ("POST", "/v1/messages") => other_format(request, Format::Anthropic, server),
        ("POST", "/v1/responses") => other_format(request, Format::Responses, server),
        ("POST", p) if p.starts_with("/v1/models/") && p.ends_with(":generateContent") => {
            other_format(request, Format::Gemini, server)
        }
        _ => {
            server.other.fetch_add(1, Ordering::Relaxed);
            Reply::error(
                "404 Not Found",
                &format!("no route for {} {path}", request.method),
            )
        }
    }
}

/// A wire format the fake answers tool-calling requests in.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

/// A request in another wire format than chat completions: answered with a tool call when it
/// offers tools, else (Anthropic only) with the chat answer's text in that format's shape.
fn other_format(request: &Request, format: Format, server: &Server) -> Reply {
    server.completions.fetch_add(1, Ordering::Relaxed);
    let parsed: Value = match serde_json::from_slice(&request.body) {
        Ok(v) => v,
        Err(e) => return Reply::error("400 Bad Request", &format!("invalid json: {e}")),
    };
    server.answers.fetch_add(1, Ordering::Relaxed);
    match tool_call(&parsed, format, server) {
        Some(call) => call_reply(&parsed, format, call, server),
        None if format == Format::Anthropic => {
            Reply::json("200 OK", &anthropic_message(&parsed, server))
        }
        None => Reply::error(
            "400 Bad Request",
            "the fake serves this wire format only for requests that offer tools",
        ),
    }
}

/// What a tool-calling request holds, read alike from every wire format: the tools offered,
/// the model's turns so far, and the texts of the tool results and user messages.
struct ToolTurn {
    offered: Vec<String>,
    turns: usize,
    results: Vec<String>,
    user_text: String,
}

fn read_turn(request: &Value, format: Format) -> ToolTurn {
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let name = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let mut turn = ToolTurn {
        offered: Vec::new(),
        turns: 0,
        results: Vec::new(),
        user_text: String::new(),
    };
    match format {
        Format::Chat => {
            turn.offered = list(&request["tools"])
                .iter()
                .map(|t| name(&t["function"]["name"]))
                .collect();
            for m in list(&request["messages"]) {
                match m["role"].as_str() {
                    Some("assistant") => turn.turns += 1,
                    Some("tool") => turn.results.push(text_of(&m)),
                    Some("user") => turn.user_text.push_str(&text_of(&m)),
                    _ => {}
                }
            }
        }
        Format::Responses => {
            turn.offered = list(&request["tools"])
                .iter()
                .map(|t| name(&t["name"]))
                .collect();
            // The calls of one reply follow each other; a turn is a run of them (or a message).
            let mut in_call = false;
            for item in list(&request["input"]) {
                match item["type"].as_str() {
                    Some("function_call") => {
                        if !in_call {
                            turn.turns += 1;
                        }
                        in_call = true;
                        continue;
                    }
                    Some("function_call_output") => turn.results.push(name(&item["output"])),
                    _ if item["role"] == "assistant" => turn.turns += 1,
                    _ => turn.user_text.push_str(&text_of(&item)),
                }
                in_call = false;
            }
        }
        Format::Anthropic => {
            turn.offered = list(&request["tools"])
                .iter()
                .map(|t| name(&t["name"]))
                .collect();
            for m in list(&request["messages"]) {
                if m["role"] == "assistant" {
                    turn.turns += 1;
                    continue;
                }
                turn.user_text.push_str(&text_of(&m));
                for block in list(&m["content"]) {
                    if block["type"] == "tool_result" {
                        turn.results.push(name(&block["content"]));
                    }
                }
            }
        }
        Format::Gemini => {
            turn.offered = list(&request["tools"])
                .iter()
                .flat_map(|t| list(&t["functionDeclarations"]))
                .map(|d| name(&d["name"]))
                .collect();
            for c in list(&request["contents"]) {
                if c["role"] == "model" {
                    turn.turns += 1;
                    continue;
                }
                for part in list(&c["parts"]) {
                    if let Some(text) = part["text"].as_str() {
                        turn.user_text.push_str(text);
                    }
                    if let Some(result) = part["functionResponse"]["response"]["result"].as_str() {
                        turn.results.push(result.to_owned());
                    }
                }
            }
        }
    }
    turn
}

/// The tool the fake calls for a request that offers tools (`None` when it offers none): a
/// random move from the legal moves it was given (the last tool result that lists UCI moves, or
/// a user message's list), else `get_legal_moves`. With `--bad-tool-calls`, the first two turns
/// of each dialog call an unknown tool and then make_move without a move.
fn tool_call(request: &Value, format: Format, server: &Server) -> Option<(String, Value)> {
    let turn = read_turn(request, format);
    if turn.offered.is_empty() {
        return None;
    }
    if server.bad_tool_calls && turn.turns == 0 {
        return Some(("resign_game".to_owned(), json!({})));
    }
    if server.bad_tool_calls && turn.turns == 1 {
        return Some(("make_move".to_owned(), json!({"square": "e4"})));
    }
    let is_list =
        |text: &str| !text.is_empty() && text.split(',').all(|m| UCI_MOVE.is_match(m.trim()));
    let listed = turn
        .results
        .iter()
        .rev()
        .find(|r| is_list(r))
        .cloned()
        .or_else(|| {
            LEGAL_LIST
                .find(&turn.user_text)
                .and_then(|m| turn.user_text[m.end()..].lines().next())
                .map(|l| l.trim().to_owned())
                .filter(|l| is_list(l))
        });
    if let Some(list) = listed {
        let moves: Vec<&str> = list.split(',').map(str::trim).collect();
        let mut rng = server.rng.lock().unwrap_or_else(PoisonError::into_inner);
        let uci = moves[rng.random_range(0..moves.len())];
        return Some(("make_move".to_owned(), json!({"move": uci})));
    }
    if turn.offered.iter().any(|t| t == "get_legal_moves") {
        return Some(("get_legal_moves".to_owned(), json!({})));
    }
    Some(("make_move".to_owned(), json!({"move": "0000"})))
}

/// A reply that calls `call` (a tool's name and arguments), in `format`'s shape.
fn call_reply(request: &Value, format: Format, call: (String, Value), server: &Server) -> Reply {
    let (name, args) = call;
    let n = server.completions.load(Ordering::Relaxed);
    let id = format!("call_fake_{n}");
    let model = request["model"].as_str().unwrap_or("fake-random-mover");
    let prompt_tokens = request.to_string().len() / 4 + 1;
    let completion_tokens = 12;
    let total = prompt_tokens + completion_tokens;
    let body = match format {
        Format::Chat => json!({
            "id": format!("chatcmpl-fake-{n}"),
            "object": "chat.completion",
            "created": unix_now(),
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": null, "tool_calls": [{
                    "id": id, "type": "function",
                    "function": {"name": name, "arguments": args.to_string()},
                }]},
                "finish_reason": "tool_calls",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": total,
            },
        }),
        Format::Responses => json!({
            "id": format!("resp_fake_{n}"), "object": "response", "created_at": unix_now(),
            "status": "completed", "model": model,
            "output": [{
                "id": format!("fc_fake_{n}"), "type": "function_call", "status": "completed",
                "call_id": id, "name": name, "arguments": args.to_string(),
            }],
            "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
                      "total_tokens": total},
        }),
        Format::Anthropic => json!({
            "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "tool_use", "id": format!("toolu_fake_{n}"), "name": name,
                         "input": args}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
        }),
        Format::Gemini => json!({
            "candidates": [{
                "content": {"role": "model",
                            "parts": [{"functionCall": {"name": name, "args": args}}]},
                "finishReason": "STOP", "index": 0,
            }],
            "usageMetadata": {"promptTokenCount": prompt_tokens,
                              "candidatesTokenCount": completion_tokens,
                              "totalTokenCount": total},
            "modelVersion": model,
        }),
    };
    Reply::json("200 OK", &body)
}

/// The batch endpoints of both APIs.
fn batch_route(request: &Request, path: &str, server: &Server) -> Reply {
    let mut batches = server
        .batches
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let segments: Vec<&str> = path.trim_start_matches("/v1/").split('/').collect();
    match (request.method.as_str(), segments.as_slice()) {
        ("POST", ["files"]) => {
            let Some(content) = multipart_file(&request.body) else {
                return Reply::error("400 Bad Request", "expected a multipart upload with a file");
            };
            batches.next_id += 1;
            let id = format!("file-fake{}", batches.next_id);
            let bytes = content.len();
            batches.files.insert(id.clone(), content);
            Reply::json(
                "200 OK",
                &json!({"id": id, "object": "file", "bytes": bytes, "created_at": unix_now(),
                        "filename": "batch.jsonl", "purpose": "batch"}),
            )
        }
        ("GET", ["files", id, "content"]) => match batches.files.get(*id) {
            Some(content) => Reply {
                status: "200 OK",
                headers: String::new(),
                body: content.clone(),
                events: None,
            },
            None => Reply::error("404 Not Found", &format!("no file {id}")),
        },
        ("POST", ["batches"]) => {
            let parsed: Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let file_id = parsed["input_file_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let endpoint = parsed["endpoint"].as_str().unwrap_or_default().to_owned();
            if endpoint != "/v1/chat/completions" {
                return Reply::error(
                    "400 Bad Request",
                    &format!("unsupported endpoint `{endpoint}`"),
                );
            }
            let Some(content) = batches.files.get(&file_id).cloned() else {
                return Reply::error("404 Not Found", &format!("no file {file_id}"));
            };
            let mut requests = Vec::new();
            for line in content.lines().filter(|l| !l.trim().is_empty()) {
                let line: Value = match serde_json::from_str(line) {
                    Ok(v) => v,
                    Err(e) => return Reply::error("400 Bad Request", &format!("bad line: {e}")),
                };
                let id = line["custom_id"].as_str().unwrap_or_default().to_owned();
                requests.push((id, line["body"].clone()));
            }
            let id = new_batch(&mut batches, BatchKind::OpenAi, file_id, endpoint, requests);
            Reply::json("200 OK", &openai_batch(&id, &batches.batches[&id], server))
        }
        ("GET", ["batches", id]) => {
            if !batches.batches.contains_key(*id) {
                return Reply::error("404 Not Found", &format!("no batch {id}"));
            }
            settle(&mut batches, id, server);
            Reply::json("200 OK", &openai_batch(id, &batches.batches[*id], server))
        }
        ("POST", ["messages", "batches"]) => {
            let parsed: Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let requests: Vec<(String, Value)> = parsed["requests"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .map(|r| {
                            (
                                r["custom_id"].as_str().unwrap_or_default().to_owned(),
                                r["params"].clone(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let id = new_batch(
                &mut batches,
                BatchKind::Anthropic,
                String::new(),
                String::new(),
                requests,
            );
            Reply::json(
                "200 OK",
                &anthropic_batch(&id, &batches.batches[&id], server),
            )
        }
        ("GET", ["messages", "batches", id]) => {
            if !batches.batches.contains_key(*id) {
                return Reply::error("404 Not Found", &format!("no batch {id}"));
            }
            settle(&mut batches, id, server);
            Reply::json(
                "200 OK",
                &anthropic_batch(id, &batches.batches[*id], server),
            )
        }
        ("GET", ["messages", "batches", id, "results"]) => {
            match batches.batches.get(*id).and_then(|b| b.results.as_ref()) {
                Some((lines, _)) => Reply {
                    status: "200 OK",
                    headers: String::new(),
                    body: lines.iter().map(|l| format!("{l}\n")).collect(),
                    events: None,
                },
                None => Reply::error("404 Not Found", &format!("batch {id} has no results yet")),
            }
        }
        _ => {
            server.other.fetch_add(1, Ordering::Relaxed);
            Reply::error(
                "404 Not Found",
                &format!("no route for {} {path}", request.method),
            )
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Records a new batch and counts its requests (and any custom id seen before).
fn new_batch(
    batches: &mut Batches,
    kind: BatchKind,
    input_file_id: String,
    endpoint: String,
    requests: Vec<(String, Value)>,
) -> String {
    batches.next_id += 1;
    let id = match kind {
        BatchKind::OpenAi => format!("batch_fake{}", batches.next_id),
        BatchKind::Anthropic => format!("msgbatch_fake{}", batches.next_id),
    };
    batches.created += 1;
    for (custom_id, _) in &requests {
        batches.requests += 1;
        if !batches.seen.insert(custom_id.clone()) {
            batches.duplicates += 1;
        }
    }
    batches.batches.insert(
        id.clone(),
        FakeBatch {
            kind,
            created: Instant::now(),
            created_unix: unix_now(),
            input_file_id,
            endpoint,
            requests,
            results: None,
        },
    );
    id
}

/// Answers a batch's requests once its delay has passed.
fn settle(batches: &mut Batches, id: &str, server: &Server) {
    let Some(batch) = batches.batches.get(id) else {
        return;
    };
    if batch.results.is_some() || batch.created.elapsed() < server.batch_delay {
        return;
    }
    let (mut output, mut errors) = (Vec::new(), Vec::new());
    for (n, (custom_id, body)) in batch.requests.iter().enumerate() {
        let fail = server.batch_error_every > 0 && (n + 1) % server.batch_error_every == 0;
        match batch.kind {
            BatchKind::OpenAi => {
                let line = if fail {
                    json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                           "response": {"status_code": 500, "request_id": format!("req_{n}"),
                                        "body": {"error": {"message": "the fake failed this request", "type": "server_error"}}},
                           "error": null})
                } else {
                    let reply = complete(body, server);
                    let body: Value = serde_json::from_str(&reply.body).unwrap_or_default();
                    json!({"id": format!("batch_req_{n}"), "custom_id": custom_id,
                           "response": {"status_code": 200, "request_id": format!("req_{n}"), "body": body},
                           "error": null})
                };
                if fail { &mut errors } else { &mut output }.push(line.to_string());
            }
            BatchKind::Anthropic => {
                let result = if fail {
                    json!({"type": "errored", "error": {"type": "error",
                           "error": {"type": "api_error", "message": "the fake failed this request"}}})
                } else {
                    json!({"type": "succeeded", "message": anthropic_message(body, server)})
                };
                output.push(json!({"custom_id": custom_id, "result": result}).to_string());
            }
        }
    }
    let kind = batch.kind;
    if kind == BatchKind::OpenAi {
        for (name, lines) in [("out", &output), ("err", &errors)] {
            if !lines.is_empty() {
                batches.files.insert(
                    format!("file-{name}-{id}"),
                    lines.iter().map(|l| format!("{l}\n")).collect(),
                );
            }
        }
    }
    if let Some(batch) = batches.batches.get_mut(id) {
        batch.results = Some((output, errors));
    }
}

/// A chat completion's answer as an Anthropic message: the same move, in its shape.
fn anthropic_message(params: &Value, server: &Server) -> Value {
    let mut messages = params["messages"].as_array().cloned().unwrap_or_default();
    if let Some(system) = params["system"].as_str() {
        messages.insert(0, json!({"role": "system", "content": system}));
    }
    let reply = complete(
        &json!({"model": params["model"], "messages": messages}),
        server,
    );
    let body: Value = serde_json::from_str(&reply.body).unwrap_or_default();
    let text = body["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default();
    json!({
        "id": "msg_fake", "type": "message", "role": "assistant",
        "model": params["model"],
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": body["usage"]["prompt_tokens"], "output_tokens": body["usage"]["completion_tokens"]},
    })
}

/// An OpenAI batch object.
fn openai_batch(id: &str, batch: &FakeBatch, _server: &Server) -> Value {
    let done = batch.results.as_ref();
    let failed = done.map_or(0, |(_, e)| e.len());
    let completed = done.map_or(0, |(o, _)| o.len());
    json!({
        "id": id, "object": "batch", "endpoint": batch.endpoint,
        "input_file_id": batch.input_file_id, "completion_window": "24h",
        "status": if done.is_some() { "completed" } else { "in_progress" },
        "output_file_id": done.filter(|(o, _)| !o.is_empty()).map(|_| format!("file-out-{id}")),
        "error_file_id": done.filter(|(_, e)| !e.is_empty()).map(|_| format!("file-err-{id}")),
        "created_at": batch.created_unix,
        "request_counts": {"total": batch.requests.len(), "completed": completed, "failed": failed},
    })
}

/// An Anthropic message batch object.
fn anthropic_batch(id: &str, batch: &FakeBatch, server: &Server) -> Value {
    let done = batch.results.as_ref();
    let errored = done.map_or(0, |(o, _)| {
        o.iter().filter(|l| l.contains("\"errored\"")).count()
    });
    let total = batch.requests.len();
    json!({
        "id": id, "type": "message_batch",
        "processing_status": if done.is_some() { "ended" } else { "in_progress" },
        "request_counts": {
            "processing": if done.is_some() { 0 } else { total },
            "succeeded": if done.is_some() { total - errored } else { 0 },
            "errored": errored, "canceled": 0, "expired": 0,
        },
        "ended_at": null, "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
        "cancel_initiated_at": null,
        "results_url": done.map(|_| format!("{}/v1/messages/batches/{id}/results", server.origin)),
    })
}

/// The file of a `multipart/form-data` body (the part named `file`), as text.
fn multipart_file(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let delimiter = text.lines().next()?.trim_end();
    let closing = format!("\r\n{delimiter}");
    for part in text.split(delimiter) {
        if part.contains("name=\"file\"") {
            let start = part.find("\r\n\r\n")? + 4;
            let content = &part[start..];
            let end = content.find(&closing).unwrap_or(content.len());
            return Some(content[..end].trim_end_matches("\r\n").to_owned());
        }
    }
    None
}

/// What a request costs the token limit: its prompt's estimate (bytes / 4 + 1, as `usage`
/// reports it) plus its `max_tokens`.
fn token_cost(request: &Value) -> f64 {
    let prompt = request["messages"]
        .as_array()
        .map_or(0, |m| m.iter().map(|m| text_of(m).len()).sum::<usize>())
        / 4
        + 1;
    let max_tokens = request["max_tokens"]
        .as_u64()
        .or_else(|| request["max_completion_tokens"].as_u64())
        .unwrap_or(0);
    (prompt as u64 + max_tokens) as f64
}

/// The chat completion for one request.
fn complete(request: &Value, server: &Server) -> Reply {
    let Some(messages) = request["messages"].as_array() else {
        return Reply::error("400 Bad Request", "`messages` is missing");
    };
    let images = match images_in(messages) {
        Ok(n) => n,
        Err(why) => return Reply::error("400 Bad Request", &why),
    };
    server.images.fetch_add(images, Ordering::Relaxed);
    let texts: Vec<String> = messages.iter().map(text_of).collect();
    let fen = messages
        .iter()
        .zip(&texts)
        .rev()
        .filter(|(m, _)| m["role"] == "user")
        .find_map(|(_, text)| FEN.find_iter(text).last().map(|m| m.as_str().to_owned()));
    let listed = texts
        .iter()
        .zip(messages)
        .any(|(text, m)| m["role"] == "user" && LEGAL_LIST.is_match(text));
    let brief = messages
        .iter()
        .zip(&texts)
        .rev()
        .find(|(m, _)| m["role"] == "user")
        .is_some_and(|(_, text)| text.contains("briefly"));
    // `--think-if`: only a prompt that asks for the steps gets them.
    let asked = server.think_if.as_deref().is_none_or(|phrase| {
        messages.iter().zip(&texts).any(|(m, text)| {
            (m["role"] == "system" || m["role"] == "user") && text.to_lowercase().contains(phrase)
        })
    });
    let thinks = server.think_tokens > 0 && !brief && asked;
    // Drawn before the move, so that a seed gives the same lengths and moves in the same order.
    let think_tokens = match &server.think_if {
        Some(_) if thinks => {
            let n = server.think_tokens;
            let mut rng = server.rng.lock().unwrap_or_else(PoisonError::into_inner);
            rng.random_range(n.div_ceil(2)..=n + n / 2)
        }
        _ => server.think_tokens,
    };
    let better = thinks && server.think_better && server.fixed_answers.is_empty();
    let chosen = fen.as_deref().map(|fen| {
        if better {
            better_move(fen, server)
        } else {
            chosen_move(fen, !listed, server)
        }
    });
    let content = match chosen {
        Some(Ok(uci)) if better => {
            format!("I pick the move my steps found.\n```\n{uci}\n```")
        }
        Some(Ok(uci)) => format!("I pick a random legal move.\n```\n{uci}\n```"),
        Some(Err(why)) => format!("I cannot move: {why}."),
        None => "I see no FEN in your message.".to_owned(),
    };
    let (content, finish) = if thinks {
        think_then(&content, think_tokens, request)
    } else {
        (content, "stop")
    };
    let prompt_tokens = texts.iter().map(String::len).sum::<usize>() / 4 + 1;
    let completion_tokens = match finish {
        // Cut at the limit: exactly the limit was spent.
        "length" => content.len() / 4,
        _ => content.len() / 4 + 1,
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let n = server.completions.load(Ordering::Relaxed);
    Reply::json(
        "200 OK",
        &json!({
            "id": format!("chatcmpl-fake-{n}"),
            "object": "chat.completion",
            "created": created,
            "model": request["model"].as_str().unwrap_or("fake-random-mover"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }),
    )
}

/// `--think-tokens`: `answer` after about `tokens` tokens of step-by-step thinking, cut after the
/// request's `max_tokens` (4 bytes a token) when the whole is longer; with its finish reason.
fn think_then(answer: &str, tokens: usize, request: &Value) -> (String, &'static str) {
    const STEP: &str = "Let me think step by step about every candidate move. ";
    let thinking = STEP.repeat((tokens * 4).div_ceil(STEP.len()));
    let whole = format!("{thinking}\n{answer}");
    let limit = request["max_tokens"]
        .as_u64()
        .or_else(|| request["max_completion_tokens"].as_u64())
        .map(|n| n as usize * 4);
    match limit {
        // The text is ASCII: any byte is a char boundary.
        Some(limit) if limit < whole.len() => (whole[..limit].to_owned(), "length"),
        _ => (whole, "stop"),
    }
}

/// A message's text: a string, or the text parts of a content array.
/// The pictures in the messages' content parts, each an `image_url` whose URL is a base64 `data:`
/// URL of an image (as OpenAI takes them); a malformed one is refused, as OpenAI refuses it.
fn images_in(messages: &[Value]) -> Result<u64, String> {
    use base64::Engine as _;
    let mut count = 0;
    for part in messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
    {
        if part["type"] != "image_url" {
            continue;
        }
        let url = part["image_url"]["url"].as_str().unwrap_or_default();
        let data = url
            .strip_prefix("data:image/")
            .and_then(|rest| rest.split_once(";base64,"))
            .map(|(_, data)| data)
            .ok_or_else(|| format!("an image_url part that is not a base64 data URL: {url:.40}"))?;
        match base64::engine::general_purpose::STANDARD.decode(data) {
            Ok(bytes) if !bytes.is_empty() => count += 1,
            _ => return Err("an image_url part whose data is not base64".to_owned()),
        }
    }
    Ok(count)
}

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The next of `--answers` when it is set (legal or not), else [`random_move`].
fn chosen_move(fen: &str, blind: bool, server: &Server) -> Result<String, String> {
    if server.fixed_answers.is_empty() {
        return random_move(fen, blind, server);
    }
    let k = server.fixed_given.fetch_add(1, Ordering::Relaxed) as usize;
    Ok(server.fixed_answers[k % server.fixed_answers.len()].clone())
}

/// `--think-better`: a mate in one of `fen` if there is one, else the capture of the most valuable
/// piece (the first in shakmaty's move order among equals), else a random legal move.
fn better_move(text: &str, server: &Server) -> Result<String, String> {
    let fen: Fen = text.parse().map_err(|e| format!("bad FEN: {e}"))?;
    let position: Chess = fen
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("illegal position: {e}"))?;
    let legal = position.legal_moves();
    let mate = legal.iter().find(|m| {
        let mut after = position.clone();
        after.play_unchecked(**m);
        after.is_checkmate()
    });
    let capture = legal
        .iter()
        .filter(|m| m.capture().is_some())
        // `max_by_key` keeps the last of equals: reversed, that is the first in move order.
        .rev()
        .max_by_key(|m| match m.capture() {
            Some(shakmaty::Role::Queen) => 9,
            Some(shakmaty::Role::Rook) => 5,
            Some(shakmaty::Role::Knight | shakmaty::Role::Bishop) => 3,
            Some(shakmaty::Role::Pawn) => 1,
            _ => 0,
        });
    match mate.or(capture) {
        Some(m) => Ok(m.to_uci(CastlingMode::Standard).to_string()),
        None => random_move(text, false, server),
    }
}

/// A uniformly random legal move of `fen` in UCI, drawn from the server's generator; when
/// `blind`, an illegal move instead with probability `--blind-illegal`.
fn random_move(fen: &str, blind: bool, server: &Server) -> Result<String, String> {
    let fen: Fen = fen.parse().map_err(|e| format!("bad FEN: {e}"))?;
    let position: Chess = fen
        .into_position(CastlingMode::Standard)
        .map_err(|e| format!("illegal position: {e}"))?;
    let legal = position.legal_moves();
    if legal.is_empty() {
        return Err("the position has no legal move".to_owned());
    }
    let mut rng = server.rng.lock().unwrap_or_else(PoisonError::into_inner);
    if blind && server.blind_illegal > 0.0 && rng.random::<f64>() < server.blind_illegal {
        // A piece of the side to move sent to a square none of its legal moves reach.
        let uci: Vec<String> = legal
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        let from = &uci[rng.random_range(0..uci.len())][..2];
        let illegal: Vec<String> = shakmaty::Square::ALL
            .iter()
            .map(|to| format!("{from}{to}"))
            .filter(|m| !uci.contains(m) && &m[2..] != from)
            .collect();
        if !illegal.is_empty() {
            return Ok(illegal[rng.random_range(0..illegal.len())].clone());
        }
    }
    let i = rng.random_range(0..legal.len());
    Ok(legal[i].to_uci(CastlingMode::Standard).to_string())
}

/// The chat-completion chunks of a complete answer `body`, as OpenAI streams them.
fn chunks(body: &str, include_usage: bool) -> Vec<String> {
    let body: Value = serde_json::from_str(body).expect("the server's own answer is json");
    let chunk = |choices: Value, usage: Value| {
        json!({
            "id": body["id"],
            "object": "chat.completion.chunk",
            "created": body["created"],
            "model": body["model"],
            "choices": choices,
            "usage": usage,
        })
        .to_string()
    };
    let choice = &body["choices"][0];
    let delta = |delta: Value, finish: Value| {
        chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": finish}]),
            Value::Null,
        )
    };
    let mut events = vec![delta(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let content = choice["message"]["content"].as_str().unwrap_or_default();
    for word in content.split_inclusive(' ') {
        events.push(delta(json!({"content": word}), Value::Null));
    }
    // A tool call as OpenAI streams one: its id and name first, then its arguments in pieces.
    for (index, call) in choice["message"]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = &call["function"];
        events.push(delta(
            json!({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                   "function": {"name": function["name"], "arguments": ""}}]}),
            Value::Null,
        ));
        let arguments = function["arguments"].as_str().unwrap_or_default();
        let half = (arguments.len() / 2..=arguments.len())
            .find(|&i| arguments.is_char_boundary(i))
            .unwrap_or(arguments.len());
        for piece in [&arguments[..half], &arguments[half..]] {
            events.push(delta(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    events.push(delta(json!({}), choice["finish_reason"].clone()));
    if include_usage {
        events.push(chunk(json!([]), body["usage"].clone()));
    }
    events.push("[DONE]".to_owned());
    events
}

/// Writes a streamed reply as a chunked body, one event a chunk, cut or stalled as the server
/// was told. `false` when the connection must close.
async fn send_events(
    stream: &mut TcpStream,
    reply: &Reply,
    events: &[String],
    server: &Server,
) -> std::io::Result<bool> {
    let head = format!(
        "HTTP/1.1 {}\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n{}\r\n",
        reply.status, reply.headers,
    );
    stream.write_all(head.as_bytes()).await?;
    for (sent, data) in events.iter().enumerate() {
        if server.cut_stream_after > 0 && sent == server.cut_stream_after {
            return Ok(false);
        }
        if server.stall_stream_after > 0 && sent == server.stall_stream_after {
            // Silent until the client gives up and closes the connection.
            let mut byte = [0u8; 1];
            while stream.read(&mut byte).await? > 0 {}
            return Ok(false);
        }
        let event = format!("data: {data}\n\n");
        let chunk = format!("{:x}\r\n{event}\r\n", event.len());
        stream.write_all(chunk.as_bytes()).await?;
    }
    stream.write_all(b"0\r\n\r\n").await?;
    Ok(true)
}
