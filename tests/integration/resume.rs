//! `kill -9` in the middle of a tournament, then the same command again: finished games stay as
//! they were, unfinished ones continue from their last stored ply, stored replies are reused (a
//! second request for a stored reply would hit the store's unique key and fail the game), and the
//! tournament ends with exactly the scheduled games.

use std::{collections::BTreeMap, process::Stdio, thread::sleep, time::Duration};

use arena::store::{GameStatus, Store};

use crate::common::{
    TestDir, llm_player, local_llm, open_store, run_then_kill, start_run, stderr, stockfish,
    wait_for_store,
};

/// (game id, ply, seq) → (call id, reply).
type Calls = BTreeMap<(i64, u32, u32), (i64, Option<String>)>;

fn calls(store: &Store, tournament: i64) -> Calls {
    let mut out = BTreeMap::new();
    for g in store.games(tournament).unwrap() {
        for ply in 0..=g.ply_count {
            for c in store.llm_calls(g.id, ply).unwrap() {
                out.insert((g.id, ply, c.call.seq), (c.id, c.call.reply_text.clone()));
            }
        }
    }
    out
}

/// Every call stored before the kill is still there after the resume, with the same id and
/// reply: nothing stored was lost or replaced.
fn assert_replies_kept(before: &Calls, after: &Calls) {
    for (key, value) in before {
        assert_eq!(after.get(key), Some(value), "stored reply {key:?} kept");
    }
}

#[test]
fn a_killed_tournament_resumes_without_losing_or_repeating_anything() {
    let Some(url) = local_llm("a_killed_tournament_resumes_without_losing_or_repeating_anything")
    else {
        return;
    };
    let dir = TestDir::new();
    let model = llm_player(&url, "smol", "max_attempts = 3, parser = \"tolerant\"");
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "resume", games_per_pair = 4, max_plies = 12, seed = 2, concurrency = 1,
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    // Wait until the model has answered a few times, then kill the run without warning.
    run_then_kill(&dir, "resume", Duration::from_secs(600), |store, t| {
        store.totals(t).map(|x| x.llm_calls).unwrap_or(0) >= 3
    });

    let store = open_store(&dir.db());
    let t = store.find_tournament("resume").unwrap().unwrap();
    let games_before = store.games(t.id).unwrap();
    assert_eq!(games_before.len(), 4);
    assert!(
        games_before
            .iter()
            .any(|g| g.status != GameStatus::Finished),
        "the kill should land before the end"
    );
    let plies_before: BTreeMap<i64, Vec<String>> = games_before
        .iter()
        .map(|g| {
            let plies = store.plies(g.id).unwrap();
            (g.id, plies.into_iter().map(|p| p.uci).collect())
        })
        .collect();
    let calls_before = calls(&store, t.id);
    drop(store);

    let out = dir.run("t.lua");
    assert!(crate::common::finished(out.status), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let games_after = store.games(t.id).unwrap();
    assert_eq!(games_after.len(), 4, "exactly the scheduled games");
    assert!(games_after.iter().all(|g| g.status == GameStatus::Finished));
    for (before, after) in games_before.iter().zip(&games_after) {
        let plies_after: Vec<String> = store
            .plies(after.id)
            .unwrap()
            .into_iter()
            .map(|p| p.uci)
            .collect();
        let kept = &plies_before[&before.id];
        if before.status == GameStatus::Finished {
            assert_eq!(
                before.result, after.result,
                "a finished game is not replayed"
            );
            assert_eq!(&plies_after, kept);
        } else {
            assert!(
                plies_after.starts_with(kept),
                "game {} continues from its stored plies",
                after.index
            );
        }
    }
    let calls_after = calls(&store, t.id);
    assert_replies_kept(&calls_before, &calls_after);
    assert!(calls_after.len() >= calls_before.len());
}

#[test]
fn ctrl_c_lets_running_games_finish_and_the_rest_resumes() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "interrupt", games_per_pair = 300, max_plies = 200, seed = 8, concurrency = 2,
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 1 } },
}"#,
    );
    let mut child = start_run(&dir, Stdio::piped());
    wait_for_store(
        &dir,
        &mut child,
        "interrupt",
        Duration::from_secs(300),
        |store, t| store.totals(t).map(|x| x.games_finished).unwrap_or(0) >= 2,
    );
    interrupt(child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("stopped before the end"), "{err}");

    let store = open_store(&dir.db());
    let t = store.find_tournament("interrupt").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 300);
    // Nothing was left half-played: every game is finished or not started.
    assert!(
        games
            .iter()
            .all(|g| g.status == GameStatus::Finished || g.ply_count == 0)
    );
    let finished = games
        .iter()
        .filter(|g| g.status == GameStatus::Finished)
        .count();
    assert!(finished < 300, "the stop came before the end");
    drop(store);

    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    assert!(
        store
            .games(t.id)
            .unwrap()
            .iter()
            .all(|g| g.status == GameStatus::Finished)
    );
}

