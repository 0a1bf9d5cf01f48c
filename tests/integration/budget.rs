//! Costs known before and during a run: `arena run --dry-run` (plays nothing and calls nothing)
//! and budgets (a reached budget starts no new game; raising it resumes).

use std::{io::ErrorKind, net::TcpListener};

use arena::store::GameStatus;

use crate::common::{TestDir, fake_openai, llm_player, local_llm, open_store, stderr, stdout};

/// A quickstart-like script whose model players point at `url`.
fn quickstart_like(url: &str) -> String {
    let free = llm_player(
        url,
        "free",
        "legal_moves = true, history = 10, max_attempts = 3",
    );
    let grammar = llm_player(
        url,
        "grammar",
        "legal_moves = true, max_attempts = 2, grammar = true",
    );
    format!(
        r#"return arena.tournament {{
  name = "dry", games_per_pair = 2, max_plies = 24, seed = 7,
  prices = {{ ["smollm2-135m-instruct"] = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }} }},
  players = {{
    {free}, {grammar},
    arena.engine {{ name = "sf", command = "stockfish", limits = {{ nodes = 100 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
    )
}

#[test]
fn a_dry_run_contacts_nothing_and_exits_0() {
    // A port that accepts connections but is never served: any request would be queued here.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let dir = TestDir::new();
    dir.write("t.lua", &quickstart_like(&url));
    let out = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db", "--dry-run"])
        .env("PATH", "/nonexistent") // no engine could start either
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the dry run contacted the endpoint: {other:?}"),
    }
    assert!(!dir.db().exists(), "a dry run writes no store");
    let text = stdout(&out);
    assert!(text.contains("12 game(s) scheduled"), "{text}");
    // 6 games of 24 plies: 72 moves; max_attempts 3 and 2 bound the high end.
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}: {text}"))
            .to_string()
    };
    assert!(line("free").contains(" 72–216 "), "{text}");
    assert!(line("grammar").contains(" 72–144 "), "{text}");
    assert!(line("sf").contains(" 6 "), "{text}");
    assert!(
        text.contains("completion tokens of `free`: max_tokens"),
        "{text}"
    );
}

#[test]
fn dry_run_figures_match_a_hand_computation() {
    let dir = TestDir::new();
    // One model player against a random mover, 2 games of 10 plies: 10 moves for the model,
    // 1 to 3 calls each, 48 completion tokens per call (max_tokens).
    let model = llm_player(
        "http://127.0.0.1:9/v1",
        "m",
        "legal_moves = true, max_attempts = 3",
    );
    let script = dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "hand", games_per_pair = 2, max_plies = 10,
  prices = {{ ["smollm2-135m-instruct"] = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }} }},
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    let report =
        arena::tournament::dryrun::dry_run(&script, None, std::sync::Arc::new(arena::lua::LuaHost))
            .unwrap();
    assert_eq!(report.games, 2);
    assert!(report.incremental.is_none());
    let m = &report.players[0];
    assert_eq!((m.games, m.calls.low, m.calls.high), (2.0, 10.0, 30.0));
    assert_eq!(m.completion_tokens.low, 10.0 * 48.0);
    assert_eq!(m.completion_tokens.high, 30.0 * 48.0);
    assert!(
        m.prompt_per_call > 50.0,
        "the blitz prompt lists the legal moves"
    );
    assert!((m.prompt_tokens.low - 10.0 * m.prompt_per_call).abs() < 1e-6);
    // High: 3 attempts of the base prompt, attempt a carrying a-1 replies and feedbacks (48 + 40).
    let high = 10.0 * (3.0 * m.prompt_per_call + 3.0 * 88.0);
    assert!(
        (m.prompt_tokens.high - high).abs() < 1e-6,
        "{} vs {high}",
        m.prompt_tokens.high
    );
    let usd = m.usd.unwrap();
    let low = (m.prompt_tokens.low.round() * 1.0 + 480.0 * 2.0) / 1e6;
    assert!((usd.low - low).abs() < 1e-12, "{} vs {low}", usd.low);
    assert_eq!(report.players[1].calls.high, 0.0);
    assert_eq!(report.usd, m.usd);
}

#[test]
fn a_matchmaker_dry_run_gives_its_bound() {
    let dir = TestDir::new();
    let model = llm_player("http://127.0.0.1:9/v1", "m", "");
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "mm", format = "matchmaker", format_options = {{ max_games = 30 }},
  players = {{ {model}, arena.random {{ name = "a" }}, arena.random {{ name = "b" }} }},
}}"#
        ),
    );
    let out = dir
        .arena()
        .args(["run", "t.lua", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("30 game(s) scheduled"), "{text}");
    assert!(text.contains("`max_games` bound"), "{text}");
}

