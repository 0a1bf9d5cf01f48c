//! The conformance suite: arena against the official SDKs (`openai`, `anthropic`,
//! `google-genai`, pinned in `scripts/prerequisites.sh`; see `tests/sdk/PROVENANCE.md`).
//!
//! `tests/sdk/replies.py` builds every format's replies (plain, reasoning, tools, tools with
//! reasoning, each also streamed) with the SDKs' own models and records what each SDK's own
//! client reads from them. Here the same bodies are served by wiremock to arena's real client,
//! which must read the same answer, reasoning, usage, finish reason and tool calls (from the
//! reply, and again from its stored body, as a resumed run reads them). Every
//! request arena sends on the way (a first turn, the tool dialog built from the reply it read,
//! a picture, each plain and streamed) is then validated by `tests/sdk/validate.py` against the
//! SDK's request type, unknown keys an error. The SDKs missing, the test skips, or fails under
//! `ARENA_REQUIRE_ALL=1`.

use std::{path::Path, process::Command, time::Duration};

use serde_json::{Value, json};
use wiremock::{Mock, MockServer, ResponseTemplate, matchers::method};

use super::*;

const TEST: &str = "providers::tests::sdk";

fn client() -> LlmClient {
    let _ = rustls::crypto::ring::default_provider().install_default();
    LlmClient::new().expect("http client")
}

/// The SDK-built cases, written by `replies.py` into `dir`; `None` after
/// [`arena_testkit::missing`] when the SDKs are not installed.
fn sdk_cases(dir: &Path) -> Option<Vec<Value>> {
    if !arena_testkit::python_sdks(TEST) {
        return None;
    }
    let script =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/sdk/replies.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(dir)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "replies.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut cases: Vec<Value> = std::fs::read_dir(dir)
        .expect("the cases")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let text = std::fs::read_to_string(&path).expect("a case");
            let mut case: Value = serde_json::from_str(&text).expect("a case is JSON");
            case["name"] = json!(path.file_stem().unwrap().to_string_lossy());
            case
        })
        .collect();
    cases.sort_by_key(|c| c["name"].as_str().unwrap_or_default().to_owned());
    assert!(cases.len() >= 28, "replies.py wrote {} cases", cases.len());
    Some(cases)
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            description: "List the moves you may play, in UCI notation.".into(),
            name: "get_legal_moves".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
        ToolSpec {
            description: "Play a move.".into(),
            name: "make_move".into(),
            parameters: json!({
                "type": "object",
                "properties": {"move": {"type": "string", "description": "UCI, e.g. e2e4"}},
                "required": ["move"],
            }),
        },
    ]
}

/// The first request of a case's shape: a system and a user message, every sampling setting
/// (each format drops those its API version lacks), reasoning and tools as the shape has them.
fn first_request(shape: &str) -> ChatRequest {
    ChatRequest {
        model: "conformance-model".into(),
        messages: vec![
            ChatMessage::new("system", "You play chess."),
            ChatMessage::new("user", "1. e4 c5. Your move?"),
        ],
        temperature: Some(0.7),
        top_p: Some(0.9),
        max_tokens: Some(2048),
        seed: Some(7),
        reasoning: shape
            .contains("reasoning")
            .then(|| Reasoning::effort("medium")),
        tools: if shape.starts_with("tools") {
            tools()
        } else {
            Vec::new()
        },
        ..ChatRequest::default()
    }
}

/// The request after `reply`: the dialog goes on with the reply's text and calls and a result
/// for each call (or, without calls, a user message with a picture of the board). As a game
/// builds it, a reply without calls brings back its thinking on the message, read from its
/// stored body.
fn next_request(provider: Provider, first: &ChatRequest, reply: &ChatReply) -> ChatRequest {
    let mut next = first.clone();
    let mut message = ChatMessage::assistant(reply.content.clone(), reply.tool_calls.clone());
    if reply.tool_calls.is_empty() {
        message.thinking = provider.stored_thinking(&reply.raw_body);
    }
    next.messages.push(message);
    if reply.tool_calls.is_empty() {
        next.messages.push(
            ChatMessage::new("user", "The board now. Your move?")
                .with_image(Image::new("image/png", b"\x89PNG\r\n\x1a\n".to_vec())),
        );
    }
    for call in &reply.tool_calls {
        next.messages
            .push(ChatMessage::tool_result(&call.id, "a2a3,a2a4,e2e4"));
    }
    next
}