/// Sends SIGINT to `pid`.
fn interrupt(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_second_ctrl_c_quits_at_once_with_130_and_the_games_resume() {
    if !stockfish("a_second_ctrl_c_quits_at_once_with_130_and_the_games_resume") {
        return;
    }
    let dir = TestDir::new();
    // Slow games (the engine thinks 300 ms a move), so both signals land while they run.
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "quit", games_per_pair = 2, max_plies = 16, seed = 3, concurrency = 2,
  players = {
    arena.engine { name = "sf", limits = { movetime_ms = 300 } },
    arena.random { name = "r" },
  },
}"#,
    );
    let mut child = start_run(&dir, Stdio::piped());
    wait_for_store(
        &dir,
        &mut child,
        "quit",
        Duration::from_secs(120),
        |store, t| store.totals(t).map(|x| x.plies).unwrap_or(0) >= 2,
    );
    interrupt(child.id());
    sleep(Duration::from_millis(200));
    interrupt(child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("quit before the end"), "{err}");

    let store = open_store(&dir.db());
    let t = store.find_tournament("quit").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert!(
        games
            .iter()
            .any(|g| g.status != GameStatus::Finished && g.ply_count > 0),
        "a game was abandoned mid-way: {games:?}"
    );
    drop(store);

    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g.status, GameStatus::Finished, "{g:?}");
        let plies = store.plies(g.id).unwrap();
        assert!(plies.iter().enumerate().all(|(i, p)| p.ply == i as u32));
    }
}

/// 256 games at once against the fake server, killed with -9 while hundreds of replies are in
/// flight and the store commits several games' writes together (group commit): every ply stored
/// at the kill has its reply stored with it, the resumed run keeps every stored reply, asks for
/// none of them again, and finishes every game.
#[test]
fn a_run_of_many_games_at_once_killed_mid_flight_resumes_without_losing_a_reply() {
    const GAMES: u64 = 256;
    let fake = crate::common::fake_openai(40);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"local function fake(name)
  return arena.llm {{ name = name, model = "fake", base_url = "{url}", mode = "blitz",
    max_concurrency = {GAMES} }}
end
return arena.tournament {{
  name = "many", games_per_pair = {GAMES}, max_plies = 16, seed = 3, concurrency = {GAMES},
  players = {{ fake("f1"), fake("f2") }},
}}"#,
            url = fake.url
        ),
    );
    run_then_kill(&dir, "many", Duration::from_secs(600), |store, t| {
        store.totals(t).map(|x| x.llm_calls).unwrap_or(0) >= GAMES * 5
    });

    let store = open_store(&dir.db());
    let t = store.find_tournament("many").unwrap().unwrap();
    let games_before = store.games(t.id).unwrap();
    assert!(
        games_before
            .iter()
            .any(|g| g.status != GameStatus::Finished),
        "the kill should land before the end"
    );
    // Every move stored at the kill came from a reply stored (and settled) with it.
    let mut plies_before = BTreeMap::new();
    for g in &games_before {
        let plies: Vec<String> = store
            .plies(g.id)
            .unwrap()
            .into_iter()
            .map(|p| p.uci)
            .collect();
        let moves = store
            .call_outcomes(g.id)
            .unwrap()
            .into_iter()
            .filter(|c| c.outcome.as_deref() == Some("move"))
            .count();
        assert_eq!(
            moves,
            plies.len(),
            "game {}: a stored reply per stored move",
            g.index
        );
        plies_before.insert(g.id, plies);
    }
    let calls_before = calls(&store, t.id);
    drop(store);

    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let games_after = store.games(t.id).unwrap();
    assert_eq!(
        games_after.len() as u64,
        GAMES,
        "exactly the scheduled games"
    );
    assert!(games_after.iter().all(|g| g.status == GameStatus::Finished));
    for g in &games_after {
        let plies: Vec<String> = store
            .plies(g.id)
            .unwrap()
            .into_iter()
            .map(|p| p.uci)
            .collect();
        assert!(
            plies.starts_with(&plies_before[&g.id]),
            "game {} continues from its stored plies",
            g.index
        );
    }
    let calls_after = calls(&store, t.id);
    assert_replies_kept(&calls_before, &calls_after);
    // Nothing stored was asked again: the server answered the stored calls, plus at most one
    // reply per running game that the kill cut off before it was stored (and so never used).
    let answered = fake.stop();
    let stored = calls_after.len() as u64;
    assert!(
        answered >= stored && answered - stored <= GAMES,
        "the server answered {answered} requests for {stored} stored replies"
    );
}
