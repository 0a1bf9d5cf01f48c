//! The agentic mode: every action, both matching rules, and every ablation switch.

use super::{load, mode};
use crate::{
    llm::ChatMessage,
    tournament::turn::{Action, Decision, PlayMode, RetryAction},
};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn said(d: &Decision) -> &str {
    match &d.action {
        Action::Say(text) => text,
        other => panic!("expected a say decision, got {other:?}"),
    }
}

fn feedback(d: &Decision) -> &str {
    match &d.action {
        Action::Retry(RetryAction::Feedback(text)) => text,
        other => panic!("expected a retry with feedback, got {other:?}"),
    }
}

/// The single message that opens a ply.
fn kickoff(options: &str) -> String {
    let (m, ctx) = mode("agentic", options);
    let messages = m.start(&ctx).unwrap().messages;
    assert_eq!(messages.len(), 1, "no system message, one user message");
    assert_eq!(messages[0].role, "user");
    messages[0].content.clone()
}

#[test]
fn each_action_is_answered_and_the_limits_are_ten_turns_and_three_failures() {
    let (m, ctx) = mode("agentic", "");
    assert_eq!(m.max_attempts(), 3);
    assert_eq!(m.max_turns(), Some(10));
    let opening = kickoff("");
    for action in ["get_current_board", "get_legal_moves", "make_move <move>"] {
        assert!(opening.contains(action), "{opening}");
    }
    assert!(!opening.contains("do_reflection"), "{opening}");
    assert!(opening.contains("as White"), "{opening}");

    let board = m.reply(&ctx, "get_current_board").unwrap();
    assert_eq!(board.outcome.as_deref(), Some("get_current_board"));
    assert!(said(&board).contains("♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜"), "{}", said(&board));

    let legal = m.reply(&ctx, "get_legal_moves").unwrap();
    assert_eq!(legal.outcome.as_deref(), Some("get_legal_moves"));
    assert_eq!(said(&legal).split(',').count(), 20);
    assert!(said(&legal).contains("e2e4,") && !said(&legal).contains(' '));

    let moved = m.reply(&ctx, "make_move e2e4").unwrap();
    assert_eq!(moved.action, Action::Move("e2e4".into()));
    assert_eq!(moved.outcome.as_deref(), Some("move"));

    let illegal = m.reply(&ctx, "make_move e2e5").unwrap();
    assert_eq!(illegal.outcome.as_deref(), Some("wrong_move"));
    assert_eq!(illegal.candidate.as_deref(), Some("e2e5"));
    assert!(feedback(&illegal).contains(START), "{}", feedback(&illegal));

    let garbled = m.reply(&ctx, "make_move e9e4").unwrap();
    assert_eq!(garbled.outcome.as_deref(), Some("wrong_move"));
    assert!(feedback(&garbled).contains("not a move in UCI notation"));

    let chatter = m.reply(&ctx, "I would like to castle.").unwrap();
    assert_eq!(chatter.outcome.as_deref(), Some("wrong_action"));
    assert_eq!(chatter.candidate, None);
    assert!(feedback(&chatter).contains("get_current_board, get_legal_moves, make_move <move>"));
}

#[test]
fn a_null_move_is_always_illegal() {
    for rule in ["llm_chess", "strict"] {
        let (m, ctx) = mode("agentic", &format!("rule = \"{rule}\""));
        let d = m.reply(&ctx, "make_move 0000").unwrap();
        assert_eq!(d.outcome.as_deref(), Some("wrong_move"), "{rule}");
        assert!(matches!(d.action, Action::Retry(_)), "{rule}");
    }
}

#[test]
fn the_llm_chess_rule_checks_names_in_order_and_takes_the_first_make_move() {
    let (m, ctx) = mode("agentic", "rule = \"llm_chess\"");
    // A board request anywhere wins over a move, as in LLM Chess.
    let d = m
        .reply(&ctx, "I'll make_move e2e4 once I get_current_board.")
        .unwrap();
    assert_eq!(d.outcome.as_deref(), Some("get_current_board"));
    let d = m.reply(&ctx, "make_move d2d4, or make_move e2e4").unwrap();
    assert_eq!(d.action, Action::Move("d2d4".into()));
    // Case is folded.
    let d = m.reply(&ctx, "MAKE_MOVE G1F3").unwrap();
    assert_eq!(d.action, Action::Move("g1f3".into()));
    // Exactly one space after make_move.
    let d = m.reply(&ctx, "make_move  e2e4").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_action"));
    // Thinking closed by another tag than <think> is dropped before matching.
    let d = m
        .reply(&ctx, "maybe get_legal_moves?</reasoning> make_move e2e4")
        .unwrap();
    assert_eq!(d.action, Action::Move("e2e4".into()));
}

#[test]
fn the_strict_rule_wants_exactly_one_well_formed_action() {
    let (m, ctx) = mode("agentic", "rule = \"strict\"");
    let d = m
        .reply(&ctx, "I'll make_move e2e4 once I get_current_board.")
        .unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_action"));
    assert!(
        feedback(&d).contains("more than one action"),
        "{}",
        feedback(&d)
    );
    let d = m.reply(&ctx, "make_move e2e4.").unwrap();
    assert_eq!(d.action, Action::Move("e2e4".into()));
    let d = m.reply(&ctx, "make_move E2E4").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_move"));
    let d = m.reply(&ctx, "get_legal_moves").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("get_legal_moves"));
}

