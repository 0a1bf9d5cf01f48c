//! `arena eval --batch` against the fake server's batch endpoints (OpenAI's files and batches,
//! Anthropic's message batches): submitted, killed with SIGKILL while polling, resumed and
//! completed, with every item's answer stored once and no request submitted twice.

use std::{
    path::PathBuf,
    process::Stdio,
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::common::{TestDir, fake_openai_with, stderr};

/// Copies the CC0 position sample next to the test's scripts.
fn with_book(dir: &TestDir) {
    let book = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tournaments/data/popularpos_sample.epd"),
    )
    .expect("the position sample is in the repository");
    dir.write("data/book.epd", &book);
}

/// Six basic-understanding and four board-reconstruction items for one model of `provider`.
fn script(url: &str, provider: &str) -> String {
    format!(
        r#"local arena = require("arena")
return arena.evaluation {{
  name = "batched", seed = 7,
  tasks = {{
    {{ task = "basic_understanding", build = {{ book = "data/book.epd", count = 6 }} }},
    {{ task = "board_reconstruction", build = {{ count = 4, plies = 2 }} }},
  }},
  players = {{
    arena.llm {{ name = "model", base_url = "{url}", model = "fake-random-mover",
                provider = "{provider}", max_tokens = 64, outage_s = 0 }},
  }},
}}"#
    )
}

/// The fake server's `GET /stats`, whole.
fn stats(url: &str) -> Value {
    use std::io::{Read, Write};
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("an http URL");
    let mut stream = std::net::TcpStream::connect(address).expect("the fake server answers");
    stream
        .write_all(b"GET /stats HTTP/1.1\r\nHost: fake\r\nConnection: close\r\n\r\n")
        .expect("the request is sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a reply");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).expect("JSON stats")
}

fn eval_batch(dir: &TestDir) -> std::process::Command {
    let mut cmd = dir.arena();
    cmd.args([
        "eval",
        "e.lua",
        "--db",
        "t.db",
        "--batch",
        "--batch-poll",
        "0.1",
    ]);
    cmd
}

/// Starts a batch evaluation, kills it with SIGKILL once its batch is in the store (it is then
/// polling), resumes it to the end and checks the store and the server's counts.
fn killed_while_polling_then_resumed(provider: &str) {
    let fake = fake_openai_with(0, &["--batch-delay-ms", "2500"]);
    let dir = TestDir::new();
    with_book(&dir);
    dir.write("e.lua", &script(&fake.url, provider));
    let mut child = eval_batch(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("arena starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "no batch was stored in time");
        if let Some(status) = child.try_wait().expect("child status") {
            panic!("the run ended before its batch was stored: {status}");
        }
        if let Ok(store) = arena::store::Store::open(&dir.db())
            && let Ok(Some(run)) = store.find_eval_run("batched")
            && store.eval_batches(run.id).is_ok_and(|b| !b.is_empty())
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("the killed run is reaped");
    let before = stats(&fake.url);
    assert_eq!(before["batches"], 1, "{before}");
    assert_eq!(before["batch_requests"], 10, "{before}");

    let out = eval_batch(&dir).output().expect("arena runs");
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("waiting for 10 item call(s)"), "{log}");
    assert!(
        log.contains("batch answers of `model`: 10"),
        "the spend line counts the batch answers: {log}"
    );

    let after = stats(&fake.url);
    assert_eq!(
        after["batches"], 1,
        "the resumed run polled the same batch: {after}"
    );
    assert_eq!(after["batch_requests"], 10, "{after}");
    assert_eq!(after["batch_duplicates"], 0, "{after}");
    assert_eq!(
        after["chat_completions"], 0,
        "no item was asked one by one: {after}"
    );

    let store = arena::store::Store::open(&dir.db()).expect("the store opens");
    let run = store.find_eval_run("batched").unwrap().unwrap();
    for (task, items) in [("basic_understanding", 6u32), ("board_reconstruction", 4)] {
        assert_eq!(
            store.eval_results(run.id, task).unwrap().len(),
            items as usize
        );
        for idx in 0..items {
            let replies = store.eval_replies(run.id, task, "model", idx).unwrap();
            assert_eq!(replies.len(), 1, "{task} item {idx}: {replies:?}");
            assert!(replies[0].prompt_json.is_some());
            assert!(replies[0].prompt_tokens.is_some(), "usage is kept");
        }
    }
    let batches = store.eval_batches(run.id).unwrap();
    assert_eq!(batches.len(), 1);
    assert!(batches[0].ended);
    assert!(
        batches[0]
            .items
            .iter()
            .all(|i| i.outcome.as_deref() == Some("answered"))
    );
    let usage = store.eval_batch_usage(run.id).unwrap();
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].answers, 10);
}

