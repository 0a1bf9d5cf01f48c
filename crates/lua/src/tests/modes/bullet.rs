//! The bullet mode's two reasoning rules, on the text a mode really receives: the answer with
//! inline `<think>` blocks already split off (`llm::split_reasoning`), as the game loop gives it.

use super::{load, mode};
use crate::{
    llm::split_reasoning,
    tournament::turn::{Action, Decision, PlayMode, RetryAction},
};

/// What the mode decides with `options` for a model's raw `reply`, passed through the
/// reasoning split first.
fn decide(options: &str, reply: &str) -> Decision {
    let (m, ctx) = mode("bullet", options);
    let (answer, _) = split_reasoning(reply);
    m.reply(&ctx, &answer).unwrap()
}

/// A decision as `move UCI`, `reset` or `feedback KIND`.
fn summary(d: &Decision) -> String {
    match &d.action {
        Action::Move(uci) => format!("move {uci}"),
        Action::Retry(RetryAction::Reset) => {
            assert_eq!(d.outcome.as_deref(), Some("forbidden_reasoning"));
            "reset".into()
        }
        Action::Retry(RetryAction::Feedback(_)) => {
            format!("feedback {}", d.outcome.as_deref().unwrap_or("?"))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn the_default_is_chessarenas_rule_and_order() {
    // What ChessArena's get_llm_move does with each reply in bullet mode (parse, judge_thinking,
    // then Move.from_uci and legality), checked against their code with python-chess 1.11.2.
    let cases = [
        ("```\ne2e4\n```", "move e2e4"),
        ("  \n```\ne2e4\n```  ", "move e2e4"),
        // Two UCI moves are no reasoning to them; the last fenced one is played.
        ("```e2e4``` ```d2d4```", "move d2d4"),
        // A SAN answer, a language tag, a full stop or <move> tags are.
        ("```Nf3```", "reset"),
        ("```e2e4```.", "reset"),
        ("I like it. ```\ne2e4\n```", "reset"),
        // Judged before legality: an illegal move with words is reset, not fed back.
        ("I push. ```e2e5```", "reset"),
        ("```e2e5```", "feedback illegal"),
        ("```e2e2```", "feedback unparseable"),
        // No move read: feedback, before any judging.
        ("```uci\ne2e4\n```", "feedback no_move_found"),
        ("<move>e2e4</move>", "feedback no_move_found"),
        ("e2e4", "feedback no_move_found"),
        ("e2e4 d2d4", "feedback no_move_found"),
        // Inline thinking never reaches the mode.
        ("<think>the centre</think>\n```e2e4```", "move e2e4"),
        ("<think>\n\n</think>\n\n```\ne2e4\n```", "move e2e4"),
    ];
    let (m, _) = mode("bullet", "");
    assert_eq!(m.options()["reasoning_rule"], "chessarena");
    for (reply, expected) in cases {
        let (m, ctx) = mode("bullet", "");
        let (answer, _) = split_reasoning(reply);
        let got = summary(&m.reply(&ctx, &answer).unwrap());
        assert_eq!(got, expected, "{reply:?}");
        let explicit = decide("reasoning_rule = \"chessarena\"", reply);
        assert_eq!(summary(&explicit), expected, "{reply:?}");
    }
}

#[test]
fn the_arena_rule_checks_the_move_first_and_allows_one_move_in_any_wrapping() {
    // With the tolerant parser, which reads tags and language-tagged fences.
    let options = "reasoning_rule = \"arena\", parser = \"tolerant\"";
    let cases = [
        ("```\ne2e4\n```", "move e2e4"),
        ("```uci\ne2e4\n```", "move e2e4"),
        ("<move>e2e4</move>", "move e2e4"),
        ("```Nf3```", "move g1f3"),
        ("```e2e4``` ```d2d4```", "reset"),
        ("```e2e4```.", "reset"),
        ("I like it. ```\ne2e4\n```", "reset"),
        // Checked before judging: an illegal move gets feedback even with words around it.
        ("I push. ```e2e5```", "feedback illegal"),
        ("<think>the centre</think>\n```e2e4```", "move e2e4"),
    ];
    for (reply, expected) in cases {
        assert_eq!(summary(&decide(options, reply)), expected, "{reply:?}");
    }
    // The default parser is still ChessArena's, which reads no tags.
    let d = decide("reasoning_rule = \"arena\"", "<move>e2e4</move>");
    assert_eq!(summary(&d), "feedback no_move_found");
}

#[test]
fn a_misspelled_rule_and_san_under_chessarenas_rule_fail_the_check() {
    let err = load("bullet", "reasoning_rule = \"lenient\"")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("option `reasoning_rule` cannot be \"lenient\""),
        "{err}"
    );
    let err = load("bullet", "notation = \"san\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("reasoning_rule = \"arena\""), "{err}");
    assert!(load("bullet", "notation = \"san\", reasoning_rule = \"arena\"").is_ok());
}

/// What the move-selection task script makes of `reply` at the start position, read with
/// `parser` by a player in `mode`, with the provider's `reasoning` beside it: the UCI move, or
/// the error's kind.
fn move_selection_parse(parser: &str, mode: &str, reasoning: Option<&str>, reply: &str) -> String {
    use crate::{
        eval::{
            run::{hook_ctx, item_ctx},
            task::{Parsed, Task},
        },
        task::TaskScript,
    };
    let item = serde_json::json!({
        "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "legal_moves": ["e2e4", "d2d4", "g1f3"],
    });
    let dir = tempfile::tempdir().unwrap();
    let options = serde_json::json!({ "parser": parser });
    let script = TaskScript::from_disk(
        dir.path(),
        "tasks.move_selection",
        options.as_object().unwrap(),
    )
    .unwrap();
    let mut ctx = item_ctx(hook_ctx("move_selection", Some(mode), "m"));
    if let Some(r) = reasoning {
        ctx["reasoning"] = r.into();
    }
    match script.parse(reply, &item, &ctx).unwrap() {
        Parsed::Answer(a) => a["uci"].as_str().unwrap().to_owned(),
        Parsed::Failed(e) => e["kind"].as_str().unwrap().to_owned(),
    }
}

#[test]
fn the_move_selection_task_judges_bullet_replies_as_chessarenas_script() {
    let parse =
        |parser: &str, mode: &str, reply: &str| move_selection_parse(parser, mode, None, reply);
    // judge_thinking lets two UCI moves through and the last fenced one counts ...
    assert_eq!(
        parse("chessarena", "bullet", "```e2e4``` ```d2d4```"),
        "d2d4"
    );
    // ... and refuses SAN, which blitz reads.
    assert_eq!(
        parse("chessarena", "bullet", "```Nf3```"),
        "forbidden_reasoning"
    );
    assert_eq!(parse("chessarena", "blitz", "```Nf3```"), "g1f3");
    // The tolerant parser keeps arena's rule: one move in any wrapping, nothing else.
    assert_eq!(parse("tolerant", "bullet", "```Nf3```"), "g1f3");
    assert_eq!(
        parse("tolerant", "bullet", "```e2e4``` ```d2d4```"),
        "forbidden_reasoning"
    );
}

#[test]
fn chessarenas_task_readers_read_the_reasoning_before_the_reply_and_tolerant_does_not() {
    let parse = |parser: &str, reasoning: Option<&str>, reply: &str| {
        move_selection_parse(parser, "blitz", reasoning, reply)
    };
    // ChessArena's connect_gpt hands its readers `reasoning_content + content`: a move written
    // only in the reasoning counts, and the answer's own move (coming last) wins over it.
    assert_eq!(
        parse("chessarena", Some("maybe ```d2d4```"), "I play it."),
        "d2d4"
    );
    assert_eq!(
        parse("chessarena", Some("maybe ```d2d4```"), "```e2e4```"),
        "e2e4"
    );
    // arena's tolerant reader reads the answer alone.
    assert_eq!(
        parse("tolerant", Some("maybe ```d2d4```"), "I play it."),
        "no_move_found"
    );
    assert_eq!(parse("chessarena", None, "I play it."), "no_move_found");
}