#[test]
fn reflection_is_offered_on_request_and_its_notes_are_not_wrong_actions() {
    let (m, ctx) = mode("agentic", "");
    let d = m.reply(&ctx, "do_reflection").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_action"), "not offered");

    assert!(kickoff("reflection = true").contains("do_reflection"));
    let (m, mut ctx) = mode("agentic", "reflection = true");
    let d = m.reply(&ctx, "do_reflection").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("do_reflection"));
    let reflect = said(&d).to_string();
    ctx.dialog = vec![
        ChatMessage::new("user", "opening"),
        ChatMessage::new("assistant", "do_reflection"),
        ChatMessage::new("user", reflect),
        ChatMessage::new("assistant", "The centre matters most."),
    ]
    .into();
    let d = m.reply(&ctx, "The centre matters most.").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("reflection_notes"));
    assert!(said(&d).contains("make_move <move>"));
}

/// The dialog of a ply in which the model asked for a reflection and now answers `reply`.
fn after_reflection(options: &str, reply: &str) -> Decision {
    let (m, mut ctx) = mode("agentic", options);
    let reflect = said(&m.reply(&ctx, "do_reflection").unwrap()).to_string();
    ctx.dialog = vec![
        ChatMessage::new("user", "opening"),
        ChatMessage::new("assistant", "do_reflection"),
        ChatMessage::new("user", reflect),
        ChatMessage::new("assistant", reply),
    ]
    .into();
    m.reply(&ctx, reply).unwrap()
}

#[test]
fn after_the_reflection_prompt_llm_chess_answers_only_board_and_legal_moves_requests() {
    // LLM Chess (AutoReplyAgent): board and legal-moves requests are answered; any other reply,
    // a move included, gets the follow-up text and is no wrong action.
    let options = "reflection = true";
    for reply in [
        "make_move e2e4",
        "I choose e4.\nmake_move e2e4",
        "do_reflection",
        "make_move e2e5",
        "Nothing to add.",
    ] {
        let d = after_reflection(options, reply);
        assert_eq!(d.outcome.as_deref(), Some("reflection_notes"), "{reply}");
        assert!(said(&d).contains("make_move <move>"), "{reply}");
    }
    let d = after_reflection(options, "Let me get_current_board first.");
    assert_eq!(d.outcome.as_deref(), Some("get_current_board"));
    assert!(said(&d).contains('♔'));
    let d = after_reflection(options, "get_legal_moves");
    assert_eq!(d.outcome.as_deref(), Some("get_legal_moves"));
    // The reply after the follow-up is read as usual: the move is made then.
    let (m, mut ctx) = mode("agentic", options);
    let follow_up = said(&after_reflection(options, "make_move e2e4")).to_string();
    ctx.dialog = vec![
        ChatMessage::new("user", "opening"),
        ChatMessage::new("assistant", "do_reflection"),
        ChatMessage::new("user", "reflect"),
        ChatMessage::new("assistant", "make_move e2e4"),
        ChatMessage::new("user", follow_up),
        ChatMessage::new("assistant", "make_move e2e4"),
    ]
    .into();
    let d = m.reply(&ctx, "make_move e2e4").unwrap();
    assert_eq!(d.action, Action::Move("e2e4".into()));
}

#[test]
fn after_the_reflection_prompt_the_strict_rule_carries_out_any_action() {
    let options = "reflection = true, rule = \"strict\"";
    let d = after_reflection(options, "make_move e2e4");
    assert_eq!(d.action, Action::Move("e2e4".into()));
    let d = after_reflection(options, "The centre matters most.");
    assert_eq!(d.outcome.as_deref(), Some("reflection_notes"));
}

#[test]
fn board_representations() {
    let (m, ctx) = mode("agentic", "board = \"ascii\"");
    let d = m.reply(&ctx, "get_current_board").unwrap();
    assert!(said(&d).contains("r n b q k b n r"), "{}", said(&d));

    let (m, ctx) = mode("agentic", "board = \"fen\"");
    let d = m.reply(&ctx, "get_current_board").unwrap();
    assert_eq!(said(&d), START);

    let (m, mut ctx) = mode("agentic", "board = \"fen_pgn\"");
    ctx.fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2".into();
    ctx.history_san = vec!["e4".into(), "e5".into(), "Nf3".into()].into();
    let d = m.reply(&ctx, "get_current_board").unwrap();
    assert!(said(&d).starts_with(&ctx.fen), "{}", said(&d));
    assert!(said(&d).contains("1. e4 e5 2. Nf3"), "{}", said(&d));

    let (m, ctx) = mode("agentic", "board = \"unicode\"");
    let d = m.reply(&ctx, "get_current_board").unwrap();
    assert!(said(&d).contains('♔'));

    let err = load("agentic", "board = \"svg\"").unwrap_err().to_string();
    assert!(err.contains("option `board` cannot be \"svg\""), "{err}");
}

