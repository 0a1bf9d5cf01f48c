//! Several workers on one PostgreSQL store: two `arena run` processes play one tournament, one is
//! killed with -9 mid-game, and the other finishes everything, taking the killed worker's game up
//! from its last stored ply once its lease lapses; two `arena analyze` processes split the
//! analysis of a tournament so that every game is analysed once.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use arena::store::{GameStatus, LeaseKind, Store};

use crate::common::{TestDir, fake_openai, postgres, stderr, stockfish};

/// Starts `arena ARGS` in `dir`, its stderr to `log`.
fn spawn(dir: &TestDir, args: &[&str], log: &str) -> Child {
    let log = std::fs::File::create(dir.path().join(log)).expect("log file");
    dir.arena()
        .args(args)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("arena starts")
}

fn log(dir: &TestDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap_or_default()
}

/// Waits for `child` to exit and asserts that it succeeded.
fn wait_success(child: &mut Child, dir: &TestDir, log_name: &str, patience: Duration) {
    let deadline = Instant::now() + patience;
    loop {
        if let Some(status) = child.try_wait().expect("child status") {
            assert!(
                status.success(),
                "{log_name}: {status}\n{}",
                log(dir, log_name)
            );
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{log_name} did not finish in {patience:?}\n{}",
            log(dir, log_name)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_workers_share_a_tournament_and_a_killed_one_loses_nothing_and_repeats_nothing() {
    let test = "two_workers_share_a_tournament_and_a_killed_one_loses_nothing_and_repeats_nothing";
    let Some(server) = postgres(test) else {
        return;
    };
    let database = arena_testkit::FreshDatabase::create(&server, test);
    let url = database.url.clone();
    // 150 ms per reply: slow enough that the kill lands mid-game, fast enough for CI.
    let fake = fake_openai(150);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "shared", games_per_pair = 6, max_plies = 24, seed = 5, concurrency = 1,
  players = {{
    arena.llm {{ name = "fake", model = "fake", base_url = "{}", mode = "blitz" }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fake.url
        ),
    );
    let worker = |name: &str| {
        spawn(
            &dir,
            &[
                "run",
                "t.lua",
                "--db",
                &url,
                "--no-watch",
                "--worker",
                name,
                "--lease-s",
                "3",
            ],
            &format!("{name}.log"),
        )
    };
    let mut a = worker("machine-a");
    let mut b = worker("machine-b");

    // Kill machine-a as soon as it holds a game with a few stored plies.
    let store = Store::open(Path::new(&url)).expect("the shared store opens");
    let deadline = Instant::now() + Duration::from_secs(300);
    let (victim, plies_at_kill, calls_at_kill) = loop {
        assert!(
            Instant::now() < deadline,
            "machine-a never got far enough\n{}",
            log(&dir, "machine-a.log")
        );
        assert!(
            a.try_wait().unwrap().is_none(),
            "machine-a ended early\n{}",
            log(&dir, "machine-a.log")
        );
        let held = store
            .leases(LeaseKind::Play)
            .unwrap()
            .into_iter()
            .find(|(_, owner)| owner.starts_with("machine-a#"));
        if let Some((game, _)) = held {
            let plies = store.plies(game).unwrap();
            if plies.len() >= 4 {
                a.kill().expect("SIGKILL");
                a.wait().unwrap();
                // What the killed worker had stored, read after it is gone.
                let plies: Vec<String> = store
                    .plies(game)
                    .unwrap()
                    .into_iter()
                    .map(|p| p.uci)
                    .collect();
                let calls: BTreeMap<(u32, u32), (i64, Option<String>)> = (0..=plies.len() as u32)
                    .flat_map(|ply| store.llm_calls(game, ply).unwrap())
                    .map(|c| ((c.call.ply, c.call.seq), (c.id, c.call.reply_text.clone())))
                    .collect();
                break (game, plies, calls);
            }
        }
        std::thread::sleep(Duration::from_millis(30));
    };
    assert!(
        store.game(victim).unwrap().status != GameStatus::Finished,
        "the kill should land mid-game"
    );

    wait_success(&mut b, &dir, "machine-b.log", Duration::from_secs(300));
    let served = fake.stop();

    let t = store.find_tournament("shared").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(
        games.len(),
        6,
        "exactly the scheduled games, none played twice"
    );
    assert!(
        games
            .iter()
            .all(|g| g.status == GameStatus::Finished && g.result.is_some()),
        "every game finished with a result: {games:?}"
    );
    assert!(
        store.leases(LeaseKind::Play).unwrap().is_empty(),
        "every lease released"
    );

    // The killed game went on from its last stored ply, with every stored reply kept.
    let after: Vec<String> = store
        .plies(victim)
        .unwrap()
        .into_iter()
        .map(|p| p.uci)
        .collect();
    assert!(
        after.len() > plies_at_kill.len() && after.starts_with(&plies_at_kill),
        "game {victim} was not resumed where it stood: {plies_at_kill:?} then {after:?}"
    );
    for ((ply, seq), (id, reply)) in &calls_at_kill {
        let now: Vec<_> = store.llm_calls(victim, *ply).unwrap();
        let call = now
            .iter()
            .find(|c| c.call.seq == *seq)
            .expect("the stored call stays");
        assert_eq!(
            (&call.id, &call.call.reply_text),
            (id, reply),
            "ply {ply} seq {seq}"
        );
    }
    // No stored reply was asked for again: the server answered each stored call once, plus at
    // most the one request machine-a had in flight (concurrency 1) when it was killed.
    let stored: usize = games
        .iter()
        .map(|g| {
            (0..=g.ply_count)
                .map(|ply| store.llm_calls(g.id, ply).unwrap().len())
                .sum::<usize>()
        })
        .sum();
    let served = usize::try_from(served).unwrap();
    assert!(
        stored <= served && served <= stored + 1,
        "{served} completions served for {stored} stored calls"
    );
    // Both workers played: the tournament was shared, not run by one.
    let b_log = log(&dir, "machine-b.log");
    assert!(b_log.contains("game "), "{b_log}");
    assert!(
        !stderr_mentions_errors(&b_log),
        "machine-b reported errors:\n{b_log}"
    );
}

fn stderr_mentions_errors(log: &str) -> bool {
    log.lines()
        .any(|l| l.contains("ERROR") || l.contains("set aside"))
}

#[test]
fn two_analysis_workers_analyse_every_game_once() {
    let test = "two_analysis_workers_analyse_every_game_once";
    let Some(server) = postgres(test) else {
        return;
    };
    if !stockfish(test) {
        return;
    }
    let database = arena_testkit::FreshDatabase::create(&server, test);
    let url = database.url.clone();
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "an", games_per_pair = 6, max_plies = 16, seed = 3,
  players = { arena.random { name = "r1" }, arena.random { name = "r2" } },
}"#,
    );
    let out = dir
        .arena()
        .args(["run", "t.lua", "--db", &url, "--no-watch"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));

    let analyze = |name: &str| {
        spawn(
            &dir,
            &[
                "analyze",
                "--db",
                &url,
                "--depth",
                "8",
                "--processes",
                "1",
                "--worker",
                name,
                "--lease-s",
                "5",
            ],
            &format!("{name}.log"),
        )
    };
    let mut first = analyze("lab-1");
    let mut second = analyze("lab-2");
    wait_success(&mut first, &dir, "lab-1.log", Duration::from_secs(300));
    wait_success(&mut second, &dir, "lab-2.log", Duration::from_secs(300));

    // Each worker lists the games it analysed; together they are every game, each once, and
    // the plies analysed now add up to every ply of the tournament.
    let analysed = |name: &str| -> BTreeMap<u32, u32> {
        log(&dir, &format!("{name}.log"))
            .lines()
            .filter_map(|l| {
                let rest = l.split("] game ").nth(1)?;
                let game: u32 = rest.split(' ').next()?.parse().ok()?;
                let now: u32 = rest
                    .split(": ")
                    .nth(1)?
                    .split(" plies, ")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .parse()
                    .ok()?;
                Some((game, now))
            })
            .filter(|(_, now)| *now > 0)
            .collect()
    };
    let (one, two) = (analysed("lab-1"), analysed("lab-2"));
    let store = Store::open(Path::new(&url)).unwrap();
    let t = store.find_tournament("an").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let all: BTreeSet<u32> = games.iter().map(|g| g.index).collect();
    let keys_one: BTreeSet<u32> = one.keys().copied().collect();
    let keys_two: BTreeSet<u32> = two.keys().copied().collect();
    assert!(
        keys_one.is_disjoint(&keys_two),
        "a game analysed twice: {one:?} {two:?}"
    );
    assert_eq!(
        keys_one.union(&keys_two).copied().collect::<BTreeSet<_>>(),
        all,
        "every game analysed: {one:?} {two:?}"
    );
    let plies: u32 = games.iter().map(|g| g.ply_count).sum();
    assert_eq!(one.values().chain(two.values()).sum::<u32>(), plies);
    assert_eq!(store.analysed_games(t.id).unwrap().len(), games.len());
    assert!(store.leases(LeaseKind::Analysis).unwrap().is_empty());
}

#[test]
fn two_workers_share_a_format_that_schedules_as_games_finish() {
    let test = "two_workers_share_a_format_that_schedules_as_games_finish";
    let Some(server) = postgres(test) else {
        return;
    };
    let database = arena_testkit::FreshDatabase::create(&server, test);
    let url = database.url.clone();
    // Replies after 100 ms, so that games last long enough for both workers to take some.
    let fake = fake_openai(100);
    let dir = TestDir::new();
    // The matchmaker adds each next pair from the results so far: both workers ask it, and
    // only the first answer for each slot may be stored.
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "mm", format = "matchmaker", format_options = {{ max_games = 24, target_rd = 0 }},
  max_plies = 16, seed = 9, concurrency = 2,
  players = {{
    arena.llm {{ name = "f1", model = "fake", base_url = "{url}", mode = "blitz" }},
    arena.llm {{ name = "f2", model = "fake", base_url = "{url}", mode = "blitz" }},
    arena.random {{ name = "r1" }}, arena.random {{ name = "r2" }},
  }},
}}"#,
            url = fake.url
        ),
    );
    let worker = |name: &str| {
        spawn(
            &dir,
            &["run", "t.lua", "--db", &url, "--no-watch", "--worker", name],
            &format!("{name}.log"),
        )
    };
    let (mut a, mut b) = (worker("mm-a"), worker("mm-b"));
    wait_success(&mut a, &dir, "mm-a.log", Duration::from_secs(300));
    wait_success(&mut b, &dir, "mm-b.log", Duration::from_secs(300));

    let store = Store::open(Path::new(&url)).unwrap();
    let t = store.find_tournament("mm").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 24, "the format's budget, not one game more");
    let indices: BTreeSet<u32> = games.iter().map(|g| g.index).collect();
    assert_eq!(indices.len(), 24, "no index twice");
    assert!(games.iter().all(|g| g.status == GameStatus::Finished));
    // Which worker played what is up to the race (the matchmaker offers one pair at a time,
    // and the worker that asked first claims it); that neither failed is checked above.
}

