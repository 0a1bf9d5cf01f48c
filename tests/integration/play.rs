//! A person plays a random mover through `arena serve` while `arena run` plays the game: the
//! write path (a move without the token refused, an illegal move refused with its reason), a
//! run killed with -9 and started again (the move made while it was down is played), a draw
//! offer declined, a resignation, and the finished games in the store, the PGN and the
//! leaderboard. The browser's side is tests/browser/play.mjs.

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use arena::store::{GameStatus, Store};

use crate::{
    common::{TestDir, start_run, stdout},
    serve::{Response, Server, request},
};

/// A person against the random mover: two games, each ended by a move limit at the latest.
pub const PERSON_VS_RANDOM: &str = r#"return arena.tournament {
  name = "person", games_per_pair = 2, max_plies = 10, seed = 4, concurrency = 1,
  players = {
    arena.human { name = "me", show_reply = false },
    arena.random { name = "rnd" },
  },
}"#;

/// `arena serve` with its play token; killed when dropped.
pub struct PlayServer {
    server: Server,
    pub token: String,
}

impl PlayServer {
    /// Starts `arena serve --db DB --listen 127.0.0.1:0` in `dir` and reads the play address
    /// with the token it prints after the address it listens on.
    pub fn start(dir: &Path, db: &str) -> PlayServer {
        let mut server = Server::start(dir, db, &[]);
        let line = server.next_line();
        let token = line
            .split("/play?token=")
            .nth(1)
            .map(|t| t.trim().to_owned())
            .unwrap_or_else(|| panic!("arena serve printed no play address: {line:?}"));
        PlayServer { server, token }
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        &self.server.addr
    }

    pub fn state(&self, game: i64) -> serde_json::Value {
        let r = request(self.addr(), "GET", &format!("/api/play/{game}"), "", "");
        assert_eq!(r.status, 200, "{}", r.body);
        serde_json::from_str(&r.body).unwrap()
    }

    /// `POST /api/play/{game}/{action}` with `body`, with the token or without.
    pub fn post(&self, game: i64, action: &str, body: &str, token: bool) -> Response {
        let auth = if token {
            format!("Authorization: Bearer {}\r\n", self.token)
        } else {
            String::new()
        };
        request(
            self.addr(),
            "POST",
            &format!("/api/play/{game}/{action}"),
            &format!("{auth}Content-Type: application/json\r\n"),
            body,
        )
    }
}

/// `arena run` on the test's tournament, killed when dropped: a failing test must not leave it
/// waiting for a person forever.
struct Run(Child);

impl Run {
    fn start(dir: &TestDir) -> Run {
        Run(start_run(dir, Stdio::null()))
    }

    /// `kill -9`, and reaped.
    fn kill(&mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }

    /// Waits for the run to end and says whether it succeeded.
    fn success(&mut self) -> bool {
        self.0.wait().unwrap().success()
    }

