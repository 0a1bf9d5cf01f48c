//! `arena analyze` on a store written by a real tournament: every ply analysed once, resumable (a
//! game's segments already searched are answered from the cache), and the same results whatever the
//! number of processes.

use rusqlite::Connection;

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

#[test]
fn analyze_a_played_tournament_and_resume_it() {
    if !stockfish("analyze_a_played_tournament_and_resume_it") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "an", games_per_pair = 2, max_plies = 12, seed = 5, concurrency = 2,
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { nodes = 2000 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));

    let analyze = |extra: &[&str]| {
        let mut args = vec![
            "analyze",
            "--db",
            "t.db",
            "--depth",
            "6",
            "--processes",
            "2",
        ];
        args.extend_from_slice(extra);
        dir.arena().args(&args).output().expect("arena runs")
    };
    let out = analyze(&["--win-model", "chessarena"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let progress = stderr(&out);
    assert!(progress.contains("an: 2 game(s) to analyse"), "{progress}");
    assert!(progress.contains("[2/2] game"), "{progress}");
    let table = stdout(&out);
    assert!(table.starts_with("an\n"), "{table}");
    assert!(
        table.contains("top moves %") && table.contains("accuracy"),
        "{table}"
    );
    for name in ["sf", "rnd"] {
        assert!(table.lines().any(|l| l.contains(name)), "{table}");
    }

    let store = open_store(&dir.db());
    let t = store.find_tournament("an").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let mut plies = 0;
    for g in &games {
        let analysed = store.ply_analyses(g.id).unwrap();
        assert_eq!(analysed.len() as u32, g.ply_count, "{g:?}");
        assert!(
            analysed
                .iter()
                .all(|a| a.win_model == "chessarena" && a.limits_key == "depth=6 multipv=3")
        );
        assert!(store.game_analysis(g.id).unwrap().is_some());
        plies += g.ply_count as u64;
    }
    let summary = store.analysis_summary(t.id).unwrap();
    assert_eq!(summary.iter().map(|r| r.plies).sum::<u64>(), plies);
    let sf = summary.iter().find(|r| r.player == "sf").unwrap();
    let rnd = summary.iter().find(|r| r.player == "rnd").unwrap();
    // A 2000-node Stockfish finds the depth-6 top three far more often than a random mover.
    assert!(sf.top_move_rate > rnd.top_move_rate, "{summary:?}");
    assert!(sf.acpl < rnd.acpl, "{summary:?}");

    // Nothing left: a second run analyses nothing.
    let out = analyze(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("an: 0 game(s) to analyse"),
        "{}",
        stderr(&out)
    );

    // Forget the tail of one game's analysis, as a run killed mid-game would leave it: the next run
    // analyses only those plies, from the cache, without searching.
    let game = games.iter().max_by_key(|g| g.ply_count).unwrap();
    assert!(game.ply_count > 4, "{game:?}");
    {
        let conn = Connection::open(dir.db()).unwrap();
        conn.execute("DELETE FROM game_analysis WHERE game_id = ?1", [game.id])
            .unwrap();
        conn.execute(
            "DELETE FROM ply_analysis WHERE game_id = ?1 AND ply >= 4",
            [game.id],
        )
        .unwrap();
    }
    let out = analyze(&["--win-model", "chessarena"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let progress = stderr(&out);
    let expected = format!(
        "{} plies, {} analysed now, 0 positions searched",
        game.ply_count,
        game.ply_count - 4
    );
    assert!(
        progress.contains("an: 1 game(s) to analyse") && progress.contains(&expected),
        "{progress}"
    );
    assert_eq!(
        store.ply_analyses(game.id).unwrap().len() as u32,
        game.ply_count
    );
    assert!(store.game_analysis(game.id).unwrap().is_some());
}

#[test]
fn analyze_refuses_a_missing_store() {
    let dir = TestDir::new();
    let out = dir
        .arena()
        .args(["analyze", "--db", "none.db"])
        .output()
        .expect("arena runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no store at `none.db`"),
        "{}",
        stderr(&out)
    );
}

/// Every stored analysis row of a store (plies, then games), as text, in a fixed order.
fn analysis_rows(db: &std::path::Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut rows = Vec::new();
    for (table, order) in [
        ("ply_analysis", "game_id, ply"),
        ("game_analysis", "game_id"),
    ] {
        // Every column but the time a row was written.
        let mut statement = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY {order}"))
            .unwrap();
        let kept: Vec<usize> = (0..statement.column_count())
            .filter(|&i| !statement.column_name(i).unwrap().ends_with("_at"))
            .collect();
        assert!(kept.len() > 3, "{table}");
        let mut query = statement.query([]).unwrap();
        while let Some(row) = query.next().unwrap() {
            let cells: Vec<String> = kept
                .iter()
                .map(|&i| format!("{:?}", row.get_ref(i).unwrap()))
                .collect();
            rows.push(format!("{table}|{}", cells.join("|")));
        }
    }
    rows
}

#[test]
fn the_same_games_give_the_same_analysis_on_one_or_two_processes_and_twice() {
    if !stockfish("the_same_games_give_the_same_analysis_on_one_or_two_processes_and_twice") {
        return;
    }
    let dir = TestDir::new();
    // Two engines that rarely end a game early: 40 plies, 41 positions, two segments a game.
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "same", games_per_pair = 2, max_plies = 40, seed = 3, concurrency = 2,
  players = {
    arena.engine { name = "sf200", options = { Threads = 1, Hash = 16 }, limits = { nodes = 200 } },
    arena.engine { name = "sf400", options = { Threads = 1, Hash = 16 }, limits = { nodes = 400 } },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let copy = |name: &str| {
        let path = dir.path().join(name);
        let conn = Connection::open(dir.db()).unwrap();
        conn.execute("VACUUM INTO ?1", [path.to_str().unwrap()])
            .unwrap();
        path
    };
    let (one, two) = (copy("one.db"), copy("two.db"));
    let analyze = |db: &std::path::Path, processes: &str| {
        let out = dir
            .arena()
            .args(["analyze", "--db", db.to_str().unwrap(), "--depth", "9"])
            .args(["--processes", processes])
            .output()
            .expect("arena runs");
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    analyze(&one, "1");
    let progress = analyze(&two, "2");
    assert!(progress.contains("2 game(s) to analyse"), "{progress}");
    let rows = analysis_rows(&one);
    assert!(rows.len() > 40, "{rows:?}");
    assert_eq!(rows, analysis_rows(&two), "one process against two");

    // Twice: forget every analysis and every cached search, and analyse again.
    {
        let conn = Connection::open(&two).unwrap();
        conn.execute_batch(
            "DELETE FROM ply_analysis; DELETE FROM game_analysis; DELETE FROM analysis_cache;",
        )
        .unwrap();
    }
    let progress = analyze(&two, "2");
    assert!(!progress.contains(" 0 positions searched"), "{progress}");
    assert_eq!(
        rows,
        analysis_rows(&two),
        "a second analysis of the same games"
    );
}
