//! `arena migrate`: a tournament played into a SQLite file moves to a fresh PostgreSQL database
//! and back unchanged (the same leaderboard, the same PGN byte for byte, the same checksums),
//! and the server's copy takes new games without id collisions.

use arena_testkit::FreshDatabase;

use crate::common::{TestDir, stderr, stdout, stockfish};

fn script(name: &str) -> String {
    format!(
        r#"return arena.tournament {{
  name = "{name}", games_per_pair = 4, max_plies = 24, seed = 5,
  players = {{
    arena.engine {{ name = "sf", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 400 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
    )
}

fn arena(dir: &TestDir, args: &[&str]) -> std::process::Output {
    dir.arena().args(args).output().expect("arena runs")
}

/// The check table `arena migrate` printed, without its title (which names both stores).
fn check_lines(out: &std::process::Output) -> Vec<String> {
    stdout(out).lines().skip(1).map(str::to_owned).collect()
}

/// `url` with a password, which no output may show.
fn with_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (user, host) = rest.split_once('@').expect("a user in the URL");
    format!("{scheme}://{user}:hunter2@{host}")
}

#[test]
fn a_played_tournament_moves_to_postgres_and_back_unchanged() {
    let test = "a_played_tournament_moves_to_postgres_and_back_unchanged";
    if !stockfish(test) {
        return;
    }
    let Some(server) = arena_testkit::postgres(test) else {
        return;
    };
    let database = FreshDatabase::create(&server, test);
    // The test server trusts local connections, so the password is accepted and never checked.
    let url = with_password(&database.url);
    let dir = TestDir::new();
    dir.write("t.lua", &script("migrate"));
    let run = dir.run("t.lua");
    assert!(run.status.success(), "{}", stderr(&run));

    let there = arena(&dir, &["migrate", "--from", "t.db", "--to", &url]);
    assert!(there.status.success(), "{}", stderr(&there));
    let printed = format!("{}{}", stdout(&there), stderr(&there));
    assert!(!printed.contains("hunter2"), "{printed}");
    assert!(
        stdout(&there).starts_with("t.db → postgres://"),
        "{printed}"
    );
    assert!(
        stdout(&there).lines().next().unwrap().contains(":***@"),
        "{printed}"
    );
    let lines = check_lines(&there);
    let plies = arena::store::Store::open(&dir.db())
        .unwrap()
        .games(1)
        .unwrap()
        .iter()
        .map(|g| g.ply_count)
        .sum::<u32>();
    assert!(plies > 0);
    let plies_line = lines
        .iter()
        .find(|l| l.starts_with("plies "))
        .expect("a plies line");
    assert!(
        plies_line.split_whitespace().nth(1) == Some(&plies.to_string()),
        "{plies_line} vs {plies} plies"
    );
    for line in lines
        .iter()
        .skip(2)
        .take_while(|l| !l.contains("row(s) in"))
    {
        assert!(line.ends_with("yes"), "{line}");
    }

    // Both stores answer the same: the leaderboard, and the PGN byte for byte (its Date header is
    // the games' own date, not the export's).
    for args in [
        &["leaderboard", "--all", "--games", "--stats"][..],
        &["export", "pgn"][..],
    ] {
        let mut file_args = args.to_vec();
        file_args.extend(["--db", "t.db"]);
        let mut server_args = args.to_vec();
        server_args.extend(["--db", url.as_str()]);
        let (file, server) = (arena(&dir, &file_args), arena(&dir, &server_args));
        assert!(file.status.success(), "{}", stderr(&file));
        assert!(server.status.success(), "{}", stderr(&server));
        assert!(!stdout(&file).is_empty());
        assert_eq!(
            stdout(&file),
            stdout(&server),
            "`{}` differs",
            args.join(" ")
        );
    }

    let home = arena(&dir, &["migrate", "--from", &url, "--to", "back.db"]);
    assert!(home.status.success(), "{}", stderr(&home));
    assert_eq!(
        check_lines(&home),
        lines,
        "the same rows hash alike on both backends"
    );
    let pgn = |db: &str| {
        let out = arena(&dir, &["export", "pgn", "--db", db]);
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    assert_eq!(pgn("back.db"), pgn("t.db"));

    // Copying onto a store in use is refused, naming its tables, and changes nothing.
    let again = arena(&dir, &["migrate", "--from", "t.db", "--to", "back.db"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already holds rows in")
            && stderr(&again).contains("`tournaments`"),
        "{}",
        stderr(&again)
    );
    assert_eq!(pgn("back.db"), pgn("t.db"));

    // The server's copy plays on: a second tournament's tournament, players, games and plies
    // take ids after the copied ones instead of colliding with them.
    dir.write("more.lua", &script("migrate more"));
    let more = arena(&dir, &["run", "more.lua", "--db", &url, "--no-watch"]);
    assert!(more.status.success(), "{}", stderr(&more));
    let store = arena::store::Store::open(std::path::Path::new(&database.url)).unwrap();
    let first = store.find_tournament("migrate").unwrap().unwrap();
    let second = store.find_tournament("migrate more").unwrap().unwrap();
    assert!(second.id > first.id);
    let (old, new) = (
        store.games(first.id).unwrap(),
        store.games(second.id).unwrap(),
    );
    assert_eq!(new.len(), 4);
    assert!(new.iter().all(|g| g.result.is_some()), "{new:?}");
    let last_old = old.iter().map(|g| g.id).max().unwrap();
    assert!(new.iter().all(|g| g.id > last_old));
    assert_eq!(
        store.plies(old[0].id).unwrap(),
        arena::store::Store::open(&dir.db())
            .unwrap()
            .plies(old[0].id)
            .unwrap()
    );
}

#[test]
fn a_missing_source_or_the_same_store_twice_is_refused_and_nothing_is_created() {
    let dir = TestDir::new();
    let out = arena(&dir, &["migrate", "--from", "nope.db", "--to", "new.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no store at `nope.db`"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("new.db").exists());
    let store = dir.path().join("t.db");
    arena::store::Store::open(&store).unwrap();
    let out = arena(&dir, &["migrate", "--from", "t.db", "--to", "./t.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is both the source and the destination"),
        "{}",
        stderr(&out)
    );
}
