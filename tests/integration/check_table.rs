//! `arena check` on broken scripts, one problem each: the exact output (every message at the
//! line of its field, in plain words, nothing more), and a script with several problems at once.

use crate::common::{TestDir, stderr, stdout, stockfish};

/// One broken script: its files, and everything `arena check t.lua` prints.
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    expected: &'static str,
    /// Whether it needs Stockfish (its problem shows when the engine starts).
    engine: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "max_plies_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  max_plies = "twenty",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `max_plies` must be a whole number, not the text "twenty"
"#,
        engine: false,
    },
    Case {
        name: "games_per_pair_is_a_fraction",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  games_per_pair = 2.5,
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `games_per_pair` must be a whole number, not 2.5
"#,
        engine: false,
    },
    Case {
        name: "seed_is_negative",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  seed = -1,
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `seed` must be a whole number of 0 or more, not -1
"#,
        engine: false,
    },
    Case {
        name: "include_book_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  max_plies_include_book = "yes",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `max_plies_include_book` must be true or false, not the text "yes"
"#,
        engine: false,
    },
    Case {
        name: "concurrency_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  concurrency = "many",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `concurrency` must be a whole number, not the text "many"
"#,
        engine: false,
    },
    Case {
        name: "misspelt_tournament_key",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  games_per_par = 2,
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: unknown key `games_per_par`; did you mean `games_per_pair`?
"#,
        engine: false,
    },
    Case {
        name: "misspelt_format",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  format = "round_robbin",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: unknown format `round_robbin` (no formats/round_robbin.lua in the script's folder or the built-ins); did you mean "round_robin"?
"#,
        engine: false,
    },
    Case {
        name: "unknown_format_option",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  format = "matchmaker",
  format_options = { max_game = 10 },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:4: format `formats.matchmaker` has no option `max_game` (its options: compat, criterion, focus, max_games, target, target_rd, top_k); did you mean `max_games`?
"#,
        engine: false,
    },
    Case {
        name: "missing_book",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { file = "nope.epd" },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: opening book `nope.epd` not found relative to the script's folder {dir}; built-in books: 2moves_v1, 8moves_v3
"#,
        engine: false,
    },
    Case {
        name: "broken_fen",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { fens = { "not a fen" } },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: openings.fens[1]: `not a fen`: expected at least 4 fields (board, side, castling, en passant) in `not a fen`
"#,
        engine: false,
    },
    Case {
        name: "unknown_opening_order",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { order = "shuffled" },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `openings.order` cannot be "shuffled" (it is one of "sequential" or "random")
"#,
        engine: false,
    },
    Case {
        name: "chess960_without_count",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = {
      chess960 = true,
    },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: `chess960 = true` draws `count` start positions from the seed: give `count` (1 to 960), or list the start numbers (`chess960 = { 518, 0 }`)
"#,
        engine: false,
    },
    Case {
        name: "opening_count_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { count = "ten" },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `openings.count` must be a whole number, not the text "ten"
"#,
        engine: false,
    },
    Case {
        name: "negative_price",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  prices = {
      m = { input_per_mtok = -1, output_per_mtok = 1 },
    },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:4: prices: `m`: `input_per_mtok` must be a finite number of at least 0 (USD per million tokens), not -1
"#,
        engine: false,
    },
    Case {
        name: "misspelt_price_key",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  prices = {
      m = { input = 1, output_per_mtok = 1 },
    },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:4: unknown key `input` in `prices.m` (the keys are: input_per_mtok, output_per_mtok, reasoning_per_mtok, cached_input_per_mtok, cache_write_per_mtok)
"#,
        engine: false,
    },
    Case {
        name: "analysis_depth_zero",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  analysis = {
      depth = 0,
    },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:4: analysis: `depth` must be at least 1
"#,
        engine: false,
    },
    Case {
        name: "unknown_win_model",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  analysis = { win_model = "elo" },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `analysis.win_model` cannot be "elo" (it is one of "chessarena" or "lichess")
"#,
        engine: false,
    },
    Case {
        name: "misspelt_analysis_key",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  analysis = { depht = 10 },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: unknown key `depht` in `analysis`; did you mean `depth`?
"#,
        engine: false,
    },
    Case {
        name: "budget_zero",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  budget = { usd = 0 },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `budget`: budget `usd` must be a finite number above 0, not 0
"#,
        engine: false,
    },
    Case {
        name: "misspelt_budget_key",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  budget = { dollars = 5 },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: unknown key `dollars` in `budget` (the keys are: usd, tokens)
"#,
        engine: false,
    },
    Case {
        name: "clock_without_time",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  time_control = { base_s = 0 },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `time_control`: time control `base_s` = 0 without an `increment_s` leaves no time to move
"#,
        engine: false,
    },
    Case {
        name: "misspelt_adjudication_rule",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  adjudication = {
      engine = "stockfish",
      resing = { score_cp = 1000, moves = 4 },
    },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: unknown key `resing` in `adjudication`; did you mean `resign`?
"#,
        engine: false,
    },
    Case {
        name: "no_name",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  players = { arena.random { name = "a" }, arena.random { name = "b" } },
}
"#,
        )],
        expected: r#"t.lua:1: `name` is missing
