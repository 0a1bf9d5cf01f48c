//! `arena serve` over HTTP: a real store made by a short tournament (random mover against
//! Stockfish), its pages, paging and filters, a game's data, the leaderboard, the token, the
//! security headers, escaping of a hostile model's reply, and the same on PostgreSQL.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    path::Path,
    process::{Child, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

use arena::store::{LlmCallRecord, PlayerRecord, PlyRecord, ScheduledGame, Store};

use crate::common::{TestDir, stderr, stdout, stockfish};

/// A reply as a hostile model would write it.
const INJECTED: &str =
    "</script><script>window.__arena_pwned = 1</script><img src=x onerror=alert(1)>";

/// `arena serve` running on a free loopback port; killed when dropped.
pub struct Server {
    child: Child,
    /// The rest of its standard output, after the line that says where it listens.
    out: BufReader<ChildStdout>,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Server {
    /// Starts `arena serve --db DB --listen 127.0.0.1:0 EXTRA...` and waits for its address.
    pub fn start(dir: &Path, db: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arena"))
            .current_dir(dir)
            .args(["serve", "--db", db, "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("arena serve starts");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split(['/', ' ', '\n']).next())
            .unwrap_or_else(|| panic!("arena serve did not say where it listens: {line:?}"))
            .to_owned();
        Server { child, out, addr }
    }

    /// The next line the server prints.
    pub fn next_line(&mut self) -> String {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        line
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET path` with extra header lines: the status, the headers (lower-cased names) and
    /// the body.
    pub fn get_with(&self, path: &str, headers: &str) -> Response {
        request(&self.addr, "GET", path, headers, "")
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Response {
        self.get_with(path, "")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request on its own connection (`Connection: close`), read to the end.
pub fn request(addr: &str, method: &str, path: &str, headers: &str, body: &str) -> Response {
    let mut stream = TcpStream::connect(addr).expect("the server accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("the server answers");
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {raw:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    Response {
        status,
        headers,
        body: if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        },
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The ids of the games a page lists, in order.
fn listed_games(html: &str) -> Vec<i64> {
    html.split("data-game=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next()?.parse().ok())
        .collect()
}

/// A short real tournament: a random mover against Stockfish, 6 games.
pub fn real_store(dir: &TestDir) {
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "served", games_per_pair = 6, max_plies = 30, seed = 3, concurrency = 2,
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 10 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn serve_browses_a_real_store_page_by_page() {
    if !stockfish("serve_browses_a_real_store_page_by_page") {
        return;
    }
    let dir = TestDir::new();
    real_store(&dir);
    let store = Store::open_read_only(&dir.db()).unwrap();
    let t = store.find_tournament("served").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 6);
    drop(store);

    let server = Server::start(dir.path(), "t.db", &["--page-size", "4"]);
    let index = server.get("/");
    assert_eq!(index.status, 200, "{}", index.body);
    assert!(
        index
            .body
            .contains(&format!("href=\"/tournaments/{}\"", t.id))
    );
    assert!(index.body.contains(">served<"), "{}", index.body);

    // The first page: 4 of 6 games, a link to the next page, the security headers.
    let first = server.get(&format!("/tournaments/{}", t.id));
    assert_eq!(first.status, 200);
    let csp = first.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert_eq!(first.header("x-content-type-options"), Some("nosniff"));
    let ids: Vec<i64> = games.iter().map(|g| g.id).collect();
    assert_eq!(listed_games(&first.body), ids[..4]);
    assert!(first.body.contains("6 of 6 games"), "{}", first.body);
    let next = format!("/tournaments/{}?after={}", t.id, games[3].index);
    assert!(
        first.body.contains(&format!("href=\"{next}\"")),
        "{}",
        first.body
    );
    assert!(!first.body.contains("rel=\"prev\""));
    // The next page and back.
    let second = server.get(&next);
    assert_eq!(listed_games(&second.body), ids[4..]);
    assert!(!second.body.contains("rel=\"next\""));
    let back = format!("/tournaments/{}?before={}", t.id, games[4].index);
    assert!(
        second.body.contains(&format!("href=\"{back}\"")),
        "{}",
        second.body
    );
    assert_eq!(listed_games(&server.get(&back).body), ids[..4]);

    // Filters: the random mover as White, then a result.
    let page = server.get(&format!("/tournaments/{}?player=rnd&colour=white", t.id));
    let as_white: Vec<i64> = games
        .iter()
        .filter(|g| g.white == "rnd")
        .map(|g| g.id)
        .take(4)
        .collect();
    assert!(!as_white.is_empty());
    assert_eq!(listed_games(&page.body), as_white);
    let won_by_white = games
        .iter()
        .filter(|g| g.result.as_deref() == Some("1-0"))
        .count();
    let page = server.get(&format!("/tournaments/{}?result=1-0", t.id));
    assert!(
        page.body.contains(&format!("{won_by_white} of 6 games")),
        "{}",
        page.body
    );
    let bad = server.get(&format!("/tournaments/{}?result=2-0", t.id));
    assert_eq!(bad.status, 400);

    // A game as the viewer reads it: every stored ply, the result.
    let g = &games[0];
    let json = server.get(&format!("/api/games/{}", g.id));
    assert_eq!(json.status, 200);
    assert_eq!(json.header("content-type"), Some("application/json"));
    let data: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    assert_eq!(
        data["plies"].as_array().unwrap().len(),
        g.ply_count as usize
    );
    assert_eq!(data["result"].as_str(), g.result.as_deref());
    assert_eq!(data["white"], g.white.as_str());

    // The leaderboard fragment: the tables of `arena leaderboard --stats`.
    let board = server.get(&format!("/tournaments/{}/leaderboard", t.id));
    assert_eq!(board.status, 200);
    for title in ["Glicko", "standings", "terminations"] {
        assert!(
            board.body.contains(title),
            "no {title} table: {}",
            board.body
        );
    }
    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--stats", "--format", "json"])
        .output()
        .unwrap();
    let tables: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        board.body.matches("<div class=\"table\">").count(),
        tables["tables"].as_array().unwrap().len(),
        "every table of `arena leaderboard --stats`"
    );
    // The same figures to the last digit: the served JSON is the command's document.
    let served = server.get(&format!("/api/tournaments/{}/leaderboard", t.id));
    assert_eq!(served.status, 200);
    assert_eq!(served.header("content-type"), Some("application/json"));
    assert_eq!(served.body, String::from_utf8(out.stdout).unwrap());

    // The viewer's own assets; nothing else reaches the file system.
    assert_eq!(server.get("/assets/viewer.js").status, 200);
    for path in [
        "/assets/../Cargo.toml",
        "/assets/..%2F..%2FCargo.toml",
        "/assets/%2e%2e/t.db",
        "/../t.db",
        "/t.db",
        "/api/games/999999",
        "/tournaments/999",
    ] {
        assert_eq!(server.get(path).status, 404, "{path}");
    }
}

#[test]
fn serve_needs_a_token_beyond_loopback_and_checks_it() {
    let dir = TestDir::new();
    drop(Store::open(&dir.db()).unwrap());
    let out = dir
        .arena()
        .args(["serve", "--db", "t.db", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("reachable from other machines") && stderr(&out).contains("--token"),
        "{}",
        stderr(&out)
    );

    let server = Server::start(dir.path(), "t.db", &["--token", "s3cret"]);
    assert_eq!(server.get("/").status, 401);
    assert_eq!(server.get("/?token=wrong").status, 401);
    assert_eq!(
        server
            .get_with("/", "Authorization: Bearer s3cret\r\n")
            .status,
        200
    );
    let with_query = server.get("/?token=s3cret");
    assert_eq!(with_query.status, 200);
    let cookie = with_query.header("set-cookie").unwrap().to_owned();
    let cookie = cookie.split(';').next().unwrap();
    assert_eq!(
        server
            .get_with("/", &format!("Cookie: {cookie}\r\n"))
            .status,
        200
    );
    assert!(
        server
            .get_with("/", "Authorization: Bearer s3cret\r\n")
            .body
            .contains("No tournament in this store yet")
    );
}

#[test]
fn a_hostile_reply_stays_text_on_every_page() {
    let dir = TestDir::new();
    let store = Store::open(&dir.db()).unwrap();
    let t = store.open_tournament("t<b>", "t.lua", "{}").unwrap();
    let name = "m</script><script>x()</script>";
    store
        .upsert_player(t.id, &PlayerRecord::new(name, "llm", r#"{"model":"m"}"#))
        .unwrap();
    store
        .upsert_player(t.id, &PlayerRecord::new("rnd", "random", "{}"))
        .unwrap();
    store
        .schedule_games(t.id, &[ScheduledGame::new(0, 0, name, "rnd")])
        .unwrap();
    let g = store.games(t.id).unwrap()[0].id;
    store.mark_game_started(g, "hash", 1).unwrap();
    let id = store
        .record_llm_call(&LlmCallRecord {
            game_id: Some(g),
            ply: 0,
            seq: 0,
            player: name.into(),
            model: "m".into(),
            request_json: r#"{"messages":[{"role":"user","content":"move"}]}"#.into(),
            reply_text: Some(INJECTED.into()),
            ..LlmCallRecord::default()
        })
        .unwrap();
    store
        .set_llm_call_outcome(id, "move", Some("e2e4"))
        .unwrap();
    store
        .record_ply(
            g,
            &PlyRecord {
                ply: 0,
                fen_before: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
                uci: "e2e4".into(),
                san: "e4".into(),
                player: name.into(),
                attempts: 1,
                elapsed_ms: 1,
                clock_ms: None,
            },
        )
        .unwrap();
    store
        .finish_game(g, "0-1", "forfeit", Some(INJECTED))
        .unwrap();
    drop(store);

    let server = Server::start(dir.path(), "t.db", &[]);
    for path in [
        "/".to_owned(),
        format!("/tournaments/{}", t.id),
        format!("/tournaments/{}/games", t.id),
        format!("/tournaments/{}/leaderboard", t.id),
    ] {
        let page = server.get(&path);
        assert_eq!(page.status, 200, "{path}");
        assert!(
            !page.body.contains("<script>x()") && !page.body.contains("</script><script>"),
            "{path} carries markup from the store: {}",
            page.body
        );
        // The only scripts are the server's own files.
        for script in page.body.split("<script").skip(1) {
            assert!(
                script.starts_with(" src=\"/assets/"),
                "{path}: <script{script}"
            );
        }
    }
    let page = server.get(&format!("/tournaments/{}", t.id));
    assert!(
        page.body
            .contains("m&lt;/script&gt;&lt;script&gt;x()&lt;/script&gt;")
    );
    // The game's data is JSON (never markup), and the reply comes back exactly.
    let json = server.get(&format!("/api/games/{g}"));
    assert_eq!(json.header("content-type"), Some("application/json"));
    let data: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    assert_eq!(data["plies"][0]["calls"][0]["reply"], INJECTED);
    assert_eq!(data["reason"], INJECTED);
}

#[test]
fn serve_browses_a_postgres_store() {
    let test = "serve_browses_a_postgres_store";
    let Some(server_url) = arena_testkit::postgres(test) else {
        return;
    };
    if !stockfish(test) {
        return;
    }
    let db = arena_testkit::FreshDatabase::create(&server_url, test);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "shared", games_per_pair = 2, max_plies = 16, seed = 4,
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 10 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = dir
        .arena()
        .args(["run", "t.lua", "--db", &db.url, "--no-watch"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let server = Server::start(dir.path(), &db.url, &["--page-size", "1"]);
    let index = server.get("/");
    assert_eq!(index.status, 200, "{}", index.body);
    let id: i64 = index
        .body
        .split("href=\"/tournaments/")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    let first = server.get(&format!("/tournaments/{id}"));
    let ids = listed_games(&first.body);
    assert_eq!(ids.len(), 1);
    assert!(first.body.contains("2 of 2 games"));
    let json = server.get(&format!("/api/games/{}", ids[0]));
    let data: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    assert!(!data["plies"].as_array().unwrap().is_empty());
    let board = server.get(&format!("/tournaments/{id}/leaderboard"));
    assert!(board.body.contains("standings"), "{}", board.body);
    // The figures the database summed are the command's, to the last digit.
    let served = server.get(&format!("/api/tournaments/{id}/leaderboard"));
    let out = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            &db.url,
            "--stats",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(served.body, stdout(&out));
    let start = Instant::now();
    drop(server);
    assert!(start.elapsed() < Duration::from_secs(60));
}

/// Reads a server-sent event stream until `done` says the events read so far suffice, and
/// returns them as (name, data) pairs.
fn read_events(
    addr: &str,
    path: &str,
    timeout: Duration,
    mut done: impl FnMut(&[(String, serde_json::Value)]) -> bool,
) -> Vec<(String, serde_json::Value)> {
    let mut stream = TcpStream::connect(addr).expect("the server accepts");
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let deadline = Instant::now() + timeout;
    let mut raw = String::new();
    let mut events = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("the event stream broke: {e}"),
        }
        // Events are `event: NAME\ndata: JSON\n\n` (inside the chunked framing).
        events.clear();
        for block in raw.split("event: ").skip(1) {
            let Some((name, rest)) = block.split_once('\n') else {
                continue;
            };
            let Some(data) = rest
                .strip_prefix("data: ")
                .and_then(|d| d.split('\n').next())
            else {
                continue;
            };
            if let Ok(value) = serde_json::from_str(data) {
                events.push((name.trim().to_owned(), value));
            }
        }
        if done(&events) {
            break;
        }
    }
    events
}

/// Starts `arena run t.lua` in `dir` and waits (two minutes at most) until its store holds the
/// tournament `name`; returns the run and the tournament's id.
// The caller kills and waits for the run it is handed.
#[allow(clippy::zombie_processes)]
fn start_run(dir: &TestDir, name: &str) -> (std::process::Child, i64) {
    let mut run = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if Instant::now() > deadline {
            let _ = run.kill();
            let _ = run.wait();
            panic!("the run made no tournament");
        }
        if let Ok(store) = Store::open_read_only(&dir.db())
            && let Ok(Some(t)) = store.find_tournament(name)
        {
            return (run, t.id);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_ply_stored_by_a_running_tournament_reaches_an_event_stream() {
    if !stockfish("a_ply_stored_by_a_running_tournament_reaches_an_event_stream") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "live", games_per_pair = 2, max_plies = 40, seed = 5, concurrency = 1,
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 60 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    // The server opens the store once the run has made it.
    let (mut run, id) = start_run(&dir, "live");
    let server = Server::start(dir.path(), "t.db", &[]);
    let events = read_events(
        &server.addr,
        &format!("/api/tournaments/{id}/events"),
        Duration::from_secs(300),
        |events| {
            events.iter().any(|(n, _)| n == "leaderboard")
                && events
                    .iter()
                    .filter(|(n, d)| n == "ply" && d["plies"].as_u64().is_some())
                    .count()
                    >= 3
        },
    );
    let _ = run.kill();
    let _ = run.wait();
    assert_eq!(
        events.first().map(|(n, _)| n.as_str()),
        Some("hello"),
        "{events:?}"
    );
    let plies: Vec<(i64, u64)> = events
        .iter()
        .filter(|(n, _)| n == "ply")
        .filter_map(|(_, d)| Some((d["game"].as_i64()?, d["plies"].as_u64()?)))
        .collect();
    assert!(plies.len() >= 3, "{events:?}");
    // Each ply event tells a count the store holds (or held: the game went on).
    let store = Store::open_read_only(&dir.db()).unwrap();
    for (game, n) in &plies {
        assert!(
            u64::from(store.game(*game).unwrap().ply_count) >= *n,
            "{game}: {n}"
        );
    }
    // Counts of a game only grow, one event per change.
    for pair in plies.windows(2) {
        if pair[0].0 == pair[1].0 {
            assert!(pair[1].1 > pair[0].1, "{plies:?}");
        }
    }
    assert!(
        events
            .iter()
            .any(|(n, d)| n == "leaderboard" && d["finished"].as_u64() >= Some(1)),
        "{events:?}"
    );
    assert!(events.iter().any(|(n, _)| n == "games"));
}

#[test]
fn a_live_page_follows_the_games_in_headless_chromium() {
    let test = "a_live_page_follows_the_games_in_headless_chromium";
    if !stockfish(test) {
        return;
    }
    let Some(driver) = crate::report::browser_tools(test) else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "watched", games_per_pair = 4, max_plies = 50, seed = 6, concurrency = 1,
  players = {
    arena.engine { name = "sf-a", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 250 } },
    arena.engine { name = "sf-b", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 250 } },
  },
}"#,
    );
    // The page opens the game that is running when it loads.
    let (mut run, tournament) = start_run(&dir, "watched");
    let server = Server::start(dir.path(), "t.db", &[]);
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let spec = serde_json::json!({
        "base": format!("http://{}", server.addr),
        "tournament": tournament,
        "screenshots": shots,
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = Command::new("node")
        .current_dir(&driver)
        .arg("serve.mjs")
        .arg(&spec_path)
        .output()
        .unwrap();
    let _ = run.kill();
    let _ = run.wait();
    assert!(
        out.status.success(),
        "the live page failed in chromium:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    println!("{}", stdout(&out).trim());
}