#[test]
fn an_openai_batch_killed_while_polling_resumes_without_resubmitting() {
    killed_while_polling_then_resumed("openai_chat");
}

#[test]
fn an_anthropic_batch_killed_while_polling_resumes_without_resubmitting() {
    killed_while_polling_then_resumed("anthropic");
}

#[test]
fn failed_batch_requests_are_asked_one_by_one_never_scored_as_failures() {
    // Every third request of the batch fails as a provider fault: those three calls are asked
    // interactively afterwards, and every item is scored from a real answer.
    let fake = fake_openai_with(0, &["--batch-delay-ms", "200", "--batch-error-every", "3"]);
    let dir = TestDir::new();
    with_book(&dir);
    dir.write("e.lua", &script(&fake.url, "openai_chat"));
    let out = eval_batch(&dir).output().expect("arena runs");
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("3 call(s) left to ask one by one"), "{log}");
    let after = stats(&fake.url);
    assert_eq!(
        after["batches"], 1,
        "failed calls are not resubmitted: {after}"
    );
    assert_eq!(after["batch_duplicates"], 0, "{after}");
    assert_eq!(after["chat_completions"], 3, "{after}");
    let store = arena::store::Store::open(&dir.db()).expect("the store opens");
    let run = store.find_eval_run("batched").unwrap().unwrap();
    assert_eq!(store.eval_batch_usage(run.id).unwrap()[0].answers, 7);
    for (task, items) in [("basic_understanding", 6u32), ("board_reconstruction", 4)] {
        assert_eq!(
            store.eval_results(run.id, task).unwrap().len(),
            items as usize
        );
        for idx in 0..items {
            let replies = store.eval_replies(run.id, task, "model", idx).unwrap();
            assert_eq!(replies.len(), 1, "{task} item {idx}");
        }
    }
}

#[test]
fn a_wire_format_without_a_batch_api_is_refused_by_check_and_eval() {
    let dir = TestDir::new();
    with_book(&dir);
    dir.write("e.lua", &script("http://127.0.0.1:9/v1", "gemini"));
    let out = dir
        .arena()
        .args(["check", "e.lua", "--batch"])
        .output()
        .expect("arena runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("player `model` cannot use --batch: the gemini wire format has no batch API"),
        "{}",
        stderr(&out)
    );
    let out = dir
        .arena()
        .args(["check", "e.lua"])
        .output()
        .expect("arena runs");
    assert!(
        out.status.success(),
        "without --batch the script is fine: {}",
        stderr(&out)
    );
    let out = eval_batch(&dir).output().expect("arena runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the gemini wire format has no batch API"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_azure_player_is_refused_by_check_and_eval_with_batch() {
    let dir = TestDir::new();
    with_book(&dir);
    let azure = script("http://127.0.0.1:9/openai", "openai")
        .replace("outage_s = 0 }", "outage_s = 0, azure = true }");
    assert!(azure.contains("azure = true"), "{azure}");
    dir.write("e.lua", &azure);
    let out = dir
        .arena()
        .args(["check", "e.lua", "--batch"])
        .output()
        .expect("arena runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "player `model` cannot use --batch: Azure OpenAI (`azure = true`) has no batch support"
        ),
        "{}",
        stderr(&out)
    );
    let out = dir
        .arena()
        .args(["check", "e.lua"])
        .output()
        .expect("arena runs");
    assert!(
        out.status.success(),
        "without --batch the script is fine: {}",
        stderr(&out)
    );
    let out = eval_batch(&dir).output().expect("arena runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Azure OpenAI (`azure = true`) has no batch support"),
        "{}",
        stderr(&out)
    );
}