"#,
        engine: false,
    },
    Case {
        name: "players_not_a_list",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = "a, b",
}
"#,
        )],
        expected: r#"t.lua:3: `players` must be a list of players, not text
"#,
        engine: false,
    },
    Case {
        name: "one_player",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
  },
}
"#,
        )],
        expected: r#"t.lua:1: a tournament needs at least two players, `players` has 1
"#,
        engine: false,
    },
    Case {
        name: "misspelt_player_key_no_follow_on",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", max_token = 10 },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: unknown key `max_token`; did you mean `max_tokens`?
"#,
        engine: false,
    },
    Case {
        name: "temperature_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", temperature = "hot" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `temperature` must be a number, not the text "hot"
"#,
        engine: false,
    },
    Case {
        name: "model_missing",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `model` is missing
"#,
        engine: false,
    },
    Case {
        name: "top_p_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", top_p = "x" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `top_p` must be a number, not the text "x"
"#,
        engine: false,
    },
    Case {
        name: "max_tokens_negative",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", max_tokens = -5 },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `max_tokens` must be a whole number of 0 or more, not -5
"#,
        engine: false,
    },
    Case {
        name: "misspelt_provider",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", provider = "opneai" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: unknown llm provider `opneai` (known: openai_chat, openai, openai_responses, anthropic, gemini)
"#,
        engine: false,
    },
    Case {
        name: "misspelt_mode",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "blits" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: unknown play mode `blits` (no modes/blits.lua in the script's folder or the built-ins); did you mean "blitz"?
"#,
        engine: false,
    },
    Case {
        name: "misspelt_mode_option",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", options = { histroy = 3 } },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: play mode `modes.blitz` has no option `histroy`; did you mean `history`?
"#,
        engine: false,
    },
    Case {
        name: "mode_option_of_wrong_type",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", options = { max_attempts = "3" } },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: option `max_attempts` must be a whole number (its default is 5), not the text "3"
"#,
        engine: false,
    },
    Case {
        name: "misspelt_mode_option_value",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", options = { parser = "tolerent" } },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: option `parser` cannot be "tolerent" (it is one of "chessarena", "chessarena_any" or "tolerant"); did you mean "tolerant"?
"#,
        engine: false,
    },
    Case {
        name: "misspelt_on_rejected",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", on_rejected = "forfit" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `on_rejected` cannot be "forfit" (it is one of "void" or "forfeit"); did you mean "forfeit"?
"#,
        engine: false,
    },
    Case {
        name: "api_key_in_script",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", api_key = "sk-123" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: an API key must not be written in a script; put it in an environment variable and name that variable with `api_key_env`
"#,
        engine: false,
    },
    Case {
        name: "max_concurrency_zero",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", max_concurrency = 0 },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `max_concurrency` must be at least 1
"#,
        engine: false,
    },
    Case {
        name: "extra_body_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", extra_body = "grammar" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `m`: `extra_body` must be a table, not text
"#,
        engine: false,
    },
    Case {
        name: "player_clock_unknown_key",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b", time_control = { base_s = 60, increment = 1 } },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `b`: unknown key `increment` in `time_control`; did you mean `increment_s`?
"#,
        engine: false,
    },
    Case {
        name: "engine_not_installed",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.engine { name = "sf", command = "stockfishh" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `sf`: engine `stockfishh` is not installed (not on PATH, not in /usr/games): did you mean `stockfish`?
"#,
        engine: true,
    },
    Case {
        name: "engine_option_misspelt",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.engine {
      name = "sf",
      options = { ["Skil Level"] = 3 },
    },
  },
}
"#,
        )],
        expected: r#"t.lua:7: player `sf`: engine `stockfish` has no option `Skil Level`; did you mean `Skill Level`?
