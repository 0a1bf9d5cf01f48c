//! Tool calling in each wire format, pinned by golden files under `crates/llm/src/fixtures/tools/`: the
//! request arena sends for one agentic turn through tools (tools offered, an earlier call and its
//! result in the conversation) and what it reads from each provider's tool-calling reply. A
//! change of either shape fails with the file to look at; `ARENA_BLESS=1 cargo test -p
//! arena-providers --lib tests::tools` writes the files instead (review the diff before committing it).

use std::path::Path;

use serde_json::{Value, json};

use super::*;

const FIXTURES: &str = "crates/llm/src/fixtures/tools";

/// A ply through tools: the model asked for the legal moves (with a word of text), got them, and
/// is asked again; a second call of the same reply was answered with a note.
fn request() -> ChatRequest {
    let calls = vec![
        ToolCall {
            arguments: "{}".into(),
            id: "call_1".into(),
            name: "get_legal_moves".into(),
            signature: None,
            thinking: Vec::new(),
        },
        ToolCall {
            arguments: r#"{"move":"e2e4"}"#.into(),
            id: "call_2".into(),
            name: "make_move".into(),
            signature: None,
            thinking: Vec::new(),
        },
    ];
    ChatRequest {
        model: "m".into(),
        messages: vec![
            ChatMessage::new("system", "You play chess."),
            ChatMessage::new("user", "It is your move. Act through your tools."),
            ChatMessage::assistant("Let me look first.", calls),
            ChatMessage::tool_result("call_1", "a2a3,a2a4,e2e4"),
            ChatMessage::tool_result("call_2", "Not carried out: call one tool at a time."),
        ],
        max_tokens: Some(256),
        tools: vec![
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
        ],
        ..ChatRequest::default()
    }
}

/// Compares `text` with the golden file `name`, or writes it under `ARENA_BLESS=1`.
fn golden(name: &str, text: &str) {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join(FIXTURES)
        .join(name);
    if std::env::var("ARENA_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{FIXTURES}/{name}: {e} (ARENA_BLESS=1 writes it)"));
    assert!(
        golden == text,
        "{FIXTURES}/{name} differs from what arena makes now (ARENA_BLESS=1 rewrites it):\n--- golden\n{golden}\n--- now\n{text}"
    );
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

#[test]
fn each_wire_format_sends_tools_calls_and_results_in_its_own_shape() {
    formats();
    let request = request();
    for provider in Provider::ALL {
        golden(
            &format!("{}_request.json", provider.name()),
            &pretty(&provider.wire().encode(&request)),
        );
    }
}

#[test]
fn each_wire_format_reads_the_tool_calls_of_its_reply() {
    formats();
    for provider in Provider::ALL {
        let name = provider.name();
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join(FIXTURES)
            .join(format!("{name}_reply.json"));
        let body = std::fs::read_to_string(&path).unwrap();
        let wire = provider
            .wire()
            .decode(&body)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!wire.tool_calls.is_empty(), "{name}: no tool call read");
        let decoded = json!({
            "content": wire.content,
            "finish_reason": wire.finish_reason,
            "tool_calls": wire.tool_calls,
        });
        golden(&format!("{name}_reply.decoded.json"), &pretty(&decoded));
    }
}

#[test]
fn a_request_without_tools_is_sent_and_stored_as_before() {
    formats();
    let plain = ChatRequest {
        model: "m".into(),
        messages: vec![ChatMessage::new("user", "e4?")],
        ..ChatRequest::default()
    };
    for provider in Provider::ALL {
        let body = provider.wire().encode(&plain).to_string();
        assert!(!body.contains("tool"), "{provider}: {body}");
    }
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        r#"{"model":"m","messages":[{"role":"user","content":"e4?"}]}"#
    );
}

/// Gemini's thinking models want a call's `thoughtSignature` back with it: read from the reply,
/// kept in the stored dialog, and sent on the `functionCall` part of the next request.
#[test]
fn a_gemini_calls_thought_signature_goes_back_with_the_call() {
    formats();
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join(FIXTURES)
        .join("gemini_reply.json");
    let body = std::fs::read_to_string(&path).unwrap();
    let wire = Provider::Gemini.wire().decode(&body).unwrap();
    let call = &wire.tool_calls[0];
    assert_eq!(call.signature.as_deref(), Some("CiQB0e2Kb7wEXAMPLE"));
    let request = ChatRequest {
        model: "m".into(),
        messages: vec![
            ChatMessage::new("user", "Your move."),
            ChatMessage::assistant("", wire.tool_calls.clone()),
            ChatMessage::tool_result(&call.id, "e2e4 is played."),
        ],
        ..ChatRequest::default()
    };
    let stored: ChatRequest =
        serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
    let sent = Provider::Gemini.wire().encode(&stored);
    assert_eq!(
        sent["contents"][1]["parts"][0]["thoughtSignature"], "CiQB0e2Kb7wEXAMPLE",
        "{sent}"
    );
    // The other formats have no such field and send none.
    for provider in Provider::ALL {
        if provider != Provider::Gemini {
            let sent = provider.wire().encode(&stored).to_string();
            assert!(!sent.contains("CiQB0e2Kb7wEXAMPLE"), "{provider}: {sent}");
        }
    }
}