/// A sequential experiment against a common opponent: every game drawn decides its SPRT early, so
/// the drawn schedule (684 games here) said nothing of its length; it is counted at its most,
/// the largest figure of its own table of expected lengths, with a note that applies to it.
#[test]
fn an_experiment_dry_run_counts_its_most_as_its_own_table_does() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"local function m(name, listed)
  return arena.llm { name = name, model = "m", base_url = "http://127.0.0.1:9/v1",
    options = { legal_moves = listed } }
end
return arena.experiment {
  name = "dr",
  baseline = m("plain", false),
  variants = { m("listed", true) },
  opponents = { arena.random { name = "random" } },
  openings = { fens = { "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1" } },
  sprt = { elo0 = 0, elo1 = 40, alpha = 0.05, beta = 0.05 },
  null = true,
  max_pairs = 200,
  max_plies = 10,
}"#,
    );
    let out = dir
        .arena()
        .args(["run", "t.lua", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // Each cell: two arms and the baseline play a pair against the opponent, 6 games; 200 cells.
    assert!(text.contains("\n1200 game(s) scheduled"), "{text}");
    let plan: Vec<u64> = text
        .split("cost (USD)\n")
        .last()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3)?.parse().ok())
        .collect();
    assert_eq!(plan.iter().max(), Some(&1200), "{text}");
    for (player, games) in [
        ("plain", 400),
        ("listed", 400),
        ("plain-null", 400),
        ("random", 1200),
    ] {
        assert!(
            text.lines().any(|l| {
                let mut words = l.split_whitespace();
                words.next() == Some(player) && words.next() == Some(&games.to_string())
            }),
            "{player} {games}: {text}"
        );
    }
    assert!(
        text.contains("counted at its most, 200 pairs per arm"),
        "{text}"
    );
    assert!(
        !text.contains("Swiss") && !text.contains("knockout"),
        "{text}"
    );
}

#[test]
fn a_budget_holds_back_new_games_and_raising_it_resumes() {
    let Some(url) = local_llm("a_budget_holds_back_new_games_and_raising_it_resumes") else {
        return;
    };
    let dir = TestDir::new();
    let script = |tokens: &str| {
        let model = llm_player(
            &url,
            "m",
            "legal_moves = true, max_attempts = 2, grammar = true",
        );
        let model = model.replacen(
            "name = \"m\",",
            &format!("name = \"m\", budget = {{ tokens = {tokens} }},"),
            1,
        );
        format!(
            r#"return arena.tournament {{
  name = "budget", games_per_pair = 3, max_plies = 4, seed = 1, concurrency = 1,
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        )
    };
    dir.write("t.lua", &script("10"));
    let out = dir.run("t.lua");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("budget: the tokens budget of player `m` is reached")
            && err.contains("2 game(s) not started (game 2, 3)"),
        "{err}"
    );
    let store = open_store(&dir.db());
    let t = store.find_tournament("budget").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 3, "held-back games stay scheduled");
    assert_eq!(
        games
            .iter()
            .filter(|g| g.status == GameStatus::Finished)
            .count(),
        1
    );
    drop(store);

    dir.write("t.lua", &script("1e9"));
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 3);
    assert!(games.iter().all(|g| g.status == GameStatus::Finished));
}

#[test]
fn a_zero_budget_is_refused_at_its_line() {
    let dir = TestDir::new();
    let model = llm_player("http://127.0.0.1:9/v1", "m", "");
    let model = model.replacen("name = \"m\",", "name = \"m\", budget = { usd = 0 },", 1);
    dir.write(
        "t.lua",
        &format!(
            "return arena.tournament {{\n  name = \"z\",\n  players = {{ {model}, arena.random {{ name = \"r\" }} }},\n}}"
        ),
    );
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    let err = format!("{}{}", stderr(&out), stdout(&out));
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("t.lua:") && err.contains("budget `usd` must be a finite number above 0"),
        "{err}"
    );
}

