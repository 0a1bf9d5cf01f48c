//! Golden files of every built-in prompt: the exact messages each play mode and each evaluation
//! task sends, at fixed positions, compared byte for byte with `tests/fixtures/prompts/`. A change
//! of wording changes what a benchmark measures, so it must show up as a changed file in review.
//!
//! `ARENA_BLESS=1 cargo test --lib golden` writes the files instead (and removes those no case
//! makes any more); review the diff before committing it.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde_json::{Map, Value, json};
use shakmaty::{Color, Position as _};

use super::modes::mode;
use crate::{
    ModeScript, TaskScript,
    board::{Variant, game::Game, render},
    eval::{
        datasets::{BasicItem, MoveSelectionItem, Puzzle},
        items::reconstruction_item,
        puzzles::{Outcome, PuzzleSession, SessionState},
        run::{hook_ctx, item_ctx, puzzle_ctx},
        task::{Parsed, Task},
    },
    llm::{ChatMessage, ToolCall, ToolSpec},
    tournament::turn::{Action, LegalMoves, PlayMode, RetryAction, TurnContext},
};

/// The environment variable that makes the test write the golden files instead of checking them.
const BLESS: &str = "ARENA_BLESS";
/// Where the golden files live, from the crate root.
const FIXTURES: &str = "tests/fixtures/prompts";
const INITIAL: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
/// A Ruy Lopez up to 6. Re1: Black to move (and still free to castle) after eleven plies, more
/// than the default `history = 10` shows.
const RUY_LOPEZ: &[&str] = &[
    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1",
];
/// An endgame set up by FEN (not the initial position) in which White, after two moves, can
/// promote on c8.
const PROMOTION_START: &str = "8/2P3k1/8/8/8/8/3p2K1/8 w - - 0 58";
const PROMOTION_MOVES: &[&str] = &["g2f2", "g7f7"];
/// A Chess960 middlegame, White to move: kings on the d-file, rooks on b and g (so the X-FEN
/// castling field reads `KQkq`), both castlings legal (`d1g1` and `d1b1` in UCI), and `d1c1`
/// an ordinary king move.
const CHESS960_START: &str = "1r1k2r1/pppbqppp/2np1n2/4p3/4P3/2NP1N2/PPPBQPPP/1R1K2R1 w KQkq - 4 7";

/// Where a scene is played.
#[derive(Clone, Copy)]
enum At {
    /// The initial position, White to move.
    Opening,
    /// [`RUY_LOPEZ`]: Black to move with a history.
    Middlegame,
    /// [`PROMOTION_START`] + [`PROMOTION_MOVES`]: White to move, c7c8q and friends legal.
    Promotion,
    /// [`CHESS960_START`], in a Chess960 game.
    Chess960,
}

impl At {
    fn line(self) -> (&'static str, &'static [&'static str]) {
        match self {
            At::Opening => (INITIAL, &[]),
            At::Middlegame => (INITIAL, RUY_LOPEZ),
            At::Promotion => (PROMOTION_START, PROMOTION_MOVES),
            At::Chess960 => (CHESS960_START, &[]),
        }
    }

    fn variant(self) -> Variant {
        match self {
            At::Chess960 => Variant::Chess960,
            _ => Variant::Standard,
        }
    }
}

/// One rendering of a play mode: a position, and the model's replies played into the ply's
/// dialog (none: the opening messages alone).
struct Scene {
    name: &'static str,
    at: At,
    replies: &'static [&'static str],
}

