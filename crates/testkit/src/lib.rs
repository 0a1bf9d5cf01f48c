//! The real parts the tests need, and what a test does when one is missing.
//!
//! Tests run against the real parts: the anchors' reference data (`ARENA_REFERENCE_DATA`), the
//! local model (`LOCAL_LLM_URL`), Stockfish and Debian's other engines, python-chess. A test
//! whose part is missing must not pass silently: with `ARENA_REQUIRE_ALL=1` (which `.ci/run`
//! sets) it fails with a message that names the part; otherwise it prints that it skips and
//! returns early, so a developer without the parts can still run the rest. Every test that needs
//! a part asks through these functions (engines through `engine::locate::for_test`, which reports
//! through [`missing`]), unit and integration tests alike.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
};

/// The environment variable that turns a missing part into a test failure.
pub const REQUIRE_ALL: &str = "ARENA_REQUIRE_ALL";

/// Whether every part is required (`ARENA_REQUIRE_ALL` set to anything but empty or `0`).
pub fn required() -> bool {
    std::env::var(REQUIRE_ALL).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Reports that `test` cannot run because `part` is missing (`how` says how to get it): panics
/// under [`REQUIRE_ALL`], else prints the skip.
///
/// # Panics
/// When every part is required.
pub fn missing(test: &str, part: &str, how: &str) {
    match verdict(required(), test, part, how) {
        Verdict::Fail(message) => panic!("{message}"),
        Verdict::Skip(message) => eprintln!("{message}"),
    }
}

/// What a missing part means for a test.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Fail(String),
    Skip(String),
}

fn verdict(required: bool, test: &str, part: &str, how: &str) -> Verdict {
    if required {
        Verdict::Fail(format!(
            "{test} needs {part}, which is missing ({how}); {REQUIRE_ALL} is set"
        ))
    } else {
        Verdict::Skip(format!("skipping {test}: {part} is missing ({how})"))
    }
}

/// The reference data folder, or `None` after [`missing`].
pub fn reference_data(test: &str) -> Option<PathBuf> {
    match std::env::var_os("ARENA_REFERENCE_DATA") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => {
            missing(
                test,
                "the reference data",
                "set ARENA_REFERENCE_DATA to ../shared/data; scripts/test.sh does",
            );
            None
        }
    }
}

/// The local model's base URL, or `None` after [`missing`].
pub fn local_llm(test: &str) -> Option<String> {
    match std::env::var("LOCAL_LLM_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            missing(
                test,
                "the local model",
                "set LOCAL_LLM_URL; scripts/test.sh starts the model and sets it",
            );
            None
        }
    }
}

/// Whether python3 with python-chess runs, or `false` after [`missing`].
pub fn python_chess(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import chess.pgn"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        missing(
            test,
            "python-chess",
            "pip install chess; scripts/prerequisites.sh --tests does",
        );
    }
    ok
}

/// Whether python3 with the official provider SDKs (`openai`, `anthropic`, `google-genai`)
/// runs, or `false` after [`missing`]: the conformance suite's reference.
pub fn python_sdks(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import openai, anthropic, google.genai"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        missing(
            test,
            "a python3 with the provider SDKs (openai, anthropic, google-genai)",
            "scripts/prerequisites.sh --tests installs them",
        );
    }
    ok
}

/// `examples/fake_openai.rs` (the binary at `bin`) running on a free port: a fake
/// OpenAI-compatible server that answers a random legal move after `latency_ms`, for tests and
/// benchmarks that need many model calls but no model. Stopped when dropped.
#[derive(Debug)]
pub struct FakeOpenAi {
    child: std::process::Child,
    /// Its base URL, for an `arena.llm` player.
    pub url: String,
}

impl FakeOpenAi {
    /// Starts the server and waits until it listens.
    ///
    /// # Panics
    /// If it does not start.
    pub fn start(bin: &std::path::Path, latency_ms: u64) -> FakeOpenAi {
        FakeOpenAi::start_with(bin, latency_ms, &[])
    }