"#,
        engine: true,
    },
    Case {
        name: "engine_limit_misspelt",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.engine { name = "sf", limits = { node = 1000 } },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `sf`: unknown key `node` in `limits`; did you mean `nodes`?
"#,
        engine: false,
    },
    Case {
        name: "random_move_p_above_one",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.engine { name = "sf", random_move_p = 2 },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `sf`: `random_move_p` must be a probability between 0 and 1, not 2
"#,
        engine: false,
    },
    Case {
        name: "engine_args_not_a_list",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.engine { name = "sf", args = "--uci" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `sf`: `args` must be a list of text, not text
"#,
        engine: false,
    },
    Case {
        name: "random_seed_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b", seed = "x" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `b`: `seed` must be a whole number, not the text "x"
"#,
        engine: false,
    },
    Case {
        name: "anchor_elo_is_text",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.random { name = "b", anchor_elo = "high" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `b`: `anchor_elo` must be a number, not the text "high"
"#,
        engine: false,
    },
    Case {
        name: "misspelt_kind",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    { kind = "rnadom", name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: player `b`: unknown kind `rnadom` (expected "llm", "moa", "engine", "random" or "human"); did you mean "random"?
"#,
        engine: false,
    },
    Case {
        name: "moa_without_proposers",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.moa {
      name = "b",
      proposers = {},
      synthesizer = { base_url = "http://127.0.0.1:9/v1", model = "x" },
    },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `b`: a mixture of agents needs at least one proposer
"#,
        engine: false,
    },
    Case {
        name: "moa_with_tools",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.moa {
      name = "b", mode = "agentic", options = { actions = "tools" },
      proposers = { { base_url = "http://127.0.0.1:9/v1", model = "x" } },
      synthesizer = { base_url = "http://127.0.0.1:9/v1", model = "x" },
    },
  },
}
"#,
        )],
        expected: r#"t.lua:5: player `b`: `actions = "tools"` is for a single model (`arena.llm`): a mixture of agents merges its proposers' texts into one reply and cannot merge tool calls; use `actions = "text"`
"#,
        engine: false,
    },
    Case {
        name: "moa_proposer_misspelt_key",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.moa {
      name = "b",
      proposers = {
        { base_url = "http://127.0.0.1:9/v1", modle = "x" },
      },
      synthesizer = { base_url = "http://127.0.0.1:9/v1", model = "x" },
    },
  },
}
"#,
        )],
        expected: r#"t.lua:8: player `b`: unknown key `modle` in `proposers[1]`; did you mean `model`?
"#,
        engine: false,
    },
    Case {
        name: "two_players_one_name",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.random { name = "a" },
  },
}
"#,
        )],
        expected: r#"t.lua:5: two players are named `a`
"#,
        engine: false,
    },
    Case {
        name: "missing_module_in_a_mode",
        files: &[
            (
                r#"t.lua"#,
                r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "coach" },
  },
}
"#,
            ),
            (
                r#"modes/coach.lua"#,
                r#"local M = require("modes.blitz")
local prompts = require("prompts.coachh")
return M
"#,
            ),
            (
                r#"prompts/coach.lua"#,
                r#"return {}
"#,
            ),
        ],
        expected: r#"modes/coach.lua:2: player `m`: module `prompts.coachh` not found (looked for prompts/coachh.lua, prompts/coachh/init.lua, scripts/prompts/coachh.lua); did you mean `prompts.coach`?
"#,
        engine: false,
    },
    Case {
        name: "syntax_error_in_a_prompt",
        files: &[
            (
                r#"t.lua"#,
                r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "coach" },
  },
}
"#,
            ),
            (
                r#"modes/coach.lua"#,
                r#"local prompts = require("prompts.coach")
return require("modes.blitz")
"#,
            ),
            (
                r#"prompts/coach.lua"#,
                r#"local P = {}
function P.system(ctx)
  return = 1
end
return P
"#,
            ),
        ],
        expected: r#"prompts/coach.lua:3: player `m`: unexpected symbol near '='