/// Sends `signal` (`STOP`, `CONT`) to `child`.
fn signal(child: &Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} failed");
}

/// The ids of `game`'s stored calls that went to the server at `url`.
fn calls_to(store: &Store, game: i64, plies: u32, url: &str) -> BTreeSet<i64> {
    (0..=plies)
        .flat_map(|ply| store.llm_calls(game, ply).unwrap())
        .filter(|c| c.call.endpoint.trim_end_matches('/') == url.trim_end_matches('/'))
        .map(|c| c.id)
        .collect()
}

#[test]
fn a_worker_stalled_past_its_lease_is_fenced_off_and_asks_no_model_again() {
    let test = "a_worker_stalled_past_its_lease_is_fenced_off_and_asks_no_model_again";
    let Some(server) = postgres(test) else {
        return;
    };
    let database = arena_testkit::FreshDatabase::create(&server, test);
    let url = database.url.clone();
    // One server per worker, so that every request and every stored call says whose it was.
    let (fake_a, fake_b) = (fake_openai(250), fake_openai(250));
    let script = |fake: &str| {
        format!(
            r#"return arena.tournament {{
  name = "fenced", games_per_pair = 1, max_plies = 60, seed = 3, concurrency = 1,
  players = {{
    arena.llm {{ name = "white", model = "fake", base_url = "{fake}", mode = "blitz" }},
    arena.llm {{ name = "black", model = "fake", base_url = "{fake}", mode = "blitz" }},
  }},
}}"#
        )
    };
    let (dir_a, dir_b) = (TestDir::new(), TestDir::new());
    dir_a.write("t.lua", &script(&fake_a.url));
    dir_b.write("t.lua", &script(&fake_b.url));
    let worker = |dir: &TestDir, name: &str| {
        spawn(
            dir,
            &[
                "run",
                "t.lua",
                "--db",
                &url,
                "--no-watch",
                "--worker",
                name,
                "--lease-s",
                "2",
            ],
            &format!("{name}.log"),
        )
    };
    let mut a = worker(&dir_a, "machine-a");
    let store = Store::open(Path::new(&url)).expect("the shared store opens");

    // Stop machine-a (SIGSTOP: a paused machine) once its game is a few plies in, while it
    // waits for a reply: the request sent, the reply to come after its lease is gone.
    let deadline = Instant::now() + Duration::from_secs(120);
    let game = loop {
        assert!(
            Instant::now() < deadline && a.try_wait().unwrap().is_none(),
            "machine-a never got a few plies in\n{}",
            log(&dir_a, "machine-a.log")
        );
        let held = store
            .leases(LeaseKind::Play)
            .unwrap()
            .into_iter()
            .find(|(_, owner)| owner.starts_with("machine-a#"));
        if let Some((game, _)) = held
            && store.plies(game).unwrap().len() >= 4
        {
            // Each ply is one request: the one after the stored plies has arrived.
            let plies = store.plies(game).unwrap().len() as u64;
            while fake_a.asked() <= plies {
                assert!(Instant::now() < deadline, "machine-a asked nothing more");
                std::thread::sleep(Duration::from_millis(5));
            }
            signal(&a, "STOP");
            break game;
        }
        std::thread::sleep(Duration::from_millis(30));
    };
    // A request written just before the stop reaches the server's count within this pause.
    std::thread::sleep(Duration::from_millis(500));
    let asked_before_stop = fake_a.asked();
    let plies_at_stop = store.plies(game).unwrap().len() as u32;
    let a_calls_at_stop = calls_to(&store, game, plies_at_stop + 1, &fake_a.url);
    assert!(!a_calls_at_stop.is_empty());

    // machine-b takes the game over once the lease lapses, and plays on.
    let mut b = worker(&dir_b, "machine-b");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline && b.try_wait().unwrap().is_none(),
            "machine-b never took the game over\n{}",
            log(&dir_b, "machine-b.log")
        );
        let held_by_b = store
            .leases(LeaseKind::Play)
            .unwrap()
            .iter()
            .any(|(g, owner)| *g == game && owner.starts_with("machine-b#"));
        if held_by_b && store.plies(game).unwrap().len() as u32 >= plies_at_stop + 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_ne!(
        store.game(game).unwrap().status,
        GameStatus::Finished,
        "machine-a should resume while machine-b still plays"
    );

    // machine-a resumes mid-game under a lease it no longer holds.
    signal(&a, "CONT");
    wait_success(&mut a, &dir_a, "machine-a.log", Duration::from_secs(120));
    let a_log = log(&dir_a, "machine-a.log");
    wait_success(&mut b, &dir_b, "machine-b.log", Duration::from_secs(300));
    let b_log = log(&dir_b, "machine-b.log");

    // Zero model calls after it resumed (nor while it was stopped).
    assert_eq!(
        fake_a.asked(),
        asked_before_stop,
        "machine-a asked its model again after resuming\n{a_log}"
    );
    // Zero writes of machine-a accepted: its calls are the ones stored before the stop, the
    // game was not marked by it, and it said what happened, naming the game and itself.
    let t = store.find_tournament("fenced").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 1);
    let row = &games[0];
    assert_eq!(
        calls_to(&store, game, row.ply_count, &fake_a.url),
        a_calls_at_stop,
        "a write of machine-a was accepted after its lease was taken over"
    );
    assert!(
        a_log.contains("taken over by another worker")
            && a_log.contains("machine-a#")
            && a_log.contains("no longer holds its lease")
            && a_log.contains(&format!("game {}", row.index)),
        "machine-a did not say it lost game {}:\n{a_log}",
        row.index
    );
    // The game finished exactly once, by machine-b, every ply after the stop its.
    assert_eq!(row.status, GameStatus::Finished);
    assert!(row.result.is_some() && row.error.is_none(), "{row:?}");
    assert!(row.ply_count > plies_at_stop + 2);
    let finished_line = format!(
        "game {} white vs black: {} (",
        row.index,
        row.result.as_deref().unwrap()
    );
    assert_eq!(
        b_log.matches(&finished_line).count(),
        1,
        "machine-b finished the game once:\n{b_log}"
    );
    assert!(
        !a_log.contains(&finished_line),
        "machine-a finished the game too:\n{a_log}"
    );
    assert!(
        !stderr_mentions_errors(&b_log),
        "machine-b reported errors:\n{b_log}"
    );
    for ply in plies_at_stop + 1..row.ply_count {
        let calls = store.llm_calls(game, ply).unwrap();
        assert!(
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|c| c.call.endpoint.trim_end_matches('/')
                        == fake_b.url.trim_end_matches('/')),
            "ply {ply} was not machine-b's alone"
        );
    }
    assert!(store.leases(LeaseKind::Play).unwrap().is_empty());
}