const fn scene(name: &'static str, at: At, replies: &'static [&'static str]) -> Scene {
    Scene { name, at, replies }
}

const OPENING: Scene = scene("opening", At::Opening, &[]);
const MIDDLEGAME: Scene = scene("middlegame", At::Middlegame, &[]);
const PROMOTION: Scene = scene("promotion", At::Promotion, &[]);
const RETRY: Scene = scene("retry", At::Opening, &["```\ne2e5\n```"]);
const RETRY_NO_MOVE: Scene = scene("retry_no_move", At::Opening, &["I would rather not say."]);
const RETRY_UNPARSEABLE: Scene = scene(
    "retry_unparseable",
    At::Opening,
    // python-chess refuses the same square twice: ChessArena's "Invalid UCI format".
    &["```\ne2e2\n```"],
);
/// Marks a scene's reply as cut at the token limit (see [`converse`]).
const CUT: &str = "cut:";
/// A reply cut at the token limit in the middle of its reasoning, before any move.
const RETRY_CUT_OFF: Scene = scene(
    "retry_cut_off",
    At::Opening,
    &["cut:Let me think step by step. White has many options here: the centre pawns, the"],
);
const AGENTIC_RETRY: Scene = scene("retry", At::Opening, &["make_move e9e4"]);
/// A Chess960 game's prompts, answered with the standard king move `e1g1`, which does not castle
/// there (its feedback is the next message).
const CHESS960: Scene = scene("chess960", At::Chess960, &["```\ne1g1\n```"]);
const AGENTIC_CHESS960: Scene = scene("chess960", At::Chess960, &["make_move e1g1"]);
/// The two actions that show the position (wrong actions where the variant does not offer them).
const ACTIONS: Scene = scene(
    "actions",
    At::Middlegame,
    &["get_current_board", "get_legal_moves"],
);
/// A reply that is no action, then an illegal move: two of the three failures a ply allows, so
/// both are answered with feedback.
const FAILURES: Scene = scene(
    "failures",
    At::Middlegame,
    &["I would like to castle.", "make_move e7e5"],
);
const REFLECT: Scene = scene(
    "reflection",
    At::Middlegame,
    &["do_reflection", "The centre matters most."],
);
/// The strict rule's own refusals: two actions named, an upper-case move.
const STRICT_FAILURES: Scene = scene(
    "strict_failures",
    At::Middlegame,
    &["get_current_board, then get_legal_moves", "make_move E8G8"],
);

/// Replies through tools: a reply that starts with `call:` is one or more calls, `name:{json}`,
/// joined by ` + ` (see [`reply_calls`]); any other reply is text that calls no tool.
const TOOLS_OPENING: Scene = scene(
    "opening",
    At::Opening,
    &[r#"call:make_move:{"move":"e2e4"}"#],
);
const TOOLS_ACTIONS: Scene = scene(
    "actions",
    At::Middlegame,
    &[
        "call:get_current_board:{}",
        "call:get_legal_moves:{}",
        r#"call:make_move:{"move":"b7b5"}"#,
    ],
);
/// No call, an unknown tool, an illegal move: the three failures a ply allows.
const TOOLS_FAILURES: Scene = scene(
    "failures",
    At::Middlegame,
    &[
        "I would like to castle.",
        "call:resign_game:{}",
        r#"call:make_move:{"move":"e7e5"}"#,
    ],
);
/// make_move without its argument, then two calls in one reply (the second is not carried out).
const TOOLS_ARGUMENTS: Scene = scene(
    "arguments",
    At::Middlegame,
    &[
        r#"call:make_move:{"square":"b5"}"#,
        r#"call:get_legal_moves:{} + make_move:{"move":"b7b5"}"#,
    ],
);
const TOOLS_REFLECT: Scene = scene(
    "reflection",
    At::Middlegame,
    &["call:do_reflection:{}", "The centre matters most."],
);
#[rustfmt::skip]
const AGENTIC_TOOLS: &[Scene] = &[TOOLS_OPENING, TOOLS_ACTIONS, TOOLS_FAILURES, TOOLS_ARGUMENTS];
#[rustfmt::skip]
const AGENTIC_TOOLS_REFLECTION: &[Scene] = &[TOOLS_OPENING, TOOLS_REFLECT];

const CHESS: &[Scene] = &[OPENING, MIDDLEGAME, PROMOTION, RETRY];
#[rustfmt::skip]
const BLITZ: &[Scene] = &[OPENING, MIDDLEGAME, PROMOTION, RETRY, RETRY_NO_MOVE, RETRY_UNPARSEABLE];
#[rustfmt::skip]
const AGENTIC: &[Scene] = &[OPENING, MIDDLEGAME, PROMOTION, AGENTIC_RETRY, ACTIONS, FAILURES];
#[rustfmt::skip]
const AGENTIC_REFLECTION: &[Scene] =
    &[OPENING, MIDDLEGAME, PROMOTION, AGENTIC_RETRY, ACTIONS, FAILURES, REFLECT];
#[rustfmt::skip]
const AGENTIC_STRICT: &[Scene] =
    &[OPENING, MIDDLEGAME, PROMOTION, AGENTIC_RETRY, ACTIONS, FAILURES, STRICT_FAILURES];
/// One request per ply has no actions: a failed answer starts the ply over with a note.
const SINGLE_REQUEST: &[Scene] = &[OPENING, MIDDLEGAME, PROMOTION, AGENTIC_RETRY];

/// Every built-in play mode with the options that change its words: (mode, folder, the player's
/// `options` as Lua, scenes).
#[rustfmt::skip]
const MODES: &[(&str, &str, &str, &[Scene])] = &[
    ("bullet", "default", "", CHESS),
    ("bullet", "no_legal_moves", "legal_moves = false", CHESS),
    ("bullet", "san", "notation = \"san\", reasoning_rule = \"arena\"", CHESS),
    ("bullet", "grammar", "grammar = true", CHESS),
    ("blitz", "default", "", BLITZ),
    ("blitz", "no_legal_moves", "legal_moves = false", CHESS),
    ("blitz", "san", "notation = \"san\"", CHESS),
    ("blitz", "board_ascii", "board = \"ascii\"", CHESS),
    ("blitz", "board_unicode", "board = \"unicode\"", CHESS),
    ("blitz", "board_image", "board = \"image\"", CHESS),
    ("blitz", "grammar", "grammar = true", CHESS),
    ("blitz", "retry_shorter", "on_cut_off = \"retry_shorter\"", &[RETRY_CUT_OFF]),
    ("standard", "default", "", CHESS),
    ("blindfold", "default", "", CHESS),
    ("blindfold", "legal_moves", "legal_moves = true", CHESS),
    ("blindfold", "single_turn", "multi_turn = false", CHESS),
    ("agentic", "default", "", AGENTIC),
    ("agentic", "board_ascii", "board = \"ascii\"", AGENTIC),
    ("agentic", "board_fen", "board = \"fen\"", AGENTIC),
    ("agentic", "board_fen_pgn", "board = \"fen_pgn\"", AGENTIC),
    ("agentic", "board_in_prompt", "board_in_prompt = true", AGENTIC),
    ("agentic", "legal_moves_in_prompt", "legal_moves_in_prompt = true", AGENTIC),
    ("agentic", "only_make_move", "only_make_move = true", AGENTIC),
    ("agentic", "no_legal_moves", "legal_moves = false", AGENTIC),
    ("agentic", "previous_moves", "previous_moves = true", AGENTIC),
    ("agentic", "memory", "memory = true", AGENTIC),
    ("agentic", "single_request", "single_request = true", SINGLE_REQUEST),
    ("agentic", "reflection", "reflection = true", AGENTIC_REFLECTION),
    ("agentic", "strict", "rule = \"strict\"", AGENTIC_STRICT),
    ("agentic", "tools", "actions = \"tools\"", AGENTIC_TOOLS),
    ("agentic", "tools_reflection", "actions = \"tools\", reflection = true", AGENTIC_TOOLS_REFLECTION),
];

/// Every built-in task with the settings that change its words: (task, folder, the player's play
/// mode, the task's `options` as JSON). Every mode but bullet gets blitz's wording.
#[rustfmt::skip]
const TASKS: &[(&str, &str, &str, &str)] = &[
    ("basic_understanding", "default", "blitz", "{}"),
    ("basic_understanding", "bullet", "bullet", "{}"),
    ("move_selection", "default", "blitz", "{}"),
    ("move_selection", "no_legal_moves", "blitz", r#"{"legal_moves": false}"#),
    ("move_selection", "bullet", "bullet", "{}"),
    ("puzzles", "default", "blitz", "{}"),
    ("puzzles", "legal_moves", "blitz", r#"{"legal_moves": true}"#),
    ("puzzles", "bullet", "bullet", "{}"),
    ("board_reconstruction", "default", "blitz", "{}"),
    ("board_reconstruction", "uci", "blitz", r#"{"notation": "uci"}"#),
    ("board_reconstruction", "bullet", "bullet", "{}"),
];

/// Puzzle renderings: the replies given before the dialog is shown.
const PUZZLE_SCENES: &[(&str, &[&str])] = &[
    ("step1", &[]),
    ("step2", &["```\nd1d8\n```"]),
    ("feedback_illegal", &["```\nd1e2\n```"]),
    ("feedback_no_move", &["I give up."]),
];
/// Replies allowed per puzzle move (the run's default).
const PUZZLE_ATTEMPTS: u32 = 5;

#[test]
fn every_builtin_prompt_matches_its_golden_file() {
    let mut renderings = BTreeMap::new();
    let mut add = |path: String, text: String| {
        assert!(
            renderings.insert(PathBuf::from(&path), text).is_none(),
            "two cases write {path}"
        );
    };
    for (name, folder, options, scenes) in MODES {
        let (script, base) = mode(name, options);
        // Every mode's words in a Chess960 game too: its castling note appears there only.
        let chess960 = if *name == "agentic" {
            AGENTIC_CHESS960
        } else {
            CHESS960
        };
        for scene in scenes.iter().chain([&chess960]) {
            let ctx = turn_at(&script, &base, name, scene.at);
            add(
                format!("modes/{name}/{folder}/{}.txt", scene.name),
                converse(&script, ctx, scene.replies),
            );
        }
    }
    // The arms of `examples/think/` (the prompt of one replaced by `prompts/think.lua`), as
    // their games load them; `arena prompt` prints the same files (tests/integration/prompts.rs).
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/think/tournament.lua");
    let generation = crate::Generation::load(&example, 1).unwrap();
    for player in ["plain", "think"] {
        let binding = generation
            .spec
            .player(player)
            .unwrap()
            .mode_binding()
            .unwrap();
        let script = ModeScript::for_game(&generation, binding).unwrap();
        let (_, base) = mode("blitz", "");
        let base = TurnContext {
            options: script.options().clone(),
            max_attempts: script.max_attempts(),
            player: player.into(),
            ..base
        };
        for scene in [OPENING, MIDDLEGAME] {
            let ctx = turn_at(&script, &base, "blitz", scene.at);
            add(
                format!("examples/think/{player}/{}.txt", scene.name),
                converse(&script, ctx, scene.replies),
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for (task, folder, mode, options) in TASKS {
        let options: Map<String, Value> = serde_json::from_str(options).unwrap();
        let script = TaskScript::from_disk(dir.path(), &format!("tasks.{task}"), &options).unwrap();
        let base = hook_ctx(task, Some(mode), "m");
        if *task == "puzzles" {
            for (scene, replies) in PUZZLE_SCENES {
                let dialog = puzzle_dialog(&script, &base, replies);
                add(
                    format!("tasks/{task}/{folder}/{scene}.txt"),
                    render(&dialog, &Map::new()),
                );
            }
            continue;
        }
        for (item_name, item) in items(task) {
            let messages = script.prompt(&item, &item_ctx(base.clone())).unwrap();
            add(
                format!("tasks/{task}/{folder}/{item_name}.txt"),
                render(&messages, &Map::new()),
            );
        }
    }
    check_or_bless(&renderings);
}

/// The text of a golden file: each message as a `--- role ---` line followed by its exact content
/// and a newline, then the ply's extra request fields as pretty JSON when there are any.
fn render(messages: &[ChatMessage], request: &Map<String, Value>) -> String {
    render_with_tools(messages, request, &[])
}

/// [`render`], with each message's tool calls (a `[call ID] name arguments` line each after its
/// content), a tool result's call id in its heading, and the tools offered at the end.
fn render_with_tools(
    messages: &[ChatMessage],
    request: &Map<String, Value>,
    tools: &[ToolSpec],
) -> String {
    let mut out = String::new();
    for m in messages {
        match &m.tool_call_id {
            Some(id) => out += &format!("--- {} {id} ---\n{}\n", m.role, m.content),
            None => out += &format!("--- {} ---\n{}\n", m.role, m.content),
        }
        // The picture's pixels are pinned by `board::image`'s golden pictures; here, that it is
        // shown, and which one (its SHA-256 would tie the file to one architecture's rounding).
        for image in &m.images {
            out += &format!("--- image ({}) ---\n", image.media_type);
        }
        for call in &m.tool_calls {
            out += &format!("[call {}] {} {}\n", call.id, call.name, call.arguments);
        }
    }
    if !request.is_empty() {
        let json = serde_json::to_string_pretty(request).unwrap();
        out += &format!("--- request ---\n{json}\n");
    }
    if !tools.is_empty() {
        let json = serde_json::to_string_pretty(tools).unwrap();
        out += &format!("--- tools ---\n{json}\n");
    }
    out
}

/// The text and tool calls of a scene's reply (see [`TOOLS_OPENING`]); call ids are `call_N`
/// by the reply's number `n` and the call's position.
fn reply_calls(reply: &str, n: usize) -> (String, Vec<ToolCall>) {
    let Some(calls) = reply.strip_prefix("call:") else {
        return (reply.to_owned(), Vec::new());
    };
    let calls = calls
        .split(" + ")
        .enumerate()
        .map(|(i, call)| {
            let (name, arguments) = call.split_once(':').unwrap();
            ToolCall {
                arguments: arguments.to_owned(),
                id: format!("call_{n}_{i}"),
                name: name.to_owned(),
                signature: None,
                thinking: Vec::new(),
            }
        })
        .collect();
    (String::new(), calls)
}

/// Answers a reply as `answer_reply` in `crates/play/src/tournament/game.rs` does: a user message, or the
/// result of its first call with `other_calls` for the rest.
fn answer(dialog: &mut Vec<ChatMessage>, calls: &[ToolCall], text: String, other: Option<&str>) {
    match calls.split_first() {
        None => dialog.push(ChatMessage::new("user", text)),
        Some((first, rest)) => {
            dialog.push(ChatMessage::tool_result(&first.id, text));
            for call in rest {
                dialog.push(ChatMessage::tool_result(
                    &call.id,
                    other.unwrap_or_default(),
                ));
            }
        }
    }
}

/// `base` (the player, its options and limits) moved to the position after `moves` from `start`,
/// filled as `context` in `crates/play/src/tournament/game.rs` fills it.
fn context(base: &TurnContext, at: At, moves: &[&str]) -> TurnContext {
    let (start, _) = at.line();
    let mut game = Game::new_in(at.variant(), Some(start), 0).unwrap();
    for m in moves {
        game.play_uci(m).unwrap();
    }
    let pos = game.position();
    TurnContext {
        fen: game.fen(),
        start_fen: game.start_fen(),
        variant: game.variant().as_str(),
        side: if game.turn() == Color::White {
            "white"
        } else {
            "black"
        },
        ply: game.ply(),
        move_number: pos.fullmoves().get(),
        legal: std::sync::Arc::new(LegalMoves::of(pos)),
        history_uci: game.uci_history(),
        history_san: game.san_history(),
        last_move: game.uci_moves().last().cloned(),
        ..base.clone()
    }
}

/// The context of the player to move at `at`, with the dialog of its previous ply as the game
/// loop hands it over: each earlier ply of that player is opened by the mode and answered with
/// the move the player made there, so blindfold's and `memory`'s conversations are the real ones.
fn turn_at(script: &ModeScript, base: &TurnContext, mode: &str, at: At) -> TurnContext {
    let (_, moves) = at.line();
    let last = context(base, at, moves);
    let mut previous = Vec::new();
    for ply in (moves.len() % 2..moves.len()).step_by(2) {
        let mut earlier = context(base, at, &moves[..ply]);
        earlier.previous_dialog = previous.into();
        previous = script.start(&earlier).unwrap().messages;
        let answer = if mode == "agentic" {
            format!("make_move {}", moves[ply])
        } else if base.options.get("notation") == Some(&json!("san")) {
            format!("```\n{}\n```", last.history_san[ply])
        } else {
            format!("```\n{}\n```", moves[ply])
        };
        previous.push(ChatMessage::new("assistant", answer));
    }
    TurnContext {
        previous_dialog: previous.into(),
        ..last
    }
}

/// One ply's dialog after `replies`, rendered, as `llm_turn` in `crates/play/src/tournament/game.rs` builds it:
/// an answer (`say`) and feedback are added as user messages, a reset starts the ply over at the
/// next attempt, and a move or the last allowed failure ends the ply with nothing more sent.
fn converse(script: &ModeScript, mut ctx: TurnContext, replies: &[&str]) -> String {
    let opening = script.start(&ctx).unwrap();
    let (mut dialog, mut request, mut tools) = (opening.messages, opening.request, opening.tools);
    let mut attempt = 1;
    for (i, reply) in replies.iter().enumerate() {
        // `cut:` marks a reply that ended on the token limit (finish reason `length`).
        let (reply, cut) = match reply.strip_prefix(CUT) {
            Some(rest) => (rest, true),
            None => (*reply, false),
        };
        let (text, calls) = reply_calls(reply, i + 1);
        dialog.push(ChatMessage::assistant(text.clone(), calls.clone()));
        ctx.dialog = dialog.clone().into();
        ctx.finish_reason = cut.then(|| "length".to_owned());
        ctx.attempt = attempt;
        let decision = script.reply(&ctx, &text).unwrap();
        let other = decision.other_calls.clone();
        let retry = match decision.action {
            Action::Say(said) => {
                answer(&mut dialog, &calls, said, other.as_deref());
                continue;
            }
            Action::Retry(retry) if attempt < script.max_attempts() => retry,
            ended => {
                assert_eq!(
                    i + 1,
                    replies.len(),
                    "the ply ended ({ended:?}) at {text:?} with replies left"
                );
                break;
            }
        };
        attempt += 1;
        ctx.attempt = attempt;
        match retry {
            RetryAction::Feedback(feedback) => {
                answer(&mut dialog, &calls, feedback, other.as_deref())
            }
            RetryAction::Reset => {
                ctx.dialog = Default::default();
                let opening = script.start(&ctx).unwrap();
                (dialog, request, tools) = (opening.messages, opening.request, opening.tools);
            }
        }
    }
    render_with_tools(&dialog, &request, &tools)
}

/// The items of a one-answer task, by name, as the store keeps them (their JSON).
fn items(task: &str) -> Vec<(&'static str, Value)> {
    fn json(item: &impl serde::Serialize) -> Value {
        serde_json::to_value(item).unwrap()
    }
    let opening = Game::new(None, 0).unwrap();
    let mut middlegame = Game::new(None, 0).unwrap();
    for m in RUY_LOPEZ {
        middlegame.play_uci(m).unwrap();
    }
    let moves = |line: &[&str]| line.iter().map(|m| m.to_string()).collect::<Vec<_>>();
    let selection = |game: &Game, top: &[&str]| MoveSelectionItem {
        fen: game.fen(),
        legal_moves: render::legal_uci(game.position()),
        top_moves: moves(top),
        move_with_winrate: Vec::new(),
        system: None,
        prompts: BTreeMap::new(),
    };
    match task {
        "basic_understanding" => vec![
            (
                "opening_g1",
                json(&BasicItem::from_position(INITIAL, "g1").unwrap()),
            ),
            (
                "middlegame_f6",
                json(&BasicItem::from_position(&middlegame.fen(), "f6").unwrap()),
            ),
        ],
        "move_selection" => vec![
            (
                "opening",
                json(&selection(&opening, &["e2e4", "d2d4", "g1f3"])),
            ),
            (
                "middlegame",
                json(&selection(&middlegame, &["b7b5", "e8g8", "d7d6"])),
            ),
        ],
        "board_reconstruction" => vec![
            (
                "middlegame",
                json(&reconstruction_item(None, &moves(RUY_LOPEZ)).unwrap()),
            ),
            (
                "promotion",
                json(&reconstruction_item(Some(PROMOTION_START), &moves(PROMOTION_MOVES)).unwrap()),
            ),
        ],
        other => panic!("no items for task `{other}`"),
    }
}

/// A back-rank mate in two: Black's rook leaves the back rank (the setup move), then Rd8+ Re8
/// Rxe8#.
fn puzzle() -> Puzzle {
    Puzzle {
        id: "golden".into(),
        fen: "4r1k1/5ppp/8/8/8/8/5PPP/3R2K1 b - - 0 1".into(),
        moves: ["e8e2", "d1d8", "e2e8", "d8e8"].map(String::from).to_vec(),
        rating: 1200,
        rating_deviation: None,
        popularity: None,
        nb_plays: None,
        themes: vec!["backRankMate".into(), "mateIn2".into()],
        game_url: None,
        opening_tags: Vec::new(),
    }
}

/// The puzzle's dialog after `replies`, as `answer_puzzle` in `crates/play/src/eval/run.rs` builds it: a
/// fresh prompt per solver move, and after a refused answer the reply and the task's feedback.
fn puzzle_dialog(
    script: &TaskScript,
    base: &Map<String, Value>,
    replies: &[&str],
) -> Vec<ChatMessage> {
    let puzzle = puzzle();
    let item = serde_json::to_value(&puzzle).unwrap();
    let mut session = PuzzleSession::new(&puzzle, PUZZLE_ATTEMPTS).unwrap();
    let ctx = |session: &PuzzleSession| {
        let SessionState::Awaiting { step } = session.state().clone() else {
            panic!("the golden puzzle ended early: {:?}", session.state());
        };
        puzzle_ctx(base.clone(), session, step, PUZZLE_ATTEMPTS)
    };
    let mut dialog = Vec::new();
    for reply in replies {
        let ctx = ctx(&session);
        if dialog.is_empty() {
            dialog = script.prompt(&item, &ctx).unwrap();
        }
        let (outcome, error) = match script.parse(reply, &item, &ctx).unwrap() {
            Parsed::Answer(a) => (session.submit_uci(a["uci"].as_str().unwrap()), None),
            Parsed::Failed(e) => {
                let message = e["message"].as_str().unwrap_or("no move found").to_owned();
                (session.refuse_reply(message), Some(e))
            }
        };
        match outcome {
            Outcome::Retry(refusal) => {
                let err = error.unwrap_or(json!({"kind": "illegal", "message": refusal.message}));
                let feedback = script.feedback(&err, &item, &ctx).unwrap();
                dialog.push(ChatMessage::new("assistant", *reply));
                dialog.push(ChatMessage::new("user", feedback));
            }
            Outcome::Continue { .. } => dialog.clear(),
            Outcome::Finished(state) => panic!("the golden puzzle ended: {state:?}"),
        }
    }
    if dialog.is_empty() {
        dialog = script.prompt(&item, &ctx(&session)).unwrap();
    }
    dialog
}

/// Compares every rendering with its file (or, blessing, writes them) and reports files no case
/// makes; panics with every problem, each naming its file.
fn check_or_bless(renderings: &BTreeMap<PathBuf, String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(FIXTURES);
    let bless = std::env::var(BLESS).is_ok_and(|v| v == "1");
    let mut problems = Vec::new();
    for (rel, text) in renderings {
        let path = root.join(rel);
        let shown = Path::new(FIXTURES).join(rel);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            continue;
        }
        match std::fs::read(&path) {
            Ok(golden) if golden == text.as_bytes() => {}
            Ok(golden) => problems.push(format!(
                "{}: the prompt differs from the golden file (- golden, + now):\n{}",
                shown.display(),
                diff(&String::from_utf8_lossy(&golden), text)
            )),
            Err(e) => problems.push(format!("{}: no golden file ({e})", shown.display())),
        }
    }
    for path in files_under(&root) {
        let rel = path.strip_prefix(&root).unwrap();
        if !renderings.contains_key(rel) {
            if bless {
                std::fs::remove_file(&path).unwrap();
            } else {
                problems.push(format!(
                    "{}: stale golden file, no case renders it",
                    Path::new(FIXTURES).join(rel).display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} golden prompt file(s) do not match. If the change is meant, run \
         `{BLESS}=1 cargo test --lib golden` and review the diff.\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// Every file below `dir` (none when it does not exist).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Where `now` departs from `golden`, diff-style: the lines between their common first and last
/// lines, `-` for the golden file's and `+` for the new rendering's, with two lines of context.
fn diff(golden: &str, now: &str) -> String {
    let old: Vec<&str> = golden.split('\n').collect();
    let new: Vec<&str> = now.split('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = format!("@@ line {} @@\n", prefix + 1);
    for line in &old[prefix.saturating_sub(2)..prefix] {
        out += &format!("  {line}\n");
    }
    for line in &old[prefix..old.len() - suffix] {
        out += &format!("- {line}\n");
    }
    for line in &new[prefix..new.len() - suffix] {
        out += &format!("+ {line}\n");
    }
    for line in new[new.len() - suffix..].iter().take(2) {
        out += &format!("  {line}\n");
    }
    out
}
