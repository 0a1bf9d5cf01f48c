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
