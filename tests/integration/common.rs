//! Shared helpers: a temporary tournament folder, the arena command, and the real parts.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// A temporary folder holding tournament scripts and their store.
pub struct TestDir {
    dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> TestDir {
        TestDir {
            dir: tempfile::tempdir().expect("a temporary folder"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `content` to `name` (creating folders) and returns its path.
    pub fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create folder");
        }
        std::fs::write(&path, content).expect("write file");
        path
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("t.db")
    }

    /// `arena ARGS` run in this folder, with logs kept quiet except for what tests read.
    pub fn arena(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_arena"));
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// Runs `arena run SCRIPT --db t.db --no-watch`.
    pub fn run(&self, script: &str) -> Output {
        self.arena()
            .args(["run", script, "--db", "t.db", "--no-watch"])
            .output()
            .expect("arena runs")
    }
}

/// Whether `arena run` finished with nothing left to play: exit code 0, or 3 when its games
/// compared no chess (a model that never got a move read, as the tests of failure paths and
/// the tiny local model often make; see `cut_off.rs`).
pub fn finished(status: std::process::ExitStatus) -> bool {
    matches!(status.code(), Some(0 | 3))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The local model's base URL, or `None` (with a note) when the tests run without it.
pub fn local_llm(test: &str) -> Option<String> {
    arena_testkit::local_llm(test)
}

/// Whether Stockfish can be found (with a note when it cannot).
pub fn stockfish(test: &str) -> bool {
    arena::engine::locate::for_test(test, "stockfish").is_some()
}

/// An LLM player entry for the local model.
pub fn llm_player(url: &str, name: &str, options: &str) -> String {
    format!(
        r#"arena.llm {{
      name = "{name}", base_url = "{url}", model = "smollm2-135m-instruct",
      temperature = 0.7, max_tokens = 48, max_concurrency = 1, timeout_s = 300,
      options = {{ {options} }},
    }}"#
    )
}

/// Reads the store of a finished test run.
pub fn open_store(path: &Path) -> arena::store::Store {
    arena::store::Store::open(path).expect("the store opens")
}

/// Starts `arena run t.lua --db t.db --no-watch` in `dir`, its stderr going to `stderr`.
pub fn start_run(dir: &TestDir, stderr: std::process::Stdio) -> std::process::Child {
    dir.arena()
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("arena starts")
}

/// Waits until `ready(store, tournament id)` holds for the tournament `name` of the running
/// `child`. Fails if the run ends first or nothing happens in `patience`.
pub fn wait_for_store(
    dir: &TestDir,
    child: &mut std::process::Child,
    name: &str,
    patience: std::time::Duration,
    ready: impl Fn(&arena::store::Store, i64) -> bool,
) {
    let deadline = std::time::Instant::now() + patience;
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "`{name}` did not reach the awaited point in {patience:?}"
        );
        if let Some(status) = child.try_wait().expect("child status") {
            panic!("the run ended before the awaited point: {status}");
        }
        if dir.db().exists()
            && let Ok(store) = arena::store::Store::open(&dir.db())
            && let Ok(Some(t)) = store.find_tournament(name)
            && ready(&store, t.id)
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Starts `arena run t.lua --db t.db --no-watch` in `dir`, stderr to `first.log`, and kills it
/// with SIGKILL as soon as `ready(store, tournament id)` holds for the tournament `name`: the
/// `kill -9` of the resume tests. Fails if the run ends first or nothing happens in `patience`.
pub fn run_then_kill(
    dir: &TestDir,
    name: &str,
    patience: std::time::Duration,
    ready: impl Fn(&arena::store::Store, i64) -> bool,
) {
    let log = std::fs::File::create(dir.path().join("first.log")).expect("log file");
    let mut child = start_run(dir, log.into());
    wait_for_store(dir, &mut child, name, patience, ready);
    child.kill().expect("SIGKILL");
    child.wait().expect("the killed run is reaped");
}

/// The PostgreSQL server of the shared-store tests, or `None` (with a note) without it.
pub fn postgres(test: &str) -> Option<String> {
    arena_testkit::postgres(test)
}

/// `examples/fake_openai.rs` on a free port, answering after `latency_ms` (built first if
/// `cargo test` has not built the examples).
pub fn fake_openai(latency_ms: u64) -> arena_testkit::FakeOpenAi {
    fake_openai_with(latency_ms, &[])
}

/// [`fake_openai`] with more of its flags (`["--blind-illegal", "0.3"]`).
pub fn fake_openai_with(latency_ms: u64, extra: &[&str]) -> arena_testkit::FakeOpenAi {
    let bin = Path::new(env!("CARGO_BIN_EXE_arena"))
        .parent()
        .expect("the binary's folder")
        .join("examples/fake_openai");
    // Built once per test run, even when a binary is there: `cargo test --test integration` alone
    // does not build the examples, and a binary left from an older checkout lacks newer flags.
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "--example", "fake_openai"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build --example fake_openai failed");
    });
    arena_testkit::FakeOpenAi::start_with(&bin, latency_ms, extra)
}

/// The rows of a table in a `--format json` document: the first table whose `kind` is `name`,
/// or whose title is `name` or ends with ` · name` (a tournament's table).
pub fn json_rows<'a>(doc: &'a serde_json::Value, name: &str) -> &'a Vec<serde_json::Value> {
    let suffix = format!(" · {name}");
    doc["tables"]
        .as_array()
        .and_then(|tables| {
            tables.iter().find(|t| {
                t["kind"] == name
                    || t["title"] == name
                    || t["title"].as_str().is_some_and(|s| s.ends_with(&suffix))
            })
        })
        .and_then(|t| t["rows"].as_array())
        .unwrap_or_else(|| panic!("no table `{name}` in {doc}"))
}
