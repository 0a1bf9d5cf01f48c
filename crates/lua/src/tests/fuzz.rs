//! Properties of the Lua side's readers of outside input: every built-in mode's `reply` hook on
//! any model reply, and every API function that expects a table given any Lua value. See
//! `crate::fuzz` for the case counts and the hostile corpus.

use std::path::Path;

use proptest::{prelude::*, test_runner::TestRunner};
use shakmaty::{Color, Position, san::SanPlus};

use super::super::{
    sources::Resolver,
    state::{Limits, new_state, run_chunk},
};
use super::modes::mode;
use crate::{
    ModeScript,
    board::game::{fen_of, uci_of},
    fuzz::{Playout, any_position, config, hostile_texts, plain_text, reply_text},
    tournament::turn::{Action, LegalMoves, PlayMode, TurnContext},
};

/// Every built-in mode with every move reader it offers, and the format of a reply that holds
/// exactly one move in it (`{}` is the move; `free` says whether other words may surround it).
const MODES: &[(&str, &str, &str, bool)] = &[
    ("bullet", "", "```{}```", false),
    ("blitz", "", "```{}```", true),
    ("blitz", "parser = \"chessarena_any\"", "```{}```", true),
    ("blitz", "parser = \"tolerant\"", "<move>{}</move>", true),
    ("standard", "", "```{}```", true),
    ("blindfold", "", "```{}```", true),
    ("blindfold", "parser = \"tolerant\"", "```{}```", true),
    ("agentic", "", "make_move {}", false),
    ("agentic", "rule = \"strict\"", "make_move {}", false),
];

/// The context of a ply in the final position of `p`.
fn at(ctx: &TurnContext, p: &Playout) -> TurnContext {
    let mut ctx = ctx.clone();
    ctx.fen = fen_of(&p.position);
    ctx.variant = p.variant.as_str();
    ctx.side = match p.position.turn() {
        Color::White => "white",
        Color::Black => "black",
    };
    ctx.legal = std::sync::Arc::new(LegalMoves::of(&p.position));
    ctx
}

fn legal_uci(p: &Playout) -> Vec<String> {
    p.position
        .legal_moves()
        .iter()
        .map(|m| uci_of(&p.position, m))
        .collect()
}

fn modes() -> Vec<(String, ModeScript, TurnContext, &'static str, bool)> {
    MODES
        .iter()
        .map(|(name, options, format, free)| {
            let (script, ctx) = mode(name, options);
            (format!("{name} {{{options}}}"), script, ctx, *format, *free)
        })
        .collect()
}

/// Any reply to any mode gives a move that is legal, a retry, a say or a forfeit; never an
/// error of the hook.
#[test]
fn fuzz_any_reply_to_any_mode_is_a_decision() {
    let modes = modes();
    let mut runner = TestRunner::new(config(64));
    runner
        .run(&(reply_text(), any_position()), |(text, p)| {
            for (name, script, ctx, _, _) in &modes {
                let ctx = at(ctx, &p);
                let decision = script
                    .reply(&ctx, &text)
                    .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
                if let Action::Move(uci) = &decision.action {
                    prop_assert!(legal_uci(&p).contains(uci), "{name}: {uci} from {text:?}");
                }
            }
            Ok(())
        })
        .unwrap();
    for (corpus, text) in hostile_texts() {
        for (name, script, ctx, _, _) in &modes {
            if let Err(e) = script.reply(ctx, &text) {
                panic!("{name} on {corpus}: {e}");
            }
        }
    }
}