"#,
        engine: false,
    },
    Case {
        name: "one_broken_prompt_shared_by_two_players_is_one_message",
        files: &[
            (
                "t.lua",
                r#"return arena.tournament {
  name = "t",
  players = {
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "coach" },
    arena.llm { name = "n", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "coach" },
  },
}
"#,
            ),
            (
                "modes/coach.lua",
                r#"local M = require("modes.blitz")
local p = require("prompts.coach")
return { defaults = M.defaults, reply = M.reply,
  start = function(ctx) return { { role = "user", content = p.text(ctx) } } end }
"#,
            ),
            (
                "prompts/coach.lua",
                "local P = {}\nfunction P.text(ctx)\n  return \"x\" .. ctx.nope\nend\nreturn P\n",
            ),
        ],
        expected: "prompts/coach.lua:3: players `m`, `n`: attempt to concatenate a nil value (field 'nope')\n",
        engine: false,
    },
    // A script error and what the run would refuse at start-up, in one run: the book and the
    // engine of what did read are opened although another field is wrong.
    Case {
        name: "missing_book_and_a_script_error",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { file = "nope.epd" },
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", max_token = 10 },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: opening book `nope.epd` not found relative to the script's folder {dir}; built-in books: 2moves_v1, 8moves_v3
t.lua:6: player `m`: unknown key `max_token`; did you mean `max_tokens`?
"#,
        engine: false,
    },
    Case {
        name: "engine_not_installed_and_a_script_error",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  players = {
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", temperature = "hot" },
    arena.engine { name = "sf", command = "stockfishh" },
  },
}
"#,
        )],
        expected: r#"t.lua:4: player `m`: `temperature` must be a number, not the text "hot"
t.lua:5: player `sf`: engine `stockfishh` is not installed (not on PATH, not in /usr/games): did you mean `stockfish`?
"#,
        engine: true,
    },
    Case {
        name: "evaluation_dataset_missing",
        files: &[(
            r#"t.lua"#,
            r#"return arena.evaluation {
  name = "e",
  tasks = { { task = "puzzles", data = "nope.jsonl" } },
  players = {
    arena.random { name = "rnd" },
  },
}
"#,
        )],
        expected: "t.lua:1: task `puzzles`: failed to read `./nope.jsonl`: No such file or directory (os error 2)\n",
        engine: false,
    },
    Case {
        name: "built_in_book_misspelt",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { book = "2move_v1" },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: no built-in opening book `2move_v1` (the built-in books: 2moves_v1, 8moves_v3); did you mean "2moves_v1"?
"#,
        engine: false,
    },
    Case {
        name: "book_path_of_the_repository_from_another_folder",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { file = "books/2moves_v1.epd", count = 4 },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: opening book `books/2moves_v1.epd` not found relative to the script's folder {dir}; built-in books: 2moves_v1, 8moves_v3; did you mean `book = "2moves_v1"`?
"#,
        engine: false,
    },
    Case {
        name: "built_in_book_and_a_file",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  openings = { book = "2moves_v1", file = "mine.epd" },
  players = {
    arena.random { name = "a" },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: openings: give a built-in `book` or a book `file`, not both
t.lua:3: openings: opening book `mine.epd` not found relative to the script's folder {dir}; built-in books: 2moves_v1, 8moves_v3
"#,
        engine: false,
    },
    Case {
        // Each kind of problem in one script, all in one pass: a wrong type and a misspelt key
        // of the tournament, a book that is not there, an engine misspelt, and a player with
        // a problem of its own whose engine option is misspelt too.
        name: "every_kind_of_problem_in_one_pass",
        files: &[(
            r#"t.lua"#,
            r#"return arena.tournament {
  name = "t",
  max_plies = "twenty",
  games_per_par = 2,
  openings = { file = "books/2moves_v1.epd" },
  players = {
    arena.engine { name = "sf", command = "stockfsh" },
    arena.engine { name = "sf2", seed = "x",
      options = { ["Skil Level"] = 3 } },
    arena.random { name = "b" },
  },
}
"#,
        )],
        expected: r#"t.lua:3: `max_plies` must be a whole number, not the text "twenty"
t.lua:4: unknown key `games_per_par`; did you mean `games_per_pair`?
t.lua:5: openings: opening book `books/2moves_v1.epd` not found relative to the script's folder {dir}; built-in books: 2moves_v1, 8moves_v3; did you mean `book = "2moves_v1"`?
t.lua:7: player `sf`: engine `stockfsh` is not installed (not on PATH, not in /usr/games): did you mean `stockfish`?
t.lua:8: player `sf2`: `seed` must be a whole number, not the text "x"
t.lua:9: player `sf2`: engine `stockfish` has no option `Skil Level`; did you mean `Skill Level`?
"#,
        engine: true,
    },
    Case {
        // An evaluation's problems in one pass: a wrong type of its own, a task with a misspelt
        // key, and the data sets of both tasks not there.
        name: "evaluation_every_kind_of_problem_in_one_pass",
        files: &[(
            r#"t.lua"#,
            r#"return arena.evaluation {
  name = "e",
  concurrency = "two",
  tasks = {
    { task = "puzzles", data = "nope.jsonl" },
    { task = "puzzles", name = "p2", data = "gone.jsonl", limt = 3 },
  },
  players = {
    arena.random { name = "rnd" },
  },
}
"#,
        )],
        expected: r#"t.lua:1: task `puzzles`: failed to read `./nope.jsonl`: No such file or directory (os error 2)
