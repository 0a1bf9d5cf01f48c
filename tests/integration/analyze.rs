//! `arena analyze` on a store written by a real tournament: every ply analysed once, resumable, and
//! positions shared by games or by runs answered from the cache.

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