fn provider_of(case: &Value) -> Provider {
    case["format"]
        .as_str()
        .expect("a format")
        .parse()
        .expect("a known format")
}

/// What arena read, in the terms `replies.py` records what the SDK read.
fn arena_read(provider: Provider, reply: &ChatReply) -> Value {
    let usage = reply.usage.as_ref().map(|u| {
        json!({
            "prompt": u.prompt_tokens,
            "completion": u.completion_tokens,
            "total": u.total_tokens,
            "reasoning": u.reasoning_tokens,
            "cached": u.cached_tokens,
            "cache_write": u.cache_write_tokens,
        })
    });
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "name": c.name,
                "arguments": serde_json::from_str::<Value>(&c.arguments).unwrap_or(json!(c.arguments)),
            })
        })
        .collect();
    let mut read = json!({
        "content": reply.content,
        "reasoning": reply.reasoning,
        "finish_reason": reply.finish_reason,
        "usage": usage,
        "tool_calls": calls,
    });
    // With calls, what goes back rides on the first; without, it is read from the stored body
    // (what a game's dialog and a resumed run carry, see `next_request`).
    let carried = match reply.tool_calls.first() {
        Some(first) => first.thinking.clone(),
        None => provider.stored_thinking(&reply.raw_body),
    };
    match provider {
        Provider::OpenAiResponses => read["reasoning_items"] = json!(carried),
        Provider::Anthropic => read["thinking_blocks"] = json!(carried),
        Provider::Gemini => {
            read["signatures"] = json!(
                reply
                    .tool_calls
                    .iter()
                    .map(|c| c.signature.clone())
                    .collect::<Vec<_>>()
            );
        }
        _ => {}
    }
    read
}

/// What the SDK read.
fn sdk_read(case: &Value) -> Value {
    case["read"].clone()
}