    /// Waits for the run to end and says whether it finished its games: exit 0, or 3 when every
    /// game was a model's forfeit (it compared no chess).
    fn finished(&mut self) -> bool {
        crate::common::finished(self.0.wait().unwrap())
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until `ready(store)` gives a value (the run writes the store meanwhile).
fn wait<T>(dir: &TestDir, what: &str, ready: impl Fn(&Store) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(store) = Store::open_read_only(&dir.db())
            && let Some(v) = ready(&store)
        {
            return v;
        }
        assert!(Instant::now() < deadline, "waited too long for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The running game of the tournament, once there is one.
fn running_game(dir: &TestDir) -> i64 {
    wait(dir, "a running game", |store| {
        let t = store.find_tournament("person").ok()??;
        store
            .games(t.id)
            .ok()?
            .into_iter()
            .find(|g| g.status == GameStatus::Running)
            .map(|g| g.id)
    })
}

/// A legal move from the state's `dests` (a queen when it promotes).
fn some_move(state: &serde_json::Value) -> String {
    let (from, tos) = state["dests"]
        .as_object()
        .and_then(|d| d.iter().next())
        .expect("the person has a legal move");
    let uci = format!("{from}{}", tos[0].as_str().unwrap());
    let promotes = state["promotions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p == uci.as_str());
    if promotes { uci + "q" } else { uci }
}

/// Waits until the person is to move in `game` (or the game is over: `None`).
fn my_turn(server: &PlayServer, game: i64) -> Option<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = server.state(game);
        if s["status"] == "finished" {
            return None;
        }
        if s["your_turn"] == true {
            return Some(s);
        }
        assert!(
            Instant::now() < deadline,
            "the person never got the move: {s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_person_plays_through_the_store_and_survives_a_killed_run() {
    let dir = TestDir::new();
    dir.write("t.lua", PERSON_VS_RANDOM);
    let mut run = Run::start(&dir);
    let game = running_game(&dir);
    let server = PlayServer::start(dir.path(), "t.db");

    let first = my_turn(&server, game).expect("the game has just begun");
    let ply = first["ply"].as_u64().unwrap();
    // Without the token (or with a wrong one), nothing is written, on loopback too.
    let body = format!(r#"{{"uci":"{}","ply":{ply}}}"#, some_move(&first));
    let refused = server.post(game, "move", &body, false);
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(refused.body.contains("play token"), "{}", refused.body);
    let wrong = request(
        server.addr(),
        "POST",
        &format!("/api/play/{game}/move"),
        "Authorization: Bearer not-the-token\r\nContent-Type: application/json\r\n",
        &body,
    );
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    // An illegal move is refused with its reason.
    let illegal = server.post(
        game,
        "move",
        &format!(r#"{{"uci":"a1a8","ply":{ply}}}"#),
        true,
    );
    assert_eq!(illegal.status, 409, "{}", illegal.body);
    assert!(
        illegal.body.contains("`a1a8` is not a legal move"),
        "{}",
        illegal.body
    );
    let store = Store::open_read_only(&dir.db()).unwrap();
    let t = store.find_tournament("person").unwrap().unwrap();
    assert!(store.human_actions(t.id, game).unwrap().is_empty());
    drop(store);

    // A legal move; the run plays it and the random mover answers.
    let ok = server.post(game, "move", &body, true);
    assert_eq!(ok.status, 200, "{}", ok.body);
    let again = server.post(game, "move", &body, true);
    assert_eq!(
        again.status, 409,
        "a second move for the same ply: {}",
        again.body
    );
    let second = my_turn(&server, game).expect("the game goes on");
    assert!(second["ply"].as_u64().unwrap() >= ply + 2, "{second}");

    // The run dies; the person moves meanwhile; the run comes back and plays that move.
    run.kill();
    let made = some_move(&second);
    let ply2 = second["ply"].as_u64().unwrap();
    let ok = server.post(
        game,
        "move",
        &format!(r#"{{"uci":"{made}","ply":{ply2}}}"#),
        true,
    );
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(server.state(game)["pending"], true);
    let mut run = Run::start(&dir);
    wait(&dir, "the stored move played after the restart", |store| {
        let plies = store.plies(game).ok()?;
        let p = plies.get(usize::try_from(ply2).ok()?)?;
        (p.player == "me").then(|| assert_eq!(p.uci, made))
    });

    // A draw offer is declined; the game is played to its end.
    let ok = server.post(game, "draw", "{}", true);
    assert_eq!(ok.status, 200, "{}", ok.body);
    while let Some(s) = my_turn(&server, game) {
        let p = s["ply"].as_u64().unwrap();
        let r = server.post(
            game,
            "move",
            &format!(r#"{{"uci":"{}","ply":{p}}}"#, some_move(&s)),
            true,
        );
        assert!(r.status == 200 || r.status == 409, "{}", r.body);
    }
    let end = server.state(game);
    assert_eq!(end["draw"], "declined", "{end}");
    assert!(end["result"].is_string(), "{end}");

    // The second game: the person resigns at once.
    let second_game = wait(&dir, "the second game", |store| {
        let t = store.find_tournament("person").ok()??;
        store
            .games(t.id)
            .ok()?
            .into_iter()
            .find(|g| g.status == GameStatus::Running && g.id != game)
            .map(|g| g.id)
    });
    let ok = server.post(second_game, "resign", "{}", true);
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(run.success(), "the run ends when both games are over");

    let store = Store::open_read_only(&dir.db()).unwrap();
    let g1 = store.game(game).unwrap();
    let g2 = store.game(second_game).unwrap();
    assert_eq!(g2.termination.as_deref(), Some("resignation"));
    let me_white = g2.white == "me";
    assert_eq!(
        g2.result.as_deref(),
        Some(if me_white { "0-1" } else { "1-0" })
    );
    assert!(g1.result.is_some() && g1.ply_count >= 4, "{g1:?}");
    let pgn = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    let pgn = stdout(&pgn);
    assert!(pgn.contains("[ArenaTermination \"resignation\"]"), "{pgn}");
    assert_eq!(pgn.matches("[Event ").count(), 2, "{pgn}");
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let board = stdout(&board);
    assert!(board.contains("\"me\""), "{board}");
}

/// The tournament's clock applies to a person as to any player: one who does not move within the
/// per-move limit loses on time.
#[test]
fn a_person_who_does_not_move_loses_on_time() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "person", games_per_pair = 1, max_plies = 10, seed = 4, concurrency = 1,
  time_control = { per_move_s = 1 },
  players = { arena.human { name = "me" }, arena.random { name = "rnd" } },
}"#,
    );
    let mut run = Run::start(&dir);
    assert!(run.success(), "the run ends with the game");
    let store = Store::open_read_only(&dir.db()).unwrap();
    let t = store.find_tournament("person").unwrap().unwrap();
    let g = store.games(t.id).unwrap().remove(0);
    assert_eq!(g.termination.as_deref(), Some("time_forfeit"), "{g:?}");
    let me_white = g.white == "me";
    assert_eq!(
        g.result.as_deref(),
        Some(if me_white { "0-1" } else { "1-0" })
    );
    assert!(g.reason.unwrap_or_default().contains("`me`"));
}

#[test]
fn a_person_plays_a_whole_game_on_the_board_in_headless_chromium() {
    let test = "a_person_plays_a_whole_game_on_the_board_in_headless_chromium";
    let Some(driver) = crate::report::browser_tools(test) else {
        return;
    };
    let dir = TestDir::new();
    // A move limit ends the game whatever the moves (a random mover mates no one reliably).
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "person", games_per_pair = 1, max_plies = 8, seed = 7, concurrency = 1,
  time_control = { base_s = 600 },
  players = {
    arena.human { name = "me" },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let mut run = Run::start(&dir);
    let game = running_game(&dir);
    let server = PlayServer::start(dir.path(), "t.db");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("play-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let spec = serde_json::json!({
        "base": format!("http://{}", server.addr()),
        "token": server.token,
        "game": game,
        "screenshots": shots,
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = Command::new("node")
        .current_dir(&driver)
        .arg("play.mjs")
        .arg(&spec_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the play page failed in chromium:\n{}\n{}",
        stdout(&out),
        crate::common::stderr(&out)
    );
    println!("{}", stdout(&out).trim());
    assert!(run.success());

    // The store holds the game with its result; the PGN and the leaderboard have it.
    let store = Store::open_read_only(&dir.db()).unwrap();
    let g = store.game(game).unwrap();
    let result = g.result.clone().expect("the game has a result");
    assert!(g.ply_count >= 4, "{g:?}");
    let mine = store
        .plies(game)
        .unwrap()
        .iter()
        .filter(|p| p.player == "me")
        .count();
    assert!(mine >= 2, "the person's moves are stored");
    let pgn = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    let pgn = stdout(&pgn);
    assert!(
        pgn.contains("[White \"") && pgn.contains("\"me\"]"),
        "{pgn}"
    );
    assert!(pgn.contains(&format!("[Result \"{result}\"]")), "{pgn}");
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&board.stdout).unwrap();
    let me = crate::common::json_rows(&v, "standings")
        .iter()
        .find(|r| r["player"] == "me")
        .unwrap_or_else(|| panic!("no standings row for the person: {v}"))
        .clone();
    assert_eq!(me["games"], 1, "{me}");
    let score = match result.as_str() {
        "1/2-1/2" => 50.0,
        r if (r == "1-0") == (g.white == "me") => 100.0,
        _ => 0.0,
    };
    assert_eq!(me["score_pct"].as_f64(), Some(score), "{me}");
}

/// A model that forfeits against a person: the play page's state lists every reply its play mode
/// refused on that turn (the page shows them under "Replies refused on its last turn"), and the
/// forfeit's reason numbers the ply from 1, as the viewer does.
#[test]
fn the_play_page_shows_the_replies_of_a_forfeit() {
    let fake = crate::common::fake_openai_with(0, &["--answers", "e2e5:1000"]);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "person", games_per_pair = 2, max_plies = 10, seed = 4, concurrency = 1,
  players = {{
    arena.human {{ name = "me" }},
    arena.llm {{ name = "m", base_url = "{}", model = "fake-random-mover",
      options = {{ max_attempts = 2 }} }},
  }},
}}"#,
            fake.url
        ),
    );
    let db = dir.db();
    let mut run = Run::start(&dir);
    // The game in which the person is White waits for its first move; the model then forfeits.
    let games = wait(&dir, "both games", |store| {
        let t = store.find_tournament("person").ok()??;
        let games = store.games(t.id).ok()?;
        (games.len() == 2).then_some(games)
    });
    let server = PlayServer::start(dir.path(), "t.db");
    for g in &games {
        if g.white == "me"
            && let Some(s) = my_turn(&server, g.id)
        {
            let r = server.post(
                g.id,
                "move",
                &format!(r#"{{"uci":"{}","ply":0}}"#, some_move(&s)),
                true,
            );
            assert_eq!(r.status, 200, "{}", r.body);
        }
    }
    assert!(run.finished(), "the run ends with the games");
    let store = Store::open_read_only(&db).unwrap();
    for g in store.games(games[0].tournament).unwrap() {
        assert_eq!(g.termination.as_deref(), Some("forfeit"), "{g:?}");
        // The model forfeits at its first turn: the game's first ply, or its second.
        let shown_ply = if g.white == "m" { 1 } else { 2 };
        let reason = g.reason.clone().unwrap_or_default();
        assert!(reason.contains(&format!("at ply {shown_ply} ")), "{reason}");
        let r = request(
            server.addr(),
            "GET",
            &format!("/api/play/{}?reply=1", g.id),
            "",
            "",
        );
        assert_eq!(r.status, 200, "{}", r.body);
        let state: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        let rejected = state["rejected"]
            .as_array()
            .expect("a list of refused replies");
        let calls = store.llm_calls(g.id, shown_ply - 1).unwrap();
        assert_eq!(rejected.len(), 2, "{state}");
        assert_eq!(rejected.len(), calls.len(), "{state}");
        for (shown, call) in rejected.iter().zip(&calls) {
            assert_eq!(shown["outcome"], "illegal", "{state}");
            assert_eq!(shown["reply"].as_str(), call.call.reply_text.as_deref());
            assert!(shown["reply"].as_str().unwrap().contains("e2e5"), "{state}");
        }
        // Hidden with the replies.
        let hidden = server.state(g.id);
        assert_eq!(hidden["rejected"], serde_json::json!([]), "{hidden}");
    }
    // The page shows them.
    let Some(driver) = crate::report::browser_tools("the_play_page_shows_the_replies_of_a_forfeit")
    else {
        return;
    };
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("play-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let spec = serde_json::json!({
        "base": format!("http://{}", server.addr()),
        "token": server.token,
        "game": games[0].id,
        "rejected": 2,
        "contains": "e2e5",
        "screenshot": shots.join("play-rejected.png"),
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = Command::new("node")
        .current_dir(&driver)
        .arg("play_rejected.mjs")
        .arg(&spec_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the play page failed in chromium:\n{}\n{}",
        stdout(&out),
        crate::common::stderr(&out)
    );
}