t.lua:1: task `p2`: failed to read `./gone.jsonl`: No such file or directory (os error 2)
t.lua:3: `concurrency` must be a whole number, not the text "two"
t.lua:6: task 2: unknown key `limt`; did you mean `limit`?
"#,
        engine: false,
    },
];

#[test]
fn each_broken_script_gets_exactly_its_problem_at_its_line() {
    assert!(CASES.len() >= 40, "{} cases", CASES.len());
    let has_engine = stockfish("each_broken_script_gets_exactly_its_problem_at_its_line");
    let mut failures = Vec::new();
    for case in CASES {
        if case.engine && !has_engine {
            continue;
        }
        let dir = TestDir::new();
        for (path, text) in case.files {
            dir.write(path, text);
        }
        let out = dir
            .arena()
            .args(["check", "t.lua"])
            .output()
            .expect("arena runs");
        let text = format!("{}{}", stdout(&out), stderr(&out));
        // A file not found is looked for in the script's folder, named in full.
        let folder = dir.path().canonicalize().unwrap();
        let expected = case
            .expected
            .replace("{dir}", &folder.display().to_string());
        if out.status.code() != Some(2) || text != expected {
            failures.push(format!(
                "{} (exit {:?}):\n--- expected\n{}--- got\n{}",
                case.name,
                out.status.code(),
                expected,
                text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn five_problems_one_in_a_module_are_five_messages_at_their_own_lines() {
    let dir = TestDir::new();
    dir.write(
        "modes/coach.lua",
        "local M = require(\"modes.blitz\")\nlocal prompts = require(\"prompts.coachh\")\nreturn M\n",
    );
    dir.write("prompts/coach.lua", "return {}\n");
    dir.write(
        "t.lua",
        r#"-- five problems
return arena.tournament {
  name = "t",
  max_plies = "twenty",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x",
      max_token = 10,
      temperature = "hot",
      mode = "coach",
    },
    arena.llm { name = "n", base_url = "http://127.0.0.1:9/v1", model = "x",
      options = { max_attempts = "3", parser = "tolerent" },
    },
  },
}
"#,
    );
    let out = dir
        .arena()
        .args(["check", "t.lua"])
        .output()
        .expect("arena runs");
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert_eq!(
        text,
        r#"modes/coach.lua:2: player `m`: module `prompts.coachh` not found (looked for prompts/coachh.lua, prompts/coachh/init.lua, scripts/prompts/coachh.lua); did you mean `prompts.coach`?
t.lua:4: `max_plies` must be a whole number, not the text "twenty"
t.lua:8: player `m`: unknown key `max_token`; did you mean `max_tokens`?
t.lua:9: player `m`: `temperature` must be a number, not the text "hot"
t.lua:13: player `n`: option `max_attempts` must be a whole number (its default is 5), not the text "3"
t.lua:13: player `n`: option `parser` cannot be "tolerent" (it is one of "chessarena", "chessarena_any" or "tolerant"); did you mean "tolerant"?
"#
    );
}

#[test]
fn online_check_names_a_model_the_endpoint_does_not_serve() {
    let fake = crate::common::fake_openai(0);
    let dir = TestDir::new();
    let script = |model: &str| {
        format!(
            "return arena.tournament {{\n  name = \"t\",\n  players = {{\n    arena.random {{ name = \"a\" }},\n    arena.llm {{ name = \"m\", base_url = \"{url}\",\n      model = \"{model}\" }},\n    arena.llm {{ name = \"n\", base_url = \"{url}\", model = \"fake-random-mover\" }},\n  }},\n}}\n",
            url = fake.url
        )
    };
    dir.write("t.lua", &script("fake-random-movr"));
    let out = dir
        .arena()
        .args(["check", "--online", "t.lua"])
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert_eq!(
        text,
        format!(
            "t.lua:6: player `m`: {} does not serve the model `fake-random-movr`; did you mean `fake-random-mover`?\n",
            fake.url
        )
    );
    // Offline, the model list is not asked for.
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir.write("t.lua", &script("fake-random-mover"));
    let out = dir
        .arena()
        .args(["check", "--online", "t.lua"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