#[tokio::test]
async fn arena_reads_what_the_sdks_read_and_sends_what_their_types_allow() {
    formats();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let Some(cases) = sdk_cases(&dir.path().join("cases")) else {
        return;
    };
    let client = client();
    let mut mismatches = Vec::new();
    let mut sent: Vec<(Provider, String, Value)> = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().expect("a name").to_owned();
        let provider = provider_of(case);
        let stream = case["stream"].as_bool().expect("stream");
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                case["body"].as_str().expect("a body").as_bytes().to_vec(),
                case["content_type"].as_str().expect("a content type"),
            ))
            .mount(&server)
            .await;
        let base = match provider {
            Provider::Gemini => format!("{}/v1beta", server.uri()),
            _ => format!("{}/v1", server.uri()),
        };
        let endpoint = Endpoint {
            provider,
            stream,
            timeout: Duration::from_secs(10),
            retry: RetryPolicy {
                max_attempts: 1,
                give_up_after: Duration::ZERO,
                ..RetryPolicy::default()
            },
            ..Endpoint::new(base)
        };
        let first = first_request(case["shape"].as_str().expect("a shape"));
        let reply = client
            .chat(&endpoint, &first)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (ours, theirs) = (arena_read(provider, &reply), sdk_read(case));
        if ours != theirs {
            mismatches.push(format!(
                "{name}:\n  arena read {ours}\n  the SDK read {theirs}"
            ));
        }
        // A resumed run reads the calls (and what goes back with them) again from the stored
        // body: the same as the reply had.
        let stored = provider.stored_tool_calls(&reply.raw_body);
        if stored != reply.tool_calls {
            mismatches.push(format!(
                "{name}: read again from the stored body, the calls are {stored:?}, not {:?}",
                reply.tool_calls
            ));
        }
        // The dialog goes on from what arena read: its calls (and what must go back with
        // them) or a picture.
        let next = next_request(provider, &first, &reply);
        client
            .chat(&endpoint, &next)
            .await
            .unwrap_or_else(|e| panic!("{name}, second turn: {e}"));
        let requests = server.received_requests().await.expect("recorded requests");
        for (turn, request) in requests.iter().enumerate() {
            let body: Value = serde_json::from_slice(&request.body).expect("a JSON request");
            sent.push((provider, format!("{name}_turn{turn}"), body));
        }
        // What must go back went back, as the SDK read it.
        let second: Value = serde_json::from_slice(&requests[1].body).expect("JSON");
        match provider {
            // Text dialogs and tool dialogs alike.
            Provider::Anthropic => {
                let assistant = second["messages"]
                    .as_array()
                    .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
                    .expect("the assistant turn");
                // A text turn without thinking is sent as a plain string.
                let carried: Vec<&Value> = assistant["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking")
                    .collect();
                let expected: Vec<&Value> = case["read"]["thinking_blocks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .collect();
                if carried != expected {
                    mismatches.push(format!(
                        "{name}: the thinking sent back is {carried:?}, the SDK read {expected:?}"
                    ));
                }
                if !expected.is_empty() && assistant["content"][0]["type"] != "thinking" {
                    mismatches.push(format!(
                        "{name}: the assistant turn sent back does not open with its thinking"
                    ));
                }
            }
            Provider::OpenAiResponses if !reply.tool_calls.is_empty() => {
                let input = second["input"].as_array().expect("input items");
                let back: Vec<&Value> = input.iter().filter(|i| i["type"] == "reasoning").collect();
                let expected: Vec<&Value> = case["read"]["reasoning_items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .collect();
                if back != expected {
                    mismatches.push(format!(
                        "{name}: the reasoning items sent back are {back:?}, the SDK read {expected:?}"
                    ));
                }
                let first_of = |kind: &str| input.iter().position(|i| i["type"] == kind);
                if !expected.is_empty() && first_of("reasoning") > first_of("function_call") {
                    mismatches.push(format!(
                        "{name}: the reasoning items go after the calls they led to"
                    ));
                }
            }
            Provider::Gemini if !reply.tool_calls.is_empty() => {
                let model_turn = second["contents"]
                    .as_array()
                    .and_then(|c| c.iter().find(|c| c["role"] == "model"))
                    .expect("the model turn");
                let signatures: Vec<Value> = model_turn["parts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|p| p.get("functionCall").is_some())
                    .map(|p| p.get("thoughtSignature").cloned().unwrap_or(Value::Null))
                    .collect();
                if json!(signatures) != case["read"]["signatures"] {
                    mismatches.push(format!(
                        "{name}: the thought signatures sent back are {signatures:?}, the SDK read {}",
                        case["read"]["signatures"]
                    ));
                }
            }
            _ => {}
        }
    }
    // Both halves report in full before either fails.
    let refused = validate(dir.path(), &sent);
    assert!(
        mismatches.is_empty() && refused.is_empty(),
        "arena read or sent back otherwise than the SDKs:\n{}\nrequests the SDKs' types refuse:\n{}",
        mismatches.join("\n"),
        refused.join("\n")
    );
}

/// Writes every request and has `validate.py` check them against the SDKs' request types: what
/// it refused, per format.
fn validate(dir: &Path, sent: &[(Provider, String, Value)]) -> Vec<String> {
    let script =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/sdk/validate.py");
    let mut failures = Vec::new();
    for provider in Provider::ALL {
        let folder = dir.join("requests").join(provider.name());
        std::fs::create_dir_all(&folder).expect("a folder");
        let files: Vec<_> = sent
            .iter()
            .filter(|(p, _, _)| *p == provider)
            .map(|(_, name, body)| {
                let path = folder.join(format!("{name}.json"));
                std::fs::write(&path, serde_json::to_vec_pretty(body).unwrap()).expect("written");
                path
            })
            .collect();
        assert!(!files.is_empty(), "no request of {provider} was sent");
        let out = Command::new("python3")
            .arg(&script)
            .arg(provider.name())
            .args(&files)
            .output()
            .expect("python3 runs");
        if !out.status.success() {
            failures.push(format!(
                "{provider}:\n{}{}",
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| !l.starts_with("ok "))
                    .collect::<Vec<_>>()
                    .join("\n"),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    failures
}
