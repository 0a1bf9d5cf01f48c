//! The Lua API as scripts see it: each test runs a snippet whose `assert`s check the behaviour.

use std::path::Path;

use super::{
    sources::Resolver,
    state::{Limits, new_state, run_chunk},
};

fn run(snippet: &str) {
    let lua = new_state(Resolver::from_disk(Path::new(".")), Limits::default()).unwrap();
    if let Err(e) = run_chunk(&lua, "test.lua", snippet) {
        panic!("{e}");
    }
}

fn fails(snippet: &str) -> String {
    let lua = new_state(Resolver::from_disk(Path::new(".")), Limits::default()).unwrap();
    run_chunk(&lua, "test.lua", snippet)
        .expect_err("the snippet should fail")
        .to_string()
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn find_move_returns_the_move_or_a_typed_error() {
    run(&format!(
        r#"
        local fen = "{START}"
        local m = arena.board.find_move("I like ```e2e4``` then ```d2d4```", fen, "chessarena")
        assert(m.uci == "d2d4" and m.san == "d4", m.uci)
        local m2, err = arena.board.find_move("no move here", fen, "chessarena")
        assert(m2 == nil and err.kind == "no_move_found", err.kind)
        local _, illegal = arena.board.find_move("```e2e5```", fen, "chessarena")
        assert(illegal.kind == "illegal" and illegal.candidate == "e2e5", illegal.kind)
        local san = arena.board.find_move("```Nf3```", fen, "chessarena")
        assert(san.uci == "g1f3")
        local bare = arena.board.find_move("my move: e2e4", fen, "tolerant")
        assert(bare.uci == "e2e4")
        local first = arena.board.find_move("```e2e4``` ```d2d4```", fen, {{ pick = "first", scope = "fenced" }})
        assert(first.uci == "e2e4")
        "#
    ));
}

#[test]
fn bad_parsing_rules_and_fens_raise() {
    let err = fails(&format!(
        r#"arena.board.find_move("x", "{START}", {{ pick = "middle" }})"#
    ));
    assert!(err.contains("`pick` cannot be `middle`"), "{err}");
    let err = fails(r#"arena.board.find_move("x", "not a fen", "tolerant")"#);
    assert!(err.contains("invalid FEN `not a fen`"), "{err}");
    let err = fails(&format!(
        r#"arena.board.find_move("x", "{START}", {{ pik = "last" }})"#
    ));
    assert!(err.contains("unknown parsing rule field `pik`"), "{err}");
}

#[test]
fn legal_moves_and_renderings() {
    run(&format!(
        r#"
        local fen = "{START}"
        assert(#arena.board.legal_moves(fen) == 20)
        local san = table.concat(arena.board.legal_moves(fen, "san"), " ")
        assert(san:find("Nf3"), san)
        local ascii = arena.board.render(fen, "ascii")
        assert(ascii:find("R N B Q K B N R") or ascii:find("RNBQKBNR"), ascii)
        assert(arena.board.render(fen, "fen") == fen)
        assert(#arena.board.render(fen, "unicode") > 0)
        assert(arena.board.forbidden_reasoning("```e2e4```") == false)
        assert(arena.board.forbidden_reasoning("I think e4 is best ```e2e4```") == true)
        "#
    ));
}

#[test]
fn templates_fill_variables_and_refuse_missing_ones() {
    run(
        r#"assert(arena.template("FEN: {{fen}} ({{ n }})", { fen = "x", n = 3 }) == "FEN: x (3)")"#,
    );
    let err = fails(r#"arena.template("{{missing}}", {})"#);
    assert!(
        err.contains("template variable `missing` is not set"),
        "{err}"
    );
}

#[test]
fn json_round_trips() {
    run(r#"
        local t = arena.json.decode('{"piece": "N", "legal_moves": ["g1f3", "g1h3"]}')
        assert(t.piece == "N" and #t.legal_moves == 2)
        local v, err = arena.json.decode("{broken")
        assert(v == nil and err:find("line 1"), err)
        assert(arena.json.encode({ a = 1 }) == '{"a":1}')
    "#);
}

#[test]
fn constructors_record_where_players_are_defined() {
    run(r#"
        local p = arena.random { name = "r" }
        assert(p.kind == "random")
        assert(p._defined_at == "test.lua:2", p._defined_at)
        local ok, err = pcall(arena.llm, { kind = "engine" })
        assert(not ok and tostring(err):find("was given kind"), tostring(err))
    "#);
}

/// A person is a player kind of its own, checked as strictly as the others: its fields typed,
/// an unknown one refused with the field it was meant to be.
#[test]
fn a_person_is_a_strictly_checked_player() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("t.lua");
    let write = |players: &str| {
        std::fs::write(
            &script,
            format!(r#"return arena.tournament {{ name = "t", players = {{ {players} }} }}"#),
        )
        .unwrap();
    };
    write(r#"arena.random { name = "r" }, arena.human { name = "me", show_reply = false }"#);
    let generation = crate::Generation::load(&script, 1).unwrap();
    match generation.spec.player("me").unwrap() {
        crate::spec::PlayerSpec::Human(h) => assert!(!h.show_reply),
        other => panic!("not a person: {other:?}"),
    }
    write(r#"arena.random { name = "r" }, arena.human { name = "me", show_replies = false }"#);
    let error = crate::Generation::load(&script, 1).unwrap_err().to_string();
    assert!(
        error.contains("show_replies") && error.contains("show_reply") && error.contains("t.lua:1"),
        "{error}"
    );
}

mod formats;
mod fuzz;
mod golden;
mod replaced;
mod stubs;

mod modes {
    use crate::{
        Generation, ModeScript,
        llm::ChatMessage,
        tournament::turn::{Action, LegalMoves, PlayMode, RetryAction, TurnContext},
    };

    /// Loads a tournament with the built-in `mode` and `options` for player `m`.
    fn load(mode: &str, options: &str) -> Result<Generation, crate::CheckErrors> {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("t.lua");
        std::fs::write(
            &script,
            format!(
                r#"return arena.tournament {{ name = "t", players = {{
                  arena.random {{ name = "r" }},
                  arena.llm {{ name = "m", base_url = "http://127.0.0.1:9/v1", model = "x",
                              mode = "{mode}", options = {{ {options} }} }} }} }}"#
            ),
        )
        .unwrap();
        Generation::load(&script, 1)
    }

    /// A game's states load the generation's modules from bytecode compiled by the first one;
    /// an error in a hook names the same `file:line` whichever way the module was loaded.
    #[test]
    fn every_state_of_a_generation_runs_its_modules_with_their_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("modes")).unwrap();
        std::fs::write(
            dir.path().join("modes/fails.lua"),
            "local M = {}\nfunction M.start(ctx)\n  if ctx.ply > 0 then error(\"no move at \" .. ctx.ply) end\n  return { { role = \"user\", content = \"go\" } }\nend\nfunction M.reply(ctx, text) return { move = \"e2e4\" } end\nreturn M\n",
        )
        .unwrap();
        let script = dir.path().join("t.lua");
        std::fs::write(
            &script,
            r#"return arena.tournament { name = "t", players = {
                 arena.random { name = "r" },
                 arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x",
                             mode = "fails" } } }"#,
        )
        .unwrap();
        let generation = Generation::load(&script, 1).unwrap();
        let binding = || generation.spec.player("m").unwrap().mode_binding().unwrap();
        let (_, mut ctx) = mode("blitz", "");
        ctx.ply = 3;
        for _ in 0..3 {
            let state = ModeScript::for_game(&generation, binding()).unwrap();
            let error = state.start(&ctx).unwrap_err().to_string();
            assert!(error.contains("modes/fails.lua:3"), "{error}");
            assert!(error.contains("no move at 3"), "{error}");
        }
        let compiled = generation.compiled_modules().names();
        assert!(
            compiled.iter().any(|m| m.ends_with("modes/fails.lua")),
            "{compiled:?}"
        );
    }

    /// The built-in `mode` with `options`, loaded the way a game loads it.
    pub(crate) fn mode(mode: &str, options: &str) -> (ModeScript, TurnContext) {
        let generation = load(mode, options).unwrap();
        let binding = generation.spec.player("m").unwrap().mode_binding().unwrap();
        let script = ModeScript::for_game(&generation, binding).unwrap();
        let pos = shakmaty::Chess::default();
        let ctx = TurnContext {
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            start_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            variant: "standard",
            side: "white",
            ply: 0,
            move_number: 1,
            legal: std::sync::Arc::new(LegalMoves::of(&pos)),
            history_uci: Default::default(),
            history_san: Default::default(),
            last_move: None,
            attempt: 1,
            max_attempts: script.max_attempts(),
            player: "m".into(),
            opponent: "r".into(),
            game: 1,
            options: script.options().clone(),
            dialog: Default::default(),
            previous_dialog: Default::default(),
            reasoning: None,
            finish_reason: None,
        };
        (script, ctx)
    }

    /// The hooks' `ctx` is built by hand (the move lists apart, the memory limit lifted) for
    /// speed: it must be exactly what serde makes of the whole context, on the first call and on
    /// later ones, a hook changing its table must change nothing the next call gets, and the
    /// state's memory limit must be back in place afterwards.
    #[test]
    fn the_ctx_table_is_what_serde_makes_of_the_context() {
        use mlua::{LuaSerdeExt, Value, serde::ser::Options};
        let (m, mut ctx) = mode("blitz", "history = 4");
        let lua = m.lua();
        // Every field as `pairs` sees it (which makes the move lists), as serde reads a table.
        let every_field: mlua::Function = lua
            .load(
                "return function(t) local c = {} for k, v in pairs(t) do c[k] = v end return c end",
            )
            .eval()
            .unwrap();
        let as_json = |v: Value| {
            let fields: Value = every_field.call(v).unwrap();
            lua.from_value::<serde_json::Value>(fields).unwrap()
        };
        let options = Options::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false);
        let by_serde = |ctx: &TurnContext| {
            let value = lua.to_value_with(ctx, options).unwrap();
            lua.from_value::<serde_json::Value>(value).unwrap()
        };
        // The empty history and dialog must stay arrays, as serde marks them.
        let first = m.ctx_value(&ctx).unwrap().0;
        assert_eq!(as_json(first.clone()), by_serde(&ctx));
        let Value::Table(t) = first else {
            panic!("not a table")
        };
        let legal: mlua::Table = t.get("legal_uci").unwrap();
        legal.raw_set(1, "changed").unwrap();
        ctx.history_uci = vec!["e2e4".into(), "e7e5".into()].into();
        ctx.history_san = vec!["e4".into(), "e5".into()].into();
        ctx.last_move = Some("e7e5".into());
        ctx.reasoning = Some("thought".into());
        ctx.dialog = vec![crate::llm::ChatMessage::new("user", "hi")].into();
        ctx.previous_dialog = vec![
            crate::llm::ChatMessage::new("system", "be brief"),
            crate::llm::ChatMessage::new("assistant", "é ```e2e4```\0 end"),
        ]
        .into();
        ctx.ply = 2;
        for _ in 0..2 {
            let value = m.ctx_value(&ctx).unwrap().0;
            assert_eq!(as_json(value.clone()), by_serde(&ctx));
            // Each call's messages are tables of its own.
            let Value::Table(t) = value else {
                panic!("not a table")
            };
            let previous: mlua::Table = t.get("previous_dialog").unwrap();
            let first: mlua::Table = previous.get(1).unwrap();
            first.raw_set("content", "changed").unwrap();
            let options: mlua::Table = t.get("options").unwrap();
            options.raw_set("history", 99).unwrap();
            let history: mlua::Table = t.get("history_san").unwrap();
            history.raw_set(1, "changed").unwrap();
        }
        // Options of every kind serde knows, nested, copied afresh for every call; a history
        // that is not the last one extended (another line) replaces the cached one.
        ctx.options.insert(
            "nested".into(),
            serde_json::json!({"list": [1, 2.5, "x", null, {"deep": [true, false]}], "empty": [], "none": null}),
        );
        ctx.history_uci = vec!["d2d4".into()].into();
        ctx.history_san = vec!["d4".into()].into();
        for _ in 0..2 {
            let value = m.ctx_value(&ctx).unwrap().0;
            assert_eq!(as_json(value.clone()), by_serde(&ctx));
            let Value::Table(t) = value else {
                panic!("not a table")
            };
            let options: mlua::Table = t.get("options").unwrap();
            let nested: mlua::Table = options.get("nested").unwrap();
            let list: mlua::Table = nested.get("list").unwrap();
            list.raw_set(1, "changed").unwrap();
        }
        ctx.history_uci = Default::default();
        ctx.history_san = Default::default();
        assert_eq!(as_json(m.ctx_value(&ctx).unwrap().0), by_serde(&ctx));
        // Lists that change after a common prefix, shrink, or start over are copied as they are.
        for (legal, history) in [
            (vec!["a2a3", "b1c3", "e1e2"], vec!["e2e4", "c7c5", "g1f3"]),
            (vec!["a2a3"], vec!["e2e4", "c7c5"]),
            (vec!["e1e2", "e1f1"], vec!["d2d4"]),
            (vec![], vec!["d2d4", "d7d5", "c2c4", "e7e6"]),
        ] {
            ctx.legal = std::sync::Arc::new(LegalMoves::given(
                legal.iter().map(|m| m.to_string()).collect(),
                legal.iter().map(|m| m.to_uppercase()).collect(),
            ));
            ctx.history_uci = history
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .into();
            ctx.history_san = history
                .iter()
                .map(|m| format!("{m}+"))
                .collect::<Vec<_>>()
                .into();
            let value = m.ctx_value(&ctx).unwrap().0;
            assert_eq!(as_json(value), by_serde(&ctx), "{legal:?} {history:?}");
        }
        let limit = super::Limits::default().memory_bytes;
        assert_eq!(lua.set_memory_limit(limit).unwrap(), limit);
    }

    /// The move lists of `ctx` are made when first read: a read gives the same table every
    /// time, `pairs` sees them all, an assignment before the first read is kept, the metatable
    /// cannot be taken away, and a `ctx` kept past its call keeps the lists it read and refuses
    /// the others with an error that says why.
    #[test]
    fn the_ctx_move_lists_are_made_on_first_read() {
        let (m, mut ctx) = mode("blitz", "");
        let lua = m.lua();
        ctx.history_uci = vec!["e2e4".to_string()].into();
        ctx.history_san = vec!["e4".to_string()].into();
        let (first, lists) = m.ctx_value(&ctx).unwrap();
        let during: mlua::Function = lua
            .load(
                r#"return function(first)
  assert(rawget(first, "legal_san") == nil, "made before it was read")
  local san = first.legal_san
  assert(#san == 20 and san[1] == "Na3", "the start position's SAN")
  assert(first.legal_san == san and rawget(first, "legal_san") == san, "made once")
  assert(getmetatable(first) == "ctx", "protected metatable")
  assert(not pcall(setmetatable, first, nil), "the metatable was taken away")
  -- Assigned before the first read, even nil: kept.
  first.legal_uci = nil
  assert(first.legal_uci == nil, "nil assignment lost")
  first.history_san = { "mine" }
  assert(first.history_san[1] == "mine", "assignment lost")
  return true
end"#,
            )
            .eval()
            .unwrap();
        assert!(during.call::<bool>(&first).unwrap());
        crate::ctx::ContextBuilder::release(lists);
        ctx.history_uci = vec!["d2d4".to_string(), "d7d5".to_string()].into();
        ctx.history_san = vec!["d4".to_string(), "d5".to_string()].into();
        let (second, _) = m.ctx_value(&ctx).unwrap();
        let after: mlua::Function = lua
            .load(
                r#"return function(first, second)
  assert(first.legal_san[1] == "Na3" and first.history_san[1] == "mine", "what was read is kept")
  local ok, err = pcall(function() return first.history_uci end)
  assert(not ok and tostring(err):find("ctx.history_uci was read after its hook returned", 1, true),
    tostring(err))
  assert(#second.history_uci == 2 and second.history_uci[1] == "d2d4", "the second's history")
  local seen = {}
  for k in pairs(second) do seen[k] = true end
  for _, k in ipairs({ "legal_uci", "legal_san", "history_uci", "history_san", "fen", "dialog" }) do
    assert(seen[k], "pairs missed " .. k)
  end
  return true
end"#,
            )
            .eval()
            .unwrap();
        assert!(after.call::<bool>((first, second)).unwrap());
    }

    #[test]
    fn bullet_rejects_any_word_besides_the_move_and_starts_over() {
        let (m, ctx) = mode("bullet", "");
        let ok = m.reply(&ctx, "```\ne2e4\n```").unwrap();
        assert_eq!(ok.action, Action::Move("e2e4".into()));
        let chatty = m
            .reply(&ctx, "The centre matters.\n```\ne2e4\n```")
            .unwrap();
        assert_eq!(chatty.action, Action::Retry(RetryAction::Reset));
        assert_eq!(chatty.outcome.as_deref(), Some("forbidden_reasoning"));
        let nothing = m.reply(&ctx, "pass").unwrap();
        assert!(matches!(
            nothing.action,
            Action::Retry(RetryAction::Feedback(_))
        ));
        assert_eq!(nothing.outcome.as_deref(), Some("no_move_found"));
        assert_eq!(nothing.candidate, None);
        // A refused move is named in the decision, for the record.
        let illegal = m.reply(&ctx, "```\ne2e5\n```").unwrap();
        assert_eq!(illegal.outcome.as_deref(), Some("illegal"));
        assert_eq!(illegal.candidate.as_deref(), Some("e2e5"));
        assert_eq!(m.max_attempts(), 5);
    }

    #[test]
    fn blitz_shows_what_its_options_ask_for() {
        let (m, mut ctx) = mode(
            "blitz",
            "legal_moves = false, history = 2, notation = \"san\"",
        );
        ctx.history_uci = vec!["e2e4".into(), "e7e5".into(), "g1f3".into()].into();
        ctx.history_san = vec!["e4".into(), "e5".into(), "Nf3".into()].into();
        let user = &m.start(&ctx).unwrap().messages[1].content;
        assert!(user.contains(&ctx.fen), "{user}");
        assert!(user.contains("e5 Nf3") && !user.contains("e4 e5"), "{user}");
        assert!(!user.contains("legal moves"), "{user}");
        let feedback = m.reply(&ctx, "```\nQh9\n```").unwrap();
        assert!(matches!(
            feedback.action,
            Action::Retry(RetryAction::Feedback(_))
        ));
    }

    #[test]
    fn blitz_grammar_constrains_the_answer_to_legal_moves() {
        let (m, ctx) = mode("blitz", "grammar = true");
        let opening = m.start(&ctx).unwrap();
        let grammar = opening.request["grammar"].as_str().unwrap();
        assert!(grammar.starts_with("root ::="), "{grammar}");
        assert!(grammar.contains("\"g1f3\"") && grammar.contains("\"e2e4\""));
        assert_eq!(grammar.matches('|').count(), 19, "20 legal moves");
    }

    #[test]
    fn blindfold_never_shows_the_board_and_keeps_one_dialog() {
        let (m, mut ctx) = mode("blindfold", "legal_moves = true");
        let first = m.start(&ctx).unwrap().messages;
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|msg| !msg.content.contains("/pppppppp/")));
        assert!(first[1].content.contains("The game begins"));

        // Two plies later: the previous dialog is carried on, its legal-move list dropped.
        ctx.ply = 2;
        ctx.history_uci = vec!["e2e4".into(), "e7e5".into()].into();
        ctx.history_san = vec!["e4".into(), "e5".into()].into();
        ctx.last_move = Some("e7e5".into());
        let mut previous = first.clone();
        previous.push(ChatMessage::new("assistant", "```\ne2e4\n```"));
        ctx.previous_dialog = previous.into();
        let next = m.start(&ctx).unwrap().messages;
        assert_eq!(next.len(), 4);
        assert_eq!(next[2].content, "```\ne2e4\n```");
        assert!(
            !next[1].content.contains("Your legal moves"),
            "{}",
            next[1].content
        );
        assert!(next[3].content.contains("Your opponent played e7e5"));
        assert!(next[3].content.contains("Your legal moves"));
    }

    #[test]
    fn single_turn_blindfold_sends_the_whole_move_list() {
        let (m, mut ctx) = mode("blindfold", "multi_turn = false");
        ctx.history_uci = vec!["e2e4".into(), "e7e5".into()].into();
        let messages = m.start(&ctx).unwrap().messages;
        assert_eq!(messages.len(), 2);
        assert!(messages[1].content.contains("e2e4 e7e5"));
        assert!(!messages[1].content.contains("legal moves"));
    }

    #[test]
    fn standard_asks_for_careful_reasoning() {
        let (m, ctx) = mode("standard", "");
        let system = &m.start(&ctx).unwrap().messages[0].content;
        assert!(system.contains("check every candidate move"), "{system}");
        let ok = m.reply(&ctx, "Long thought... ```\ng1f3\n```").unwrap();
        assert_eq!(ok.action, Action::Move("g1f3".into()));
    }

    mod agentic;
    mod bullet;
}

