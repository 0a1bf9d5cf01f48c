//! The request shapes of messages with pictures, pinned per wire format by golden files in
//! `crates/llm/src/fixtures/requests/` (compared byte for byte; `ARENA_BLESS=1 cargo test -p
//! arena-providers --lib image_requests` writes them again, for review as a diff).

use std::path::PathBuf;

use super::{ChatMessage, ChatRequest, Image, Provider, formats};

/// A dialog with a system message, a picture shown with the first question, the model's answer
/// and a question without one: each format's image part, and its plain text beside it.
fn request() -> ChatRequest {
    // The PNG signature stands for a picture: the shape is what is pinned here, the board's
    // pixels are pinned by `board::image`'s golden pictures.
    let picture = Image::new("image/png", b"\x89PNG\r\n\x1a\n".to_vec());
    ChatRequest {
        model: "vision-model".into(),
        messages: vec![
            ChatMessage::new("system", "You play chess."),
            ChatMessage::new("user", "The board. Your move as White?").with_image(picture),
            ChatMessage::new("assistant", "e2e4"),
            ChatMessage::new("user", "Black played e7e5. Your move?"),
        ],
        max_tokens: Some(64),
        ..ChatRequest::default()
    }
}

fn golden(provider: Provider) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("crates/llm/src/fixtures/requests")
        .join(format!("image_{}.json", provider.name()))
}

#[test]
fn image_requests_match_their_golden_files() {
    formats();
    let bless = std::env::var("ARENA_BLESS").is_ok_and(|v| v == "1");
    for provider in Provider::ALL {
        let body =
            serde_json::to_string_pretty(&provider.wire().encode(&request())).unwrap() + "\n";
        let path = golden(provider);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &body).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `ARENA_BLESS=1 cargo test -p arena-providers --lib image_requests`",
                path.display()
            )
        });
        assert!(
            body == want,
            "{provider}: the request differs from {}; if that is meant, run `ARENA_BLESS=1 cargo \
             test -p arena-providers --lib image_requests` and review the diff.\nmade:\n{body}",
            path.display()
        );
    }
}

#[test]
fn messages_without_pictures_encode_as_plain_text() {
    formats();
    let mut plain = request();
    plain.messages[1].images.clear();
    for provider in Provider::ALL {
        let body = provider.wire().encode(&plain).to_string();
        assert!(!body.contains("base64"), "{provider}: {body}");
        assert!(!body.contains("image"), "{provider}: {body}");
    }
    // And a message serialises exactly as before pictures existed.
    assert_eq!(
        serde_json::to_string(&plain.messages[1]).unwrap(),
        r#"{"role":"user","content":"The board. Your move as White?"}"#
    );
}

#[test]
fn an_image_serialises_as_a_reference_and_reads_back_unresolved() {
    formats();
    let message = &request().messages[1];
    let json = serde_json::to_string(message).unwrap();
    assert_eq!(
        json,
        r#"{"role":"user","content":"The board. Your move as White?","images":[{"media_type":"image/png","sha256":"4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6"}]}"#
    );
    let back: ChatMessage = serde_json::from_str(&json).unwrap();
    assert!(!back.images[0].is_resolved());
    assert_eq!(back.images[0].sha256, message.images[0].sha256);
}