#[test]
fn a_budget_stop_and_the_last_progress_line_say_what_the_store_says() {
    // Two games at once against a fake server: the game where the model has Black (7 of 15
    // plies) ends first and the budget holds the others back while the game where it has White
    // still makes its last call. The figures printed at the end must include that call.
    let fake = fake_openai(60);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "spent", games_per_pair = 4, max_plies = 15, seed = 3, concurrency = 2,
  prices = {{ fake = {{ input_per_mtok = 1000.0, output_per_mtok = 1000.0 }} }},
  players = {{
    arena.llm {{ name = "m", model = "fake", base_url = "{}", mode = "blitz",
                 budget = {{ tokens = 10 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let store = open_store(&dir.db());
    let t = store.find_tournament("spent").unwrap().unwrap();
    let stored: u64 = store
        .spend(t.id)
        .unwrap()
        .iter()
        .filter(|r| r.player == "m")
        .map(|r| r.prompt_tokens + r.completion_tokens)
        .sum();
    assert!(stored > 10, "{err}");
    assert!(
        err.contains(&format!(
            "the tokens budget of player `m` is reached: {stored} tokens spent of 10 tokens"
        )),
        "the store holds {stored} tokens:\n{err}"
    );
    // Every call is priced at $1000 a million tokens: the dollars are the tokens / 1000.
    let last = err
        .lines()
        .rfind(|l| l.contains(" games · "))
        .unwrap_or_else(|| panic!("no progress line:\n{err}"));
    assert!(
        last.contains(&format!("spent ${:.4}", stored as f64 / 1000.0)),
        "the store holds {stored} tokens, the last progress line says: {last}"
    );
}

#[test]
fn a_dry_run_uses_each_players_own_stored_calls_and_says_where_a_budget_stops() {
    let fake = fake_openai(0);
    let dir = TestDir::new();
    let player = |name: &str, extra: &str| {
        format!(
            r#"arena.llm {{ name = "{name}", model = "fake", base_url = "{}", mode = "blitz", max_tokens = 4000{extra} }}"#,
            fake.url
        )
    };
    // `m` plays first, so the store holds its calls; `n` (the same model) has none.
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "own", games_per_pair = 2, max_plies = 10, seed = 3, concurrency = 1,
  players = {{ {}, arena.random {{ name = "rnd" }} }},
}}"#,
            player("m", "")
        ),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("own").unwrap().unwrap();
    let mut completions: Vec<u64> = Vec::new();
    for g in store.games(t.id).unwrap() {
        let calls = store.game_calls(g.id).unwrap();
        completions.extend(calls.iter().filter_map(|c| c.call.completion_tokens));
    }
    let longest = *completions.iter().max().unwrap() as f64;
    drop(store);

    let script = dir.write(
        "d.lua",
        &format!(
            r#"return arena.tournament {{
  name = "own", games_per_pair = 2, max_plies = 10, seed = 3,
  players = {{ {}, {}, arena.random {{ name = "rnd" }} }},
}}"#,
            player("m", ", budget = { tokens = 5000 }"),
            player("n", "")
        ),
    );
    let report = arena::tournament::dryrun::dry_run(
        &script,
        Some(&dir.db()),
        std::sync::Arc::new(arena::lua::LuaHost),
    )
    .unwrap();
    let (m, n) = (&report.players[0], &report.players[1]);
    assert_eq!(
        m.completion_source,
        format!("mean and longest of {} stored calls", completions.len())
    );
    assert_eq!(
        n.completion_source, "max_tokens",
        "`n` has no call of its own"
    );
    // The high end is the longest stored reply, not max_tokens.
    assert!(
        (m.completion_tokens.high - m.calls.high * longest).abs() < 1e-6,
        "{} vs {} calls × {longest}",
        m.completion_tokens.high,
        m.calls.high
    );
    // 4 games of 10 plies for `m`: where 5000 tokens stop it, from its spend per game.
    assert_eq!(m.games, 4.0);
    let budget = &report.budgets[0];
    assert_eq!(
        (budget.player.as_deref(), budget.limit),
        (Some("m"), "tokens")
    );
    let per_game = |tokens: f64| tokens / m.games;
    let started = |spend: f64| (5000.0 / spend).ceil().min(4.0);
    let range = budget.games_started.unwrap();
    assert_eq!(
        (range.low, range.high),
        (
            started(per_game(m.prompt_tokens.high + m.completion_tokens.high)),
            started(per_game(m.prompt_tokens.low + m.completion_tokens.low))
        )
    );
    let out = dir
        .arena()
        .args(["run", "d.lua", "--db", "t.db", "--dry-run"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains(
            "budget: the tokens budget of player `m` (5000 tokens) stops its games after"
        ),
        "{text}"
    );
}