#[test]
fn board_images_are_png_pictures_a_message_can_show() {
    run(&format!(
        r#"
        local image = arena.board.image("{START}")
        assert(image.media_type == "image/png", image.media_type)
        assert(image.data:sub(2, 4) == "PNG", "a PNG signature")
        assert(arena.board.image("{START}").data == image.data, "the same bytes each time")
        local flipped = arena.board.image("{START}", {{ orientation = "black", coordinates = false }})
        assert(flipped.data ~= image.data)
        local small = arena.board.image("{START}", {{ size = 64, last_move = "e2e4" }})
        assert(#small.data < #image.data)
        "#
    ));
}

#[test]
fn bad_board_images_raise_at_the_callers_line() {
    for (call, expected) in [
        (
            r#"arena.board.image("not a fen")"#.to_owned(),
            "invalid FEN `not a fen`",
        ),
        (
            format!(r#"arena.board.image("{START}", {{ size = 10 }})"#),
            "64 to 2048 pixels wide, not 10",
        ),
        (
            format!(r#"arena.board.image("{START}", {{ orientation = "up" }})"#),
            "`orientation` cannot be `up`",
        ),
        (
            format!(r#"arena.board.image("{START}", {{ colour = "red" }})"#),
            "unknown board image option `colour`",
        ),
        (
            format!(r#"arena.board.image("{START}", {{ last_move = "e2" }})"#),
            "the last move `e2` is not a move in UCI",
        ),
    ] {
        let err = fails(&format!("local x = 1\n{call}"));
        assert!(err.contains("test.lua:2"), "{call}: {err}");
        assert!(err.contains(expected), "{call}: {err}");
    }
}
