use serde_json::json;

use super::*;
use crate::eval::{chessarena_data, datasets::parse_json_lenient};

const FEN: &str = "k7/8/1BK5/8/8/8/7P/1N4N1 w - - 6 64";

fn item(square: &str) -> BasicItem {
    BasicItem::from_position(FEN, square).expect("valid")
}

fn reply(value: serde_json::Value) -> String {
    format!("Thinking...\n```json\n{{\"piece\": \"X\"}}\n```\nFinal:\n```json\n{value}\n```")
}

fn arena(it: &BasicItem, value: serde_json::Value) -> ItemScore {
    score(
        it,
        parse_reply(&reply(value), ReplyParse::LastJsonBlock).as_ref(),
        Scoring::ChessArena,
    )
}

fn strict(it: &BasicItem, value: serde_json::Value) -> ItemScore {
    score(
        it,
        parse_reply(&reply(value), ReplyParse::LastJsonBlock).as_ref(),
        Scoring::Strict,
    )
}

#[test]
fn the_last_json_block_is_the_answer() {
    let s = arena(
        &item("h2"),
        json!({"piece": "P", "legal_moves": ["h2h3", "h4"]}),
    );
    assert!(s.piece_match);
    assert_eq!(s.predicted_moves, ["h2h3", "h2h4"]);
    assert_eq!((s.precision, s.recall, s.f1), (1.0, 1.0, 1.0));
}

#[test]
fn empty_prediction_scores_perfectly_only_in_chessarena_scoring() {
    let it = item("h2");
    let theirs = arena(&it, json!({"piece": "P", "legal_moves": []}));
    assert_eq!(
        (theirs.precision, theirs.recall, theirs.f1),
        (1.0, 1.0, 1.0)
    );
    let ours = strict(&it, json!({"piece": "P", "legal_moves": []}));
    assert_eq!((ours.precision, ours.recall, ours.f1), (0.0, 0.0, 0.0));
    // Half right, both scorings agree.
    let half = json!({"piece": "P", "legal_moves": ["h2h3"]});
    assert_eq!(arena(&it, half.clone()).recall, 0.5);
    assert_eq!(strict(&it, half).recall, 0.5);
}

#[test]
fn empty_squares_and_the_none_string() {
    let it = item("e4");
    assert!(arena(&it, json!({"piece": null, "legal_moves": []})).piece_match);
    assert!(arena(&it, json!({"piece": "", "legal_moves": []})).piece_match);
    // "None" is a string, not Python's None.
    let none_string = arena(&it, json!({"piece": "None", "legal_moves": []}));
    assert!(!none_string.piece_match);
    assert_eq!(none_string.f1, 0.0);
    let ours = strict(&it, json!({"piece": "None", "legal_moves": []}));
    assert!(ours.piece_match);
    assert_eq!(ours.f1, 1.0);
    // Moves listed for an empty square: precision 0 in both.
    assert_eq!(
        arena(&it, json!({"piece": null, "legal_moves": ["e4e5"]})).precision,
        0.0
    );
}

#[test]
fn wrong_side_piece_has_no_moves() {
    let it = item("a8");
    assert_eq!(it.legal_moves.len(), 0);
    let right = strict(&it, json!({"piece": "k", "legal_moves": []}));
    assert_eq!((right.piece_match, right.f1), (true, 1.0));
    let listed = strict(&it, json!({"piece": "k", "legal_moves": ["a8a7"]}));
    assert_eq!((listed.precision, listed.recall), (0.0, 0.0));
    let wrong_piece = arena(&it, json!({"piece": "K", "legal_moves": []}));
    assert_eq!((wrong_piece.piece_match, wrong_piece.f1), (false, 0.0));
}

#[test]
fn missing_keys_and_odd_types() {
    let it = item("h2");
    let no_moves = arena(&it, json!({"piece": "P"}));
    assert!(no_moves.piece_match);
    assert_eq!(
        no_moves.predicted_moves.concat(),
        "unknown",
        "its characters are the prediction"
    );
    assert_eq!((no_moves.precision, no_moves.recall), (0.0, 0.0));
    assert!(!arena(&it, json!({"legal_moves": ["h2h3"]})).piece_match);
    let string_moves = arena(&it, json!({"piece": "P", "legal_moves": "h2h3"}));
    assert_eq!(string_moves.f1, 0.0);
    // null entries become "None" and count once in the set.
    let nulls = arena(
        &it,
        json!({"piece": "P", "legal_moves": ["h2h3", null, null]}),
    );
    assert_eq!(nulls.precision, 0.5);
}