#[test]
fn board_in_prompt_replaces_get_current_board() {
    let opening = kickoff("board_in_prompt = true");
    assert!(opening.contains("♜ ♞ ♝ ♛ ♚ ♝ ♞ ♜"), "{opening}");
    assert!(!opening.contains("get_current_board"), "{opening}");
    assert!(opening.contains("get_legal_moves"), "{opening}");
    let (m, ctx) = mode("agentic", "board_in_prompt = true");
    let d = m.reply(&ctx, "get_current_board").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_action"));
}

#[test]
fn legal_moves_in_prompt_replaces_get_legal_moves() {
    let opening = kickoff("legal_moves_in_prompt = true");
    assert!(opening.contains("Your legal moves (UCI): "), "{opening}");
    assert!(opening.contains("b1a3,"), "{opening}");
    assert!(!opening.contains("get_legal_moves"), "{opening}");
    assert!(opening.contains("get_current_board"), "{opening}");
}

#[test]
fn only_make_move_shows_everything_and_offers_one_action() {
    let opening = kickoff("only_make_move = true");
    assert!(opening.contains("Your legal moves (UCI): "), "{opening}");
    assert!(opening.contains("♔"), "{opening}");
    assert!(!opening.contains("get_legal_moves"), "{opening}");
    assert!(!opening.contains("get_current_board"), "{opening}");
    assert!(opening.contains("make_move <move>"), "{opening}");
}

#[test]
fn no_legal_moves_hides_them_everywhere() {
    let opening = kickoff("legal_moves = false, board = \"fen\"");
    assert!(!opening.contains("get_legal_moves"), "{opening}");
    assert!(!opening.contains("legal moves (UCI)"), "{opening}");
    let (m, ctx) = mode("agentic", "legal_moves = false");
    let d = m.reply(&ctx, "get_legal_moves").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_action"));
    // Even with only_make_move the list stays hidden.
    let opening = kickoff("legal_moves = false, only_make_move = true");
    assert!(!opening.contains("legal moves (UCI)"), "{opening}");
}

#[test]
fn previous_moves_are_listed_in_pairs() {
    let (m, mut ctx) = mode("agentic", "previous_moves = true");
    ctx.history_uci = vec!["e2e4".into(), "e7e5".into(), "g1f3".into()].into();
    let opening = &m.start(&ctx).unwrap().messages[0].content;
    assert!(
        opening.starts_with("The moves so far (UCI): 1. e2e4 e7e5, 2. g1f3\n"),
        "{opening}"
    );
    assert!(!kickoff("").contains("moves so far"));
}

#[test]
fn memory_carries_the_previous_ply_over_and_is_off_by_default() {
    let previous = vec![
        ChatMessage::new("user", "earlier ply"),
        ChatMessage::new("assistant", "make_move e2e4"),
    ];
    let (m, mut ctx) = mode("agentic", "memory = true");
    ctx.previous_dialog = previous.clone().into();
    let messages = m.start(&ctx).unwrap().messages;
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[..2], previous[..]);
    let (m, mut ctx) = mode("agentic", "");
    ctx.previous_dialog = previous.into();
    assert_eq!(m.start(&ctx).unwrap().messages.len(), 1);
}

#[test]
fn single_request_asks_once_per_ply_and_reads_the_last_legal_move() {
    let (m, mut ctx) = mode("agentic", "single_request = true");
    let messages = m.start(&ctx).unwrap().messages;
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].role, "system");
    let user = &messages[1].content;
    assert!(
        user.contains(START) && user.contains("Legal moves (UCI): "),
        "{user}"
    );
    assert!(!user.contains("get_current_board"), "{user}");
    assert!(!user.contains("previous answer"), "{user}");

    let d = m
        .reply(&ctx, "e2e4 is fine\nmake_move d2d4\nmake_move g1f3")
        .unwrap();
    assert_eq!(d.action, Action::Move("g1f3".into()));
    let d = m.reply(&ctx, "I think e2e4 is best").unwrap();
    assert_eq!(d.action, Action::Move("e2e4".into()));
    let d = m.reply(&ctx, "make_move e2e5").unwrap();
    assert_eq!(d.action, Action::Retry(RetryAction::Reset));
    assert_eq!(d.outcome.as_deref(), Some("wrong_move"));
    let d = m.reply(&ctx, "no idea").unwrap();
    assert_eq!(d.outcome.as_deref(), Some("wrong_action"));

    ctx.attempt = 2;
    let retry = &m.start(&ctx).unwrap().messages[1].content;
    assert!(
        retry.contains("previous answer named no legal move"),
        "{retry}"
    );
}

#[test]
fn an_unknown_rule_is_refused_when_the_script_is_checked() {
    let err = load("agentic", "rule = \"fuzzy\"").unwrap_err().to_string();
    assert!(err.contains("option `rule` cannot be \"fuzzy\""), "{err}");
    let err = load("agentic", "max_turns = 0").unwrap_err().to_string();
    assert!(err.contains("`max_turns` must be a whole number"), "{err}");
}
