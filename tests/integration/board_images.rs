//! Board pictures for vision models, end to end: a blitz player with `board = "image"` against
//! the fake OpenAI server, which checks each picture's data URL; the store keeps each picture
//! once and every stored request names the one sent.

use std::collections::BTreeSet;

use crate::common::{TestDir, fake_openai, open_store, stderr};

#[test]
fn a_game_with_board_images_sends_stores_and_reports_the_picture_of_each_position() {
    let fake = fake_openai(0);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "pictures", games_per_pair = 1, max_plies = 8, seed = 5, concurrency = 1,
  players = {{
    arena.llm {{ name = "eyes", model = "fake", base_url = "{}", mode = "blitz",
                 options = {{ board = "image" }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let t = store.find_tournament("pictures").unwrap().unwrap();
    let game = &store.games(t.id).unwrap()[0];
    let plies = store.plies(game.id).unwrap();
    assert_eq!(plies.len(), 8, "the game is played out to its limit");
    let calls = store.game_calls(game.id).unwrap();
    assert!(!calls.is_empty());
    let mut shown = BTreeSet::new();
    for call in &calls {
        let request: serde_json::Value = serde_json::from_str(&call.call.request_json).unwrap();
        let images = request["messages"][1]["images"]
            .as_array()
            .unwrap_or_else(|| {
                panic!(
                    "the position's message names its picture: {}",
                    call.call.request_json
                )
            });
        assert_eq!(images.len(), 1);
        assert_eq!(images[0]["media_type"], "image/png");
        assert!(
            !call.call.request_json.contains("base64"),
            "the stored request names the picture, it does not hold it"
        );
        // The picture the model saw: the position before the ply's move, drawn from the mover's
        // side with the previous move marked.
        let ply = call.call.ply as usize;
        let fen = &plies[ply].fen_before;
        let options = arena::board::diagram::DiagramOptions {
            last_move: (ply > 0).then(|| plies[ply - 1].uci.clone()),
            ..Default::default()
        };
        let expected =
            arena::board::image::png(fen, arena::board::image::DEFAULT_SIZE, &options).unwrap();
        let sha = images[0]["sha256"].as_str().unwrap();
        let stored = store.image(sha).unwrap().expect("the picture is stored");
        assert_eq!(&*stored.data, &expected[..], "ply {ply}");
        shown.insert(sha.to_owned());
    }
    // One picture per position the model was shown (a retry shows the same one again).
    let moves_of_eyes = calls
        .iter()
        .map(|c| c.call.ply)
        .collect::<BTreeSet<_>>()
        .len();
    assert_eq!(shown.len(), moves_of_eyes);
    assert_eq!(
        fake.stats().images,
        calls.len() as u64,
        "one picture per request"
    );
}