    /// [`FakeOpenAi::start`] with more of its flags (`["--blind-illegal", "0.3"]`).
    ///
    /// # Panics
    /// If it does not start.
    pub fn start_with(bin: &std::path::Path, latency_ms: u64, extra: &[&str]) -> FakeOpenAi {
        use std::io::BufRead;
        let mut child = Command::new(bin)
            .args(["--port", "0", "--latency-ms", &latency_ms.to_string()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("the fake server `{}` does not start: {e}", bin.display()));
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().expect("stdout is piped"))
            .read_line(&mut line)
            .expect("the fake server says where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the fake server: {line:?}"))
            .to_owned();
        FakeOpenAi { child, url }
    }

    /// How many chat completions the server has been asked for so far (its `GET /stats`).
    ///
    /// # Panics
    /// If it does not answer.
    pub fn asked(&self) -> u64 {
        self.stats().asked
    }

    /// The server's counts so far (its `GET /stats`).
    ///
    /// # Panics
    /// If it does not answer.
    pub fn stats(&self) -> FakeStats {
        use std::io::{Read, Write};
        let address = self
            .url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("unexpected fake server URL {}", self.url));
        let mut stream = std::net::TcpStream::connect(address).expect("the fake server answers");
        stream
            .write_all(b"GET /stats HTTP/1.1\r\nHost: fake\r\nConnection: close\r\n\r\n")
            .expect("the fake server takes the request");
        let mut response = String::new();
        stream
            .read_to_string(&mut response)
            .expect("the fake server replies");
        let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        let stats: serde_json::Value = serde_json::from_str(body)
            .unwrap_or_else(|_| panic!("the fake server's stats do not read: {response}"));
        let count = |name: &str| {
            stats[name]
                .as_u64()
                .unwrap_or_else(|| panic!("the fake server's stats lack `{name}`: {response}"))
        };
        FakeStats {
            asked: count("chat_completions"),
            answers: count("answers"),
            rate_limited: count("rate_limited"),
            images: count("images"),
        }
    }

    /// Stops the server (SIGTERM, so that it reports) and returns how many chat completions it
    /// served.
    ///
    /// # Panics
    /// If it does not say.
    pub fn stop(mut self) -> u64 {
        use std::io::Read;
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let mut log = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut log);
        }
        let _ = self.child.wait();
        log.lines()
            .find_map(|l| l.strip_prefix("fake_openai: served "))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the fake server did not say what it served: {log}"))
    }
}

/// The counts of a [`FakeOpenAi`] (its `GET /stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FakeStats {
    /// Chat completions asked for.
    pub asked: u64,
    /// Chat completions answered with a reply.
    pub answers: u64,
    /// Chat completions refused with 429 (past its `--rpm`/`--tpm`).
    pub rate_limited: u64,
    /// Pictures received in the requests' content parts.
    pub images: u64,
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test PostgreSQL server's URL (`ARENA_TEST_POSTGRES`, as `scripts/postgres.sh start`
/// prints it), or `None` after [`missing`].
pub fn postgres(test: &str) -> Option<String> {
    match std::env::var("ARENA_TEST_POSTGRES") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim().to_string()),
        _ => {
            missing(
                test,
                "the PostgreSQL test server",
                "run scripts/postgres.sh start and set ARENA_TEST_POSTGRES to the URL it prints; scripts/test.sh does",
            );
            None
        }
    }
}

/// An empty database of its own on the test server, dropped when this goes out of scope (a
/// test that fails leaves nothing behind for the next run to trip on).
#[derive(Debug)]
pub struct FreshDatabase {
    /// The URL of the new database (the server's URL with its database name replaced).
    pub url: String,
    server: String,
    name: String,
}

impl FreshDatabase {
    /// Creates a database named after `test` and this process on the server at `server` (a URL
    /// of any database there, such as [`postgres`] returns). Needs no runtime: the `postgres`
    /// client runs on a thread of its own.
    ///
    /// # Panics
    /// If the server refuses: a test that found its server must not quietly skip.
    pub fn create(server: &str, test: &str) -> FreshDatabase {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let slug: String = test
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(30)
            .collect();
        let name = format!(
            "t_{slug}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        // Two round trips: neither statement may run inside a (multi-statement) transaction.
        let created = admin(
            server,
            &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        )
        .and_then(|()| admin(server, &format!("CREATE DATABASE \"{name}\"")));
        if let Err(e) = created {
            panic!("cannot create database `{name}` for {test} on the test PostgreSQL server: {e}");
        }
        FreshDatabase {
            url: with_database(server, &name),
            server: server.to_owned(),
            name,
        }
    }
}

impl Drop for FreshDatabase {
    fn drop(&mut self) {
        // Best effort: a database left behind holds one test's rows on a throwaway server.
        let _ = admin(
            &self.server,
            &format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name),
        );
    }
}

/// `url` with its database name replaced by `name` (its query string kept).
fn with_database(url: &str, name: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let query_at = rest.find('?').unwrap_or(rest.len());
    let (before, query) = rest.split_at(query_at);
    let host = before.split_once('/').map_or(before, |(host, _)| host);
    format!("{scheme}://{host}/{name}{query}")
}

/// Runs `sql` on the server at `url`, outside any runtime (the client starts its own).
pub fn admin(url: &str, sql: &str) -> Result<(), postgres::Error> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut client = postgres::Client::connect(url, postgres::NoTls)?;
            client.batch_execute(sql)
        })
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_part_fails_when_every_part_is_required_and_skips_otherwise() {
        assert_eq!(
            verdict(true, "t", "the local model", "start it"),
            Verdict::Fail(
                "t needs the local model, which is missing (start it); ARENA_REQUIRE_ALL is set"
                    .into()
            )
        );
        assert_eq!(
            verdict(false, "t", "the local model", "start it"),
            Verdict::Skip("skipping t: the local model is missing (start it)".into())
        );
    }

    #[test]
    fn a_fresh_database_url_keeps_the_server_and_the_options() {
        assert_eq!(
            with_database("postgres://arena@127.0.0.1:55432/arena", "t_x"),
            "postgres://arena@127.0.0.1:55432/t_x"
        );
        assert_eq!(
            with_database("postgresql://u@h/db?sslmode=disable", "n"),
            "postgresql://u@h/n?sslmode=disable"
        );
        assert_eq!(with_database("postgres://u@h", "n"), "postgres://u@h/n");
    }
}