#[test]
fn unparsable_replies_are_skipped_by_chessarena_and_zero_for_us() {
    let it = item("h2");
    let theirs = score(
        &it,
        parse_reply("no json", ReplyParse::LastJsonBlock).as_ref(),
        Scoring::ChessArena,
    );
    assert!(!theirs.counted);
    let ours = score(&it, None, Scoring::Strict);
    assert!(ours.counted);
    let good = arena(&it, json!({"piece": "P", "legal_moves": ["h2h3", "h2h4"]}));
    let m = aggregate(&[good.clone(), theirs]);
    assert_eq!(
        (m.piece_match_rate, m.f1, m.total, m.counted),
        (0.5, 1.0, 2, 1)
    );
    let m = aggregate(&[good, ours]);
    assert_eq!((m.piece_match_rate, m.f1, m.counted), (0.5, 0.5, 2));
}

#[test]
fn tolerant_parsing_finds_bare_objects() {
    let text = "The answer is {\"piece\": \"P\", \"legal_moves\": [\"h2h3\", \"h2h4\"]} as shown {not json}.";
    assert_eq!(parse_reply(text, ReplyParse::LastJsonBlock), None);
    let v = parse_reply(text, ReplyParse::Tolerant).expect("an object");
    assert_eq!(v["piece"], "P");
    let fenced = "```\n{\"piece\": \"n\", \"legal_moves\": []}\n```";
    assert_eq!(
        parse_reply(fenced, ReplyParse::Tolerant).expect("object")["piece"],
        "n"
    );
    assert_eq!(
        Scoring::from_name(Scoring::Strict.as_str()),
        Some(Scoring::Strict)
    );
}

/// Replays ChessArena's recorded GPT-4.1 basic-understanding predictions through our
/// ChessArena scoring and checks the per-item and final metrics they published.
#[test]
fn chessarena_scoring_reproduces_published_gpt41_metrics() {
    let Some(dir) = chessarena_data("commit-e1a12ce2/chess_modeling_evaluation") else {
        return;
    };
    let predictions = std::fs::read_to_string(dir.join("gpt-4.1_predictions_200.jsonl"))
        .expect("the predictions file is readable");
    let published: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("gpt-4.1_final_metrics_200.json"))
            .expect("the metrics file is readable"),
    )
    .expect("the metrics file is JSON");
    let mut scores = Vec::new();
    for (i, line) in predictions.lines().enumerate() {
        let row: serde_json::Value = parse_json_lenient(line).expect("a JSON row");
        let prompt = row["prompt"].as_str().expect("a prompt");
        let fen = crate::eval::datasets::fen_from_prompt(prompt).expect("a FEN in the prompt");
        let square = prompt.split("Position:").nth(1).expect("a square").trim();
        let truth = &row["ground_truth"];
        let it = BasicItem {
            fen: fen.clone(),
            square: square.to_owned(),
            piece: truth["piece"].as_str().map(str::to_owned),
            legal_moves: serde_json::from_value(truth["legal_moves"].clone()).expect("moves"),
            kind: crate::eval::datasets::SquareKind::OwnPiece,
            system: None,
            prompt: None,
        };
        let parsed = parse_reply(
            row["response"].as_str().expect("a response"),
            ReplyParse::LastJsonBlock,
        );
        let s = score(&it, parsed.as_ref(), Scoring::ChessArena);
        assert!(s.counted, "line {}: every stored row was scored", i + 1);
        assert_eq!(
            s.predicted_piece.as_deref(),
            row["pred_piece"].as_str(),
            "line {}",
            i + 1
        );
        let stored_moves: Vec<String> =
            serde_json::from_value(row["pred_legal_moves"].clone()).expect("stored moves");
        assert_eq!(s.predicted_moves, stored_moves, "line {}", i + 1);
        for (ours, key) in [
            (s.precision, "precision"),
            (s.recall, "recall"),
            (s.f1, "f1_score"),
        ] {
            // serde_json's default float parsing may be one ulp off the stored decimal.
            let stored = row[key].as_f64().expect("a number");
            assert!(
                (ours - stored).abs() <= 1e-15,
                "line {}: {key} {ours} vs {stored}",
                i + 1
            );
        }
        scores.push(s);
    }
    let total = published["total_num"].as_u64().expect("total_num") as usize;
    // The run had 200 questions; the one whose reply held no JSON was skipped and not written.
    assert_eq!(scores.len() + 1, total);
    scores.push(score(
        &item("h2"),
        parse_reply("no answer", ReplyParse::LastJsonBlock).as_ref(),
        Scoring::ChessArena,
    ));
    let m = aggregate(&scores);
    assert_eq!(m.total, total);
    for (ours, key) in [
        (m.piece_match_rate, "piece_match_rate"),
        (m.f1, "f1"),
        (m.precision, "precision"),
        (m.recall, "recall"),
    ] {
        let theirs = published[key].as_f64().expect("a number");
        assert!(
            (ours - theirs).abs() < 1e-9,
            "{key}: ours {ours}, published {theirs}"
        );
    }
}