/// A reply holding exactly one legal move in the mode's format is read as that move.
#[test]
fn fuzz_one_move_in_the_modes_format_is_that_move() {
    let modes = modes();
    let mut runner = TestRunner::new(config(64));
    runner
        .run(
            &(any_position(), any::<usize>(), plain_text(), plain_text()),
            |(p, index, before, after)| {
                let legal = p.position.legal_moves();
                let mv = legal[index % legal.len()];
                let uci = uci_of(&p.position, &mv);
                let _san = SanPlus::from_move(p.position.clone(), mv);
                for (name, script, ctx, format, free) in &modes {
                    let ctx = at(ctx, &p);
                    let one = format.replace("{}", &uci);
                    let reply = if *free {
                        format!("{before}{one}{after}")
                    } else {
                        format!(" {one}\n")
                    };
                    let decision = script
                        .reply(&ctx, &reply)
                        .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
                    prop_assert_eq!(
                        &decision.action,
                        &Action::Move(uci.clone()),
                        "{} on {:?} in `{}`",
                        name,
                        reply,
                        ctx.fen
                    );
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Lua source for any value: scalars, odd numbers, functions, coroutines, nested tables, and
/// tables whose metatable raises on every read.
fn lua_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("nil".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        any::<i64>().prop_map(|n| format!("({n})")),
        any::<f64>().prop_map(|x| {
            if x.is_finite() {
                format!("({x:e})")
            } else {
                "(0/0)".to_owned()
            }
        }),
        Just("(1/0)".to_owned()),
        Just("math.mininteger".to_owned()),
        "[a-zA-Z0-9_ .:=-]{0,12}".prop_map(|s| format!("{s:?}")),
        Just("function() end".to_owned()),
        Just("function() error('boom') end".to_owned()),
        Just("coroutine.create(function() end)".to_owned()),
        Just("setmetatable({}, { __index = function() error('trap') end })".to_owned()),
        Just("setmetatable({}, { __pairs = function() error('trap') end })".to_owned()),
        Just("setmetatable({}, { __len = function() return -1 end })".to_owned()),
        Just("string.rep('x', 100000)".to_owned()),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        proptest::collection::vec(
            (
                proptest::option::of(prop_oneof![
                    proptest::sample::select(
                        &[
                            "name",
                            "model",
                            "base_url",
                            "players",
                            "mode",
                            "options",
                            "command",
                            "rounds",
                            "games",
                            "openings",
                            "format",
                            "limits",
                            "max_tokens",
                            "provider",
                            "elo",
                            "players",
                            "score",
                            "white",
                            "black",
                            "rating",
                        ][..]
                    )
                    .prop_map(|k| k.to_owned()),
                    "[a-z_]{1,8}",
                ]),
                inner,
            ),
            0..5,
        )
        .prop_map(|fields| {
            let body: Vec<String> = fields
                .into_iter()
                .map(|(key, value)| match key {
                    Some(key) => format!("[{key:?}] = {value}"),
                    None => value,
                })
                .collect();
            format!("{{ {} }}", body.join(", "))
        })
    })
}

/// The API functions that expect a table, with `V` where the value goes.
const TAKES_A_TABLE: &[&str] = &[
    "arena.tournament(V)",
    "arena.llm(V)",
    "arena.engine(V)",
    "arena.random(V)",
    "arena.moa(V)",
    "arena.experiment(V)",
    "arena.evaluation(V)",
    "arena.pairing.dutch(V)",
    "arena.rating.glicko.rate(V)",
    "arena.rating.elo.estimate(V)",
    "arena.rating.glicko.update(V, V, 0.5)",
    "arena.board.find_move('e2e4', 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', V)",
    "arena.template('{{x}}', V)",
    "arena.json.encode(V)",
];

/// Any Lua value where the API expects a table gives a result or an error naming `file:line`.
#[test]
fn fuzz_any_lua_value_where_a_table_is_expected() {
    let lua = new_state(Resolver::from_disk(Path::new(".")), Limits::default()).unwrap();
    let mut runner = TestRunner::new(config(64));
    runner
        .run(&lua_value(), |value| {
            for call in TAKES_A_TABLE {
                let chunk = format!("local v = {value}\n{}\n", call.replace('V', "v"));
                if let Err(e) = run_chunk(&lua, "test.lua", &chunk) {
                    let text = e.to_string();
                    prop_assert!(text.contains("test.lua:"), "{call} with {value}: {text}");
                }
            }
            Ok(())
        })
        .unwrap();
}
