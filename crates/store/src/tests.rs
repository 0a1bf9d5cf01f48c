use std::{fs, path::Path, sync::Arc, thread};

use rusqlite::Connection;
use tempfile::TempDir;

use super::{migrations, schema, *};

fn temp_store() -> (TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("create temp dir");
    let path = dir.path().join("arena.db");
    (dir, path)
}

fn player(store: &Store, t: i64, name: &str, kind: &str) {
    store
        .upsert_player(t, &PlayerRecord::new(name, kind, "{}"))
        .expect("add player");
}

/// A tournament with players `a`, `b`, `c` and the given games (index, white, black).
fn tournament(store: &Store, name: &str, pairings: &[(u32, &str, &str)]) -> (i64, Vec<i64>) {
    let t = store
        .open_tournament(name, "t.lua", "{}")
        .expect("open tournament")
        .id;
    for p in ["a", "b", "c"] {
        player(store, t, p, "llm");
    }
    let games: Vec<_> = pairings
        .iter()
        .map(|&(i, w, b)| ScheduledGame::new(i, 0, w, b))
        .collect();
    store.schedule_games(t, &games).expect("schedule");
    let ids = store
        .games(t)
        .expect("games")
        .iter()
        .map(|g| g.id)
        .collect();
    (t, ids)
}

fn ply(n: u32, player: &str) -> PlyRecord {
    PlyRecord {
        ply: n,
        fen_before: format!("fen {n}"),
        uci: "e2e4".into(),
        san: "e4".into(),
        player: player.into(),
        attempts: 1,
        elapsed_ms: 12,
        clock_ms: None,
    }
}

fn call(game: Option<i64>, ply: u32, seq: u32, player: &str) -> LlmCallRecord {
    LlmCallRecord {
        game_id: game,
        ply,
        seq,
        player: player.into(),
        model: "smol".into(),
        endpoint: "http://127.0.0.1:8765/v1".into(),
        request_json: r#"{"messages":[]}"#.into(),
        reply_text: Some("I play e4".into()),
        reasoning: Some("thinking".into()),
        raw_body: Some("{}".into()),
        finish_reason: Some("stop".into()),
        http_status: Some(200),
        prompt_tokens: Some(100),
        completion_tokens: Some(10),
        latency_ms: 250,
        transport_retries: 1,
        error: None,
        details: UsageDetails::default(),
    }
}

fn header(path: &Path) -> (i32, i64, String) {
    let conn = Connection::open(path).expect("open raw");
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    (app, version, mode)
}

fn schema_sql(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Store>();
}

#[test]
fn creates_schema_and_reopens() {
    let (_dir, path) = temp_store();
    {
        let store = Store::open(&path).unwrap();
        store.open_tournament("t1", "a.lua", r#"{"x":1}"#).unwrap();
    }
    assert_eq!(
        header(&path),
        (
            schema::APPLICATION_ID,
            schema::CURRENT_VERSION,
            "wal".to_owned()
        )
    );
    let store = Store::open(&path).unwrap();
    let t = store
        .find_tournament("t1")
        .unwrap()
        .expect("stored tournament");
    assert_eq!(
        (t.script_path.as_str(), t.settings_json.as_str()),
        ("a.lua", r#"{"x":1}"#)
    );
    assert!(
        t.created_at.ends_with('Z') && t.created_at.contains('T'),
        "{}",
        t.created_at
    );
    // Get-or-create keeps the first settings.
    let again = store.open_tournament("t1", "b.lua", "{}").unwrap();
    assert_eq!(again, t);
    assert_eq!(store.tournaments().unwrap(), vec![t]);
    assert_eq!(store.find_tournament("nope").unwrap(), None);
}

#[test]
fn accepts_an_empty_existing_file() {
    let file = tempfile::NamedTempFile::new().unwrap();
    assert_eq!(fs::metadata(file.path()).unwrap().len(), 0);
    let store = Store::open(file.path()).unwrap();
    store.open_tournament("t", "t.lua", "{}").unwrap();
    drop(store);
    assert_eq!(header(file.path()).0, schema::APPLICATION_ID);
}

/// A new store is made from the snapshot in `new_store.sql`, which must be exactly what running
/// every migration in turn makes of an empty store: the same statements in the same order, at
/// the same version. `ARENA_BLESS=1` rewrites the snapshot instead, for review as a diff.
#[test]
fn a_new_store_has_the_schema_every_migration_makes() {
    let mut replayed = Connection::open_in_memory().unwrap();
    let found =
        schema::migrate_making_new_stores(&mut replayed, schema::NewStore::ByEveryMigration)
            .unwrap();
    assert_eq!(found, 0, "the in-memory store was empty");
    let statements = schema::schema_statements(&replayed).unwrap();
    let snapshot = format!(
        "-- The schema of a new arena store, version {version}: what running the SQLite side of every\n\
         -- step of crates/store/src/migrations.rs makes of an empty store, made here in one batch.\n\
         -- Written by `ARENA_BLESS=1 cargo test -p arena-store --lib new_store_has_the_schema`: never edit it by\n\
         -- hand; add a migration and bless the file again.\n{statements}",
        version = schema::CURRENT_VERSION
    );
    if std::env::var("ARENA_BLESS").is_ok_and(|v| v == "1") {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/new_store.sql");
        fs::write(&file, &snapshot).unwrap();
        eprintln!("wrote {}: rebuild and run the test again", file.display());
        return;
    }
    assert!(
        schema::NEW_STORE_SCHEMA == snapshot,
        "crates/store/src/new_store.sql is not what the migrations make: run `ARENA_BLESS=1 cargo test \
         --lib new_store_has_the_schema` and review the diff.\nThe migrations make:\n{snapshot}"
    );

    let (_dir, path) = temp_store();
    drop(Store::open(&path).unwrap());
    let made = Connection::open(&path).unwrap();
    assert_eq!(schema::schema_statements(&made).unwrap(), statements);
    let (app, version, _) = header(&path);
    assert_eq!(
        (app, version),
        (schema::APPLICATION_ID, schema::CURRENT_VERSION)
    );
}

#[test]
fn migrations_are_idempotent() {
    let (_dir, path) = temp_store();
    drop(Store::open(&path).unwrap());
    let before = schema_sql(&Connection::open(&path).unwrap());
    // Version 6 rebuilt the table, and SQLite quotes the name it renamed.
    assert!(
        before
            .iter()
            .any(|s| s.contains("CREATE TABLE \"llm_calls\""))
    );
    for _ in 0..3 {
        drop(Store::open(&path).unwrap());
    }
    let mut conn = Connection::open(&path).unwrap();
    assert_eq!(schema::migrate(&mut conn).unwrap(), schema::CURRENT_VERSION);
    assert_eq!(schema_sql(&conn), before);
    drop(conn);
    assert_eq!(header(&path).1, schema::CURRENT_VERSION);
}

#[test]
fn refuses_a_non_sqlite_file_without_touching_it() {
    let (dir, path) = temp_store();
    let bytes = b"this is a tournament script, not a database\n".repeat(100);
    fs::write(&path, &bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("not an SQLite database"), "{message}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no -wal or -shm left behind"
    );
}

#[test]
fn refuses_a_foreign_sqlite_database_without_touching_it() {
    let (dir, path) = temp_store();
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let bytes = fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotAStore { .. }), "{err:?}");
    assert!(err.to_string().contains("another program"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    assert_eq!(header(&path), (0, 0, "delete".to_owned()));
}

#[test]
fn refuses_a_newer_schema_without_touching_it() {
    let (_dir, path) = temp_store();
    drop(Store::open(&path).unwrap());
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA user_version = 99").unwrap();
    }
    let bytes = fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!((*found, *supported), (99, schema::CURRENT_VERSION));
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert!(err.to_string().contains("arena.db"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

#[test]
fn open_names_the_path_when_the_directory_is_missing() {
    let (dir, _) = temp_store();
    let path = dir.path().join("missing").join("arena.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn scripts_round_trip_and_are_idempotent() {
    let store = Store::open_in_memory().unwrap();
    let files = vec![
        ("main.lua".to_owned(), "return {}".to_owned()),
        ("modes/blitz.lua".to_owned(), "-- blitz".to_owned()),
    ];
    assert_eq!(store.scripts("h1").unwrap(), None);
    store.save_scripts("h1", &files).unwrap();
    store.save_scripts("h1", &files).unwrap();
    assert_eq!(store.scripts("h1").unwrap(), Some(files.clone()));
    let other = vec![("main.lua".to_owned(), "changed".to_owned())];
    let err = store.save_scripts("h1", &other).unwrap_err();
    assert!(matches!(err, StoreError::ScriptsMismatch { .. }), "{err:?}");
    let dup = vec![files[0].clone(), files[0].clone()];
    let err = store.save_scripts("h2", &dup).unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    assert_eq!(
        store.scripts("h2").unwrap(),
        None,
        "a failed save stores nothing"
    );
}

#[test]
fn players_are_upserted() {
    let store = Store::open_in_memory().unwrap();
    let t = store.open_tournament("t", "t.lua", "{}").unwrap().id;
    let id = store
        .upsert_player(t, &PlayerRecord::new("gpt", "llm", r#"{"temp":0}"#))
        .unwrap();
    let same = store
        .upsert_player(t, &PlayerRecord::new("gpt", "llm", r#"{"temp":1}"#))
        .unwrap();
    assert_eq!(id, same);
    store
        .upsert_player(t, &PlayerRecord::new("sf", "engine", "{}"))
        .unwrap();
    let players = store.players(t).unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(
        (players[0].name.as_str(), players[0].settings_json.as_str()),
        ("gpt", r#"{"temp":1}"#)
    );
    let err = store
        .upsert_player(999, &PlayerRecord::new("x", "llm", "{}"))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::MissingReference { .. }),
        "{err:?}"
    );
}

#[test]
fn the_next_games_are_stored_only_by_a_worker_that_saw_the_current_schedule() {
    let store = Store::open_in_memory().unwrap();
    let (t, _) = tournament(&store, "t", &[(0, "a", "b")]);
    // Two workers read one game and each computes game 1; the first one's stands.
    let first = [ScheduledGame::new(1, 1, "a", "c")];
    let second = [ScheduledGame::new(1, 1, "b", "c")];
    assert!(store.schedule_games_after(t, 1, &first).unwrap());
    assert!(!store.schedule_games_after(t, 1, &second).unwrap());
    let games = store.games(t).unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(
        (games[1].white.as_str(), games[1].black.as_str()),
        ("a", "c")
    );
    // Asked again with what is stored now, the late worker adds the game after.
    assert!(
        store
            .schedule_games_after(t, 2, &[ScheduledGame::new(2, 1, "b", "c")])
            .unwrap()
    );
    assert_eq!(store.games(t).unwrap().len(), 3);
}

#[test]
fn scheduling_is_idempotent_and_detects_changes() {
    let store = Store::open_in_memory().unwrap();
    let (t, _) = tournament(&store, "t", &[]);
    let mut opening = ScheduledGame::new(1, 0, "b", "a");
    opening.start_fen = Some("8/8/8/8/8/8/8/K1k5 w - - 0 1".into());
    opening.opening_moves = vec!["e2e4".into(), "e7e5".into()];
    opening.opening_label = Some("King's pawn".into());
    let schedule = vec![ScheduledGame::new(0, 0, "a", "b"), opening.clone()];
    store.schedule_games(t, &schedule).unwrap();
    let first = store.games(t).unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[1].opening_moves, opening.opening_moves);
    assert_eq!(first[1].opening_label.as_deref(), Some("King's pawn"));
    assert_eq!(first[1].status, GameStatus::Scheduled);

    // Scheduling again (resume), plus one new game, keeps the stored rows.
    store.mark_game_started(first[0].id, "h", 1).unwrap();
    let mut more = schedule.clone();
    more.push(ScheduledGame::new(2, 1, "a", "c"));
    store.schedule_games(t, &more).unwrap();
    let second = store.games(t).unwrap();
    assert_eq!(second.len(), 3);
    assert_eq!(second[0], store.game(first[0].id).unwrap());
    assert_eq!(second[0].status, GameStatus::Running);
    assert_eq!(
        second.iter().map(|g| g.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );

    // A changed pairing fails, and the whole batch (with its new game 3) is rolled back.
    let mut changed = more.clone();
    changed.push(ScheduledGame::new(3, 1, "b", "c"));
    changed[1].opening_moves = vec!["d2d4".into()];
    let err = store.schedule_games(t, &changed).unwrap_err();
    match &err {
        StoreError::ScheduleMismatch {
            index,
            stored,
            requested,
        } => {
            assert_eq!(*index, 1);
            assert!(
                stored.contains("e2e4 e7e5") && requested.contains("d2d4"),
                "{err}"
            );
        }
        other => panic!("expected ScheduleMismatch, got {other:?}"),
    }
    let swapped = vec![ScheduledGame::new(0, 0, "b", "a")];
    let err = store.schedule_games(t, &swapped).unwrap_err();
    assert!(
        matches!(err, StoreError::ScheduleMismatch { index: 0, .. }),
        "{err:?}"
    );
    assert_eq!(store.games(t).unwrap().len(), 3);

    let err = store
        .schedule_games(t, &[ScheduledGame::new(9, 0, "a", "zed")])
        .unwrap_err();
    assert!(
        matches!(err, StoreError::UnknownPlayer { index: 9, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("`zed`"), "{err}");
    let err = store.schedule_games(999, &schedule).unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
}

#[test]
fn full_game_lifecycle() {
    let store = Store::open_in_memory().unwrap();
    let (t, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    let g = ids[0];
    let fresh = store.game(g).unwrap();
    assert_eq!(
        (fresh.status, fresh.started_at.clone(), fresh.ply_count),
        (GameStatus::Scheduled, None, 0)
    );

    store.mark_game_started(g, "hash-1", 1).unwrap();
    let started = store.game(g).unwrap();
    assert_eq!(started.status, GameStatus::Running);
    assert_eq!(
        (started.script_hash.as_deref(), started.generation),
        (Some("hash-1"), Some(1))
    );

    store.record_ply(g, &ply(0, "a")).unwrap();
    let c = store.record_llm_call(&call(Some(g), 1, 0, "b")).unwrap();
    store.set_llm_call_outcome(c, "move", Some("e7e5")).unwrap();
    store.record_ply(g, &ply(1, "b")).unwrap();

    // An outage stops the game; the resumed run keeps the first hash and start time.
    store
        .mark_game_errored(g, ErrorKind::Api, "endpoint `local` unreachable")
        .unwrap();
    let errored = store.game(g).unwrap();
    assert_eq!(errored.status, GameStatus::Errored);
    assert_eq!(
        errored.error.as_deref(),
        Some("endpoint `local` unreachable")
    );
    assert_eq!(errored.error_kind, Some(ErrorKind::Api));
    store.mark_game_started(g, "hash-2", 2).unwrap();
    let resumed = store.game(g).unwrap();
    assert_eq!(
        (resumed.script_hash.as_deref(), resumed.generation),
        (Some("hash-1"), Some(1))
    );
    assert_eq!(resumed.started_at, started.started_at);
    assert_eq!(
        (resumed.status, resumed.error.clone(), resumed.error_kind),
        (GameStatus::Running, None, None)
    );
    let events = store.events(t).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (
            events[0].game_id,
            events[0].level.as_str(),
            events[0].kind.as_str()
        ),
        (Some(g), "error", "game_errored")
    );

    store.record_ply(g, &ply(2, "a")).unwrap();
    let err = store.finish_game(g, "1:0", "checkmate", None).unwrap_err();
    assert!(matches!(err, StoreError::InvalidResult { .. }), "{err:?}");
    store
        .finish_game(g, "1-0", "checkmate", Some("mate on f7"))
        .unwrap();
    let done = store.game(g).unwrap();
    assert_eq!(done.status, GameStatus::Finished);
    assert_eq!(
        (
            done.result.as_deref(),
            done.termination.as_deref(),
            done.reason.as_deref()
        ),
        (Some("1-0"), Some("checkmate"), Some("mate on f7"))
    );
    assert!(done.finished_at.is_some());
    assert_eq!(done.ply_count, 3);
    assert_eq!(
        store.plies(g).unwrap(),
        vec![ply(0, "a"), ply(1, "b"), ply(2, "a")]
    );

    for err in [
        store.finish_game(g, "0-1", "resign", None).unwrap_err(),
        store.mark_game_started(g, "h", 3).unwrap_err(),
        store
            .mark_game_errored(g, ErrorKind::Api, "late")
            .unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                StoreError::InvalidState {
                    status: GameStatus::Finished,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    let err = store.game(12345).unwrap_err();
    assert_eq!(err.to_string(), "game 12345 does not exist");
    let err = store.mark_game_started(12345, "h", 1).unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");

    store
        .record_event(t, None, "warn", "engine_restart", "engine `sf` restarted")
        .unwrap();
    let events = store.events(t).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(
        (events[1].game_id, events[1].kind.as_str()),
        (None, "engine_restart")
    );
    let err = store.record_event(999, None, "info", "x", "y").unwrap_err();
    assert!(
        matches!(err, StoreError::MissingReference { .. }),
        "{err:?}"
    );
}

#[test]
fn llm_call_survives_a_crash_before_its_outcome() {
    let (_dir, path) = temp_store();
    let (g, call_id, recorded) = {
        let store = Store::open(&path).unwrap();
        let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
        store.mark_game_started(ids[0], "h", 1).unwrap();
        let recorded = call(Some(ids[0]), 0, 0, "a");
        let id = store.record_llm_call(&recorded).unwrap();
        // The process dies here: no outcome, no ply, no finish.
        (ids[0], id, recorded)
    };
    let store = Store::open(&path).unwrap();
    let calls = store.llm_calls(g, 0).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, call_id);
    assert_eq!(calls[0].call, recorded);
    assert_eq!(
        (calls[0].outcome.clone(), calls[0].outcome_detail.clone()),
        (None, None)
    );
    assert_eq!(store.game(g).unwrap().status, GameStatus::Running);

    // The resumed run re-feeds the stored reply and records what it made of it.
    store
        .set_llm_call_outcome(call_id, "illegal", Some("e2e5"))
        .unwrap();
    let after = store.llm_calls(g, 0).unwrap();
    assert_eq!(after[0].outcome.as_deref(), Some("illegal"));
    assert_eq!(after[0].outcome_detail.as_deref(), Some("e2e5"));
    let err = store
        .set_llm_call_outcome(call_id + 100, "move", None)
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");

    // The move the mode read goes with the outcome; the lean read for exports returns both.
    store
        .set_llm_call_verdict(call_id, "illegal", Some("try again"), Some("e1g1"))
        .unwrap();
    let outcomes = store.call_outcomes(g).unwrap();
    assert_eq!(outcomes.len(), 1);
    let o = &outcomes[0];
    assert_eq!((o.ply, o.seq), (0, recorded.seq));
    assert_eq!(o.outcome.as_deref(), Some("illegal"));
    assert_eq!(o.outcome_detail.as_deref(), Some("try again"));
    assert_eq!(o.candidate.as_deref(), Some("e1g1"));
    assert_eq!(o.reply_text, recorded.reply_text);
    // Setting the outcome alone clears a stale candidate.
    store.set_llm_call_outcome(call_id, "move", None).unwrap();
    assert_eq!(store.call_outcomes(g).unwrap()[0].candidate, None);
}

#[test]
fn a_ply_and_its_call_s_verdict_are_written_together_or_not_at_all() {
    let store = Store::open_in_memory().unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    let g = ids[0];
    let call_id = store.record_llm_call(&call(Some(g), 0, 0, "a")).unwrap();
    let verdict = |call_id| CallVerdict {
        call_id,
        outcome: "move",
        detail: None,
        candidate: Some("e2e4"),
    };
    // No such call: neither is written.
    let err = store
        .record_ply_with_verdict(g, &ply(0, "a"), &verdict(call_id + 100))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    assert!(store.plies(g).unwrap().is_empty());
    // A ply already stored: the verdict is rolled back with it.
    store.record_ply(g, &ply(1, "b")).unwrap();
    let err = store
        .record_ply_with_verdict(g, &ply(1, "b"), &verdict(call_id))
        .unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    assert_eq!(store.llm_calls(g, 0).unwrap()[0].outcome, None);
    // Both.
    store
        .record_ply_with_verdict(g, &ply(0, "a"), &verdict(call_id))
        .unwrap();
    assert_eq!(store.plies(g).unwrap()[0], ply(0, "a"));
    let outcome = &store.call_outcomes(g).unwrap()[0];
    assert_eq!(outcome.outcome.as_deref(), Some("move"));
    assert_eq!(outcome.outcome_detail, None);
    assert_eq!(outcome.candidate.as_deref(), Some("e2e4"));
}

#[test]
fn calls_are_ordered_by_seq_and_may_have_no_game() {
    let store = Store::open_in_memory().unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    for seq in [2, 0, 1] {
        store
            .record_llm_call(&call(Some(ids[0]), 4, seq, "a"))
            .unwrap();
    }
    let seqs: Vec<u32> = store
        .llm_calls(ids[0], 4)
        .unwrap()
        .iter()
        .map(|c| c.call.seq)
        .collect();
    assert_eq!(seqs, [0, 1, 2]);
    // Calls outside games (evaluation tasks) do not collide with each other.
    store.record_llm_call(&call(None, 0, 0, "a")).unwrap();
    store.record_llm_call(&call(None, 0, 0, "a")).unwrap();
    let mut failed = call(Some(ids[0]), 5, 0, "a");
    failed.reply_text = None;
    failed.http_status = Some(503);
    failed.error = Some("service unavailable".into());
    store.record_llm_call(&failed).unwrap();
    assert_eq!(store.llm_calls(ids[0], 5).unwrap()[0].call, failed);
}

#[test]
fn unique_constraints_give_clear_errors() {
    let store = Store::open_in_memory().unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    let g = ids[0];
    store.record_ply(g, &ply(0, "a")).unwrap();
    let err = store.record_ply(g, &ply(0, "a")).unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("cannot record ply 0 of game {g}: it is already stored")
    );
    store.record_llm_call(&call(Some(g), 0, 0, "a")).unwrap();
    let err = store
        .record_llm_call(&call(Some(g), 0, 0, "a"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot record llm call 0 of ply 0 (game {g}): it is already stored")
    );
    let err = store.record_ply(g + 100, &ply(0, "a")).unwrap_err();
    assert!(
        matches!(err, StoreError::MissingReference { .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(&format!("game {}", g + 100)),
        "{err}"
    );
    let err = store
        .record_llm_call(&call(Some(g + 100), 0, 0, "a"))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::MissingReference { .. }),
        "{err:?}"
    );
}

#[test]
fn standings_count_results_forfeits_and_errors() {
    let store = Store::open_in_memory().unwrap();
    let (t, ids) = tournament(
        &store,
        "t",
        &[
            (0, "a", "b"), // 1-0: a wins with white
            (1, "b", "a"), // 1-0: b wins with white
            (2, "a", "c"), // 0-1: c wins with black, a forfeits
            (3, "c", "b"), // draw
            (4, "b", "c"), // running: not counted
            (5, "c", "a"), // errored: not counted
        ],
    );
    // A tournament of its own must not leak into this one.
    let (_, other) = tournament(&store, "other", &[(0, "a", "b")]);
    store.mark_game_started(other[0], "h", 1).unwrap();
    store
        .record_llm_call(&call(Some(other[0]), 0, 0, "a"))
        .unwrap();
    store
        .finish_game(other[0], "1-0", "checkmate", None)
        .unwrap();

    let outcome = |g: i64, ply: u32, seq: u32, player: &str, outcome: Option<&str>| {
        let id = store
            .record_llm_call(&call(Some(g), ply, seq, player))
            .unwrap();
        if let Some(o) = outcome {
            store.set_llm_call_outcome(id, o, None).unwrap();
        }
    };
    outcome(ids[0], 0, 0, "a", Some("unparseable"));
    outcome(ids[0], 0, 1, "a", Some("no_move_found"));
    outcome(ids[0], 0, 2, "a", Some("move"));
    outcome(ids[0], 1, 0, "b", Some("illegal"));
    outcome(ids[0], 1, 1, "b", Some("ambiguous"));
    outcome(ids[0], 1, 2, "b", Some("forbidden_reasoning"));
    outcome(ids[0], 1, 3, "b", None); // never used: counts as a call only
    outcome(ids[2], 0, 0, "a", Some("illegal"));
    outcome(ids[4], 0, 0, "b", Some("illegal")); // running game: ignored
    for (i, (result, termination)) in [
        ("1-0", "checkmate"),
        ("1-0", "checkmate"),
        ("0-1", "forfeit"),
        ("1/2-1/2", "stalemate"),
    ]
    .into_iter()
    .enumerate()
    {
        store.mark_game_started(ids[i], "h", 1).unwrap();
        store
            .finish_game(ids[i], result, termination, None)
            .unwrap();
    }
    store.mark_game_started(ids[4], "h", 1).unwrap();
    store
        .mark_game_errored(ids[5], ErrorKind::Engine, "engine died")
        .unwrap();

    let standings = store.standings(t).unwrap();
    let names: Vec<&str> = standings.iter().map(|s| s.player.as_str()).collect();
    // c: 1.5/2 = 75 %, b: 1.5/3 = 50 %, a: 1/3 = 33 %.
    assert_eq!(names, ["c", "b", "a"]);
    let row = |name: &str| standings.iter().find(|s| s.player == name).unwrap();
    let a = row("a");
    assert_eq!(
        (a.games, a.wins, a.draws, a.losses, a.forfeits),
        (3, 1, 0, 2, 1)
    );
    assert_eq!(a.score, 1.0);
    assert_eq!(
        (a.parse_errors, a.illegal_moves, a.forbidden_reasoning),
        (2, 1, 0)
    );
    assert_eq!(
        (a.llm_calls, a.prompt_tokens, a.completion_tokens),
        (4, 400, 40)
    );
    let b = row("b");
    assert_eq!(
        (b.games, b.wins, b.draws, b.losses, b.forfeits),
        (3, 1, 1, 1, 0)
    );
    assert_eq!(b.score, 1.5);
    assert_eq!(
        (b.parse_errors, b.illegal_moves, b.forbidden_reasoning),
        (0, 2, 1)
    );
    assert_eq!(b.llm_calls, 4);
    let c = row("c");
    assert_eq!(
        (c.games, c.wins, c.draws, c.losses, c.forfeits),
        (2, 1, 1, 0, 0)
    );
    assert_eq!(c.score_percent(), 75.0);
    assert_eq!((c.llm_calls, c.parse_errors), (0, 0));

    let totals = store.totals(t).unwrap();
    assert_eq!(
        totals,
        Totals {
            games_scheduled: 6,
            games_finished: 4,
            games_errored: 1,
            plies: 0,
            llm_calls: 9,
            prompt_tokens: 900,
            completion_tokens: 90,
        }
    );
}

#[test]
fn standings_list_players_without_games() {
    let store = Store::open_in_memory().unwrap();
    let (t, _) = tournament(&store, "t", &[]);
    let standings = store.standings(t).unwrap();
    assert_eq!(standings.len(), 3);
    assert!(
        standings
            .iter()
            .all(|s| s.games == 0 && s.score_percent() == 0.0)
    );
    assert_eq!(store.totals(t).unwrap(), Totals::default());
}

#[test]
fn two_threads_write_through_one_store() {
    let (_dir, path) = temp_store();
    let store = Arc::new(Store::open(&path).unwrap());
    let (t, ids) = tournament(&store, "t", &[(0, "a", "b"), (1, "b", "c")]);
    let handles: Vec<_> = ids
        .iter()
        .map(|&g| {
            let store = Arc::clone(&store);
            thread::spawn(move || {
                for n in 0..50 {
                    store.record_llm_call(&call(Some(g), n, 0, "a")).unwrap();
                    store.record_ply(g, &ply(n, "a")).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("writer thread");
    }
    let totals = store.totals(t).unwrap();
    assert_eq!((totals.plies, totals.llm_calls), (100, 100));
    assert!(ids.iter().all(|&g| store.plies(g).unwrap().len() == 50));
}

#[test]
fn two_connections_share_one_file() {
    let (_dir, path) = temp_store();
    let first = Store::open(&path).unwrap();
    let (t, ids) = tournament(&first, "t", &[(0, "a", "b"), (1, "b", "c")]);
    let second = Store::open(&path).unwrap();
    assert_eq!(second.games(t).unwrap().len(), 2);
    thread::scope(|s| {
        for (store, &g) in [&first, &second].into_iter().zip(&ids) {
            s.spawn(move || {
                for n in 0..50 {
                    store.record_llm_call(&call(Some(g), n, 0, "a")).unwrap();
                    store.record_ply(g, &ply(n, "a")).unwrap();
                    // Reads interleave with the other connection's writes.
                    store.totals(t).unwrap();
                }
            });
        }
    });
    for store in [&first, &second] {
        let totals = store.totals(t).unwrap();
        assert_eq!((totals.plies, totals.llm_calls), (100, 100));
    }
    // Opening an existing store while another connection holds it migrates nothing and succeeds.
    drop(Store::open(&path).unwrap());
}

/// Env var naming the store file [`crash_child`] writes to before it aborts.
const CRASH_CHILD_ENV: &str = "ARENA_STORE_CRASH_CHILD";

/// Run by [`llm_call_survives_a_killed_process`] in a child process: records a game start, a ply and
/// an LLM call, then dies without unwinding, closing or checkpointing (as under `kill -9`).
#[test]
#[ignore = "run as a child process by llm_call_survives_a_killed_process"]
fn crash_child() {
    let path = std::env::var_os(CRASH_CHILD_ENV).expect("child run without its store path");
    let store = Store::open(Path::new(&path)).unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    store.mark_game_started(ids[0], "h", 1).unwrap();
    store.record_ply(ids[0], &ply(0, "a")).unwrap();
    store
        .record_llm_call(&call(Some(ids[0]), 1, 0, "b"))
        .unwrap();
    std::process::abort();
}

#[test]
fn llm_call_survives_a_killed_process() {
    let (_dir, path) = temp_store();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "tests::crash_child", "--ignored", "--nocapture"])
        .env(CRASH_CHILD_ENV, &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run the crashing child");
    assert!(!status.success(), "the child must die by abort");
    assert!(
        path.with_extension("db-wal").exists(),
        "the writes must still sit in the uncheckpointed WAL"
    );
    let store = Store::open(&path).unwrap();
    let t = store
        .find_tournament("t")
        .unwrap()
        .expect("tournament survived");
    let game = &store.games(t.id).unwrap()[0];
    assert_eq!((game.status, game.ply_count), (GameStatus::Running, 1));
    let calls = store.llm_calls(game.id, 1).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].call, call(Some(game.id), 1, 0, "b"));
    assert_eq!(calls[0].outcome, None);
}

#[test]
fn a_version_4_store_migrates_keeping_its_rows_and_its_foreign_keys() {
    let (_dir, path) = temp_store();
    {
        // A store as arena wrote it at schema version 4, with a finished game, a ply and a call.
        let conn = Connection::open(&path).unwrap();
        for (i, step) in migrations::MIGRATIONS[..4].iter().enumerate() {
            conn.execute_batch(step.sqlite).unwrap();
            conn.execute_batch(&format!(
                "PRAGMA application_id = {}; PRAGMA user_version = {};",
                schema::APPLICATION_ID,
                i + 1
            ))
            .unwrap();
        }
        conn.execute_batch(
            "INSERT INTO tournaments (id, name, script_path, settings_json) VALUES (1, 't', 't.lua', '{}');
             INSERT INTO players (tournament_id, name, kind, settings_json) VALUES (1, 'a', 'llm', '{}'), (1, 'b', 'random', '{}');
             INSERT INTO games (id, tournament_id, idx, round, white, black, status, result, termination, error_kind)
                 VALUES (7, 1, 0, 1, 'a', 'b', 'finished', '0-1', 'forfeit', NULL),
                        (8, 1, 1, 1, 'b', 'a', 'errored', NULL, NULL, 'api');
             INSERT INTO plies (game_id, ply, fen_before, uci, san, player, attempts, elapsed_ms)
                 VALUES (7, 0, 'f', 'e2e4', 'e4', 'a', 1, 3);
             INSERT INTO llm_calls (game_id, ply, seq, player, model, endpoint, request_json, reply_text,
                 prompt_tokens, completion_tokens, latency_ms, transport_retries, outcome)
                 VALUES (7, 0, 0, 'a', 'm', 'u', '{}', 'e2e4', 11, 3, 5, 0, 'move');",
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(header(&path).1, schema::CURRENT_VERSION);
    let games = store.games(1).unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(
        (games[0].id, games[0].result.as_deref(), games[0].ply_count),
        (7, Some("0-1"), 1)
    );
    assert_eq!(games[1].error_kind, Some(ErrorKind::Api));
    let calls = store.llm_calls(7, 0).unwrap();
    assert_eq!(
        (calls[0].call.prompt_tokens, calls[0].outcome.as_deref()),
        (Some(11), Some("move"))
    );
    // A call stored before provider-reported usage existed knows none of it: NULL, never 0.
    assert_eq!(calls[0].call.details, UsageDetails::default());
    // The rebuilt `games` is still the parent of plies and calls: foreign keys hold and bite.
    assert!(matches!(
        store.record_ply(99, &ply(0, "a")),
        Err(StoreError::MissingReference { .. })
    ));
    let conn = Connection::open(&path).unwrap();
    let dangling: Option<String> = conn
        .query_row("PRAGMA foreign_key_check", [], |r| r.get(0))
        .ok();
    assert_eq!(dangling, None);
    // The new schema is exactly the one a new store gets.
    let (_dir2, fresh) = temp_store();
    drop(Store::open(&fresh).unwrap());
    assert_eq!(
        schema_sql(&conn),
        schema_sql(&Connection::open(&fresh).unwrap())
    );
}

#[test]
fn void_games_and_calls_without_usage_in_the_standings() {
    let store = Store::open_in_memory().unwrap();
    let (t, ids) = tournament(&store, "t", &[(0, "a", "b"), (1, "b", "a")]);
    store.mark_game_started(ids[0], "h", 1).unwrap();
    let mut unknown = call(Some(ids[0]), 0, 0, "a");
    unknown.prompt_tokens = None;
    unknown.completion_tokens = None;
    store.record_llm_call(&unknown).unwrap();
    store
        .record_llm_call(&call(Some(ids[0]), 2, 0, "a"))
        .unwrap();
    store
        .finish_game(ids[0], VOID_RESULT, "context_exceeded", Some("too long"))
        .unwrap();
    store.mark_game_started(ids[1], "h", 1).unwrap();
    store.finish_game(ids[1], "1-0", "checkmate", None).unwrap();
    let game = store.game(ids[0]).unwrap();
    assert!(game.is_void());
    assert!(!store.game(ids[1]).unwrap().is_void());
    assert_eq!(
        store.llm_calls(ids[0], 0).unwrap()[0].call.prompt_tokens,
        None
    );
    let standings = store.standings(t).unwrap();
    let row = |name: &str| standings.iter().find(|s| s.player == name).unwrap();
    let a = row("a");
    assert_eq!((a.games, a.voids, a.wins, a.losses), (1, 1, 0, 1));
    assert_eq!(a.score_percent(), 0.0);
    assert_eq!(
        (a.llm_calls, a.prompt_tokens, a.calls_without_usage),
        (2, 100, 1)
    );
    let b = row("b");
    assert_eq!(
        (b.games, b.voids, b.wins, b.calls_without_usage),
        (1, 1, 1, 0)
    );
    assert_eq!(
        store.call_summaries(t).unwrap()[0].completion_tokens,
        None,
        "unknown, not zero"
    );
    assert!(matches!(
        store.finish_game(ids[0], "+", "x", None),
        Err(StoreError::InvalidResult { .. }) | Err(StoreError::InvalidState { .. })
    ));
}

#[test]
fn failed_attempts_are_kept_apart_from_the_calls() {
    let store = Store::open_in_memory().unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    let failed = FailedCallRecord {
        game_id: Some(ids[0]),
        ply: Some(0),
        seq: 0,
        attempt: 1,
        player: "a".into(),
        model: "m".into(),
        endpoint: "u".into(),
        request_json: "{}".into(),
        http_status: 200,
        headers_json: r#"{"content-type":"text/html"}"#.into(),
        raw_body: "<html>".into(),
        error: "not JSON".into(),
        latency_ms: 4,
        ..FailedCallRecord::default()
    };
    store.record_failed_call(&failed).unwrap();
    store
        .record_failed_call(&FailedCallRecord {
            attempt: 2,
            ..failed.clone()
        })
        .unwrap();
    // The call that finally succeeded keeps the replay key (game, ply, seq) to itself.
    store
        .record_llm_call(&call(Some(ids[0]), 0, 0, "a"))
        .unwrap();
    let rows = store.failed_calls(ids[0]).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].call, failed);
    assert_eq!(rows[1].call.attempt, 2);
    assert_eq!(store.llm_calls(ids[0], 0).unwrap().len(), 1);
    // A row must belong to a game ply or to an evaluation item.
    assert!(
        store
            .record_failed_call(&FailedCallRecord {
                game_id: None,
                ply: None,
                ..failed
            })
            .is_err()
    );
}

#[test]
fn a_read_only_store_reads_while_another_connection_writes() {
    let (_dir, path) = temp_store();
    let writer = Store::open(&path).unwrap();
    let (_t, games) = tournament(&writer, "t", &[(0, "a", "b")]);
    writer.mark_game_started(games[0], "h", 1).unwrap();
    writer.record_ply(games[0], &ply(0, "a")).unwrap();
    writer
        .record_llm_call(&call(Some(games[0]), 0, 0, "a"))
        .unwrap();

    let reader = Store::open_read_only(&path).unwrap();
    assert_eq!(reader.plies(games[0]).unwrap().len(), 1);
    assert_eq!(reader.game_calls(games[0]).unwrap().len(), 1);
    // The writer goes on while the reader is open, and the reader sees the new ply.
    writer.record_ply(games[0], &ply(1, "b")).unwrap();
    assert_eq!(reader.plies(games[0]).unwrap().len(), 2);
    // The reader cannot write.
    assert!(reader.record_event(1, None, "info", "x", "y").is_err());
    writer
        .finish_game(games[0], "1-0", "checkmate", None)
        .unwrap();
}

#[test]
fn a_read_only_open_refuses_what_is_not_a_current_store() {
    let (_dir, path) = temp_store();
    fs::write(&path, b"").unwrap();
    assert!(matches!(
        Store::open_read_only(&path),
        Err(StoreError::NotAStore { .. })
    ));
    assert_eq!(fs::read(&path).unwrap().len(), 0, "nothing was written");
    assert!(Store::open_read_only(&path.with_extension("missing")).is_err());
}

#[test]
fn usage_details_and_provider_costs_are_stored_and_counted_by_spend() {
    let store = Store::open_in_memory().unwrap();
    let (t, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    let priced = UsageDetails {
        cached_tokens: Some(60),
        cache_write_tokens: Some(0),
        reasoning_tokens: Some(4),
        provider_cost_usd: Some(0.25),
        cost_details_json: Some(r#"{"upstream_inference_cost":null}"#.into()),
    };
    let mut by_provider = call(Some(ids[0]), 0, 0, "a");
    by_provider.details = priced.clone();
    store.record_llm_call(&by_provider).unwrap();
    let mut by_table = call(Some(ids[0]), 2, 0, "a");
    by_table.details.cached_tokens = Some(40);
    store.record_llm_call(&by_table).unwrap();
    assert_eq!(store.llm_calls(ids[0], 0).unwrap()[0].call, by_provider);
    assert_eq!(
        store.call_summaries(t).unwrap().len(),
        0,
        "the game is not finished"
    );
    // A failed attempt whose body reported what it used was billed; one without usage was not.
    let billed = FailedCallRecord {
        game_id: Some(ids[0]),
        ply: Some(2),
        seq: 1,
        attempt: 1,
        player: "a".into(),
        model: "smol".into(),
        endpoint: "u".into(),
        request_json: "{}".into(),
        http_status: 200,
        headers_json: "{}".into(),
        raw_body: "{}".into(),
        error: "no choices".into(),
        latency_ms: 4,
        prompt_tokens: Some(30),
        completion_tokens: Some(0),
        details: UsageDetails {
            provider_cost_usd: Some(0.5),
            ..UsageDetails::default()
        },
        ..FailedCallRecord::default()
    };
    store.record_failed_call(&billed).unwrap();
    store
        .record_failed_call(&FailedCallRecord {
            attempt: 2,
            prompt_tokens: None,
            completion_tokens: None,
            details: UsageDetails::default(),
            ..billed.clone()
        })
        .unwrap();
    assert_eq!(store.failed_calls(ids[0]).unwrap()[0].call, billed);

    let spend = store.spend(t).unwrap();
    assert_eq!(spend.len(), 1);
    let a = &spend[0];
    assert_eq!((a.calls, a.provider_calls), (3, 2));
    assert!((a.provider_usd - 0.75).abs() < 1e-12, "{}", a.provider_usd);
    assert_eq!((a.prompt_tokens, a.completion_tokens), (230, 20));
    // Only the call without a provider price is left for the table, with its cached tokens.
    assert_eq!(
        (
            a.table_usage.prompt_tokens,
            a.table_usage.completion_tokens,
            a.table_usage.cached_tokens
        ),
        (100, 10, Some(40))
    );
    // The columns read plainly in the sqlite3 shell's terms: NULL where nothing was reported.
    let nulls: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM llm_calls WHERE provider_cost_usd IS NULL AND reasoning_tokens IS NULL",
            super::db::params![],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nulls, 1);
}

#[test]
fn a_spend_tally_reads_only_new_calls_and_counts_late_commits_once() {
    let store = Store::open_in_memory().unwrap();
    let (t, ids) = tournament(&store, "t", &[(0, "a", "b"), (1, "b", "a")]);
    let (_, other) = tournament(&store, "u", &[(0, "a", "b")]);
    let mut tally = SpendTally::new(t);
    let fresh = |store: &Store| store.spend(t).unwrap();
    let counted = |tally: &SpendTally| tally.rows().cloned().collect::<Vec<_>>();
    store.refresh_spend(&mut tally).unwrap();
    assert!(counted(&tally).is_empty());

    let mut unknown = call(Some(ids[1]), 0, 0, "b");
    unknown.prompt_tokens = None;
    for c in [
        call(Some(ids[0]), 0, 0, "a"),
        call(Some(other[0]), 0, 0, "a"),
        unknown,
        call(Some(ids[0]), 1, 0, "b"),
    ] {
        store.record_llm_call(&c).unwrap();
    }
    store.refresh_spend(&mut tally).unwrap();
    assert_eq!(counted(&tally), fresh(&store));
    assert_eq!(counted(&tally).iter().map(|s| s.calls).sum::<u64>(), 3);

    // A row that is not visible yet when the tally reads past its id (another worker's
    // transaction commits late): simulated by moving a row's id out of the way and back.
    let late = store
        .record_llm_call(&call(Some(ids[0]), 2, 0, "a"))
        .unwrap();
    let after = store
        .record_llm_call(&call(Some(ids[0]), 3, 0, "a"))
        .unwrap();
    assert!(after > late);
    store
        .conn()
        .execute(
            "UPDATE llm_calls SET id = ?2 WHERE id = ?1",
            super::db::params![late, -late],
        )
        .unwrap();
    store.refresh_spend(&mut tally).unwrap();
    assert_eq!(counted(&tally), fresh(&store));
    store
        .conn()
        .execute(
            "UPDATE llm_calls SET id = ?2 WHERE id = ?1",
            super::db::params![-late, late],
        )
        .unwrap();
    // A billed failed attempt, too.
    store
        .record_failed_call(&FailedCallRecord {
            game_id: Some(ids[1]),
            ply: Some(1),
            seq: 0,
            attempt: 1,
            player: "a".into(),
            model: "smol".into(),
            endpoint: "u".into(),
            request_json: "{}".into(),
            http_status: 200,
            headers_json: "{}".into(),
            raw_body: "{}".into(),
            error: "no choices".into(),
            latency_ms: 4,
            prompt_tokens: Some(30),
            completion_tokens: None,
            ..FailedCallRecord::default()
        })
        .unwrap();
    store.refresh_spend(&mut tally).unwrap();
    assert_eq!(counted(&tally), fresh(&store));
    // Refreshing with nothing new changes nothing: no row is counted twice.
    store.refresh_spend(&mut tally).unwrap();
    assert_eq!(counted(&tally), fresh(&store));
    let total: u64 = counted(&tally).iter().map(|s| s.calls).sum();
    assert_eq!(total, 6, "{:?}", counted(&tally));
}

#[test]
fn exports_stream_every_row_of_a_tournament_and_stop_at_the_callers_error() {
    let store = Store::open_in_memory().unwrap();
    let (t, games) = tournament(&store, "t", &[(0, "a", "b"), (1, "b", "a")]);
    let (other, _) = tournament(&store, "other", &[(0, "a", "b")]);
    for &game in &games {
        store.mark_game_started(game, "h", 1).unwrap();
        for n in 0..3 {
            let id = store.record_llm_call(&call(Some(game), n, 0, "a")).unwrap();
            store.set_llm_call_verdict(id, "move", None, None).unwrap();
            store.record_ply(game, &ply(n, "a")).unwrap();
        }
        store.finish_game(game, "1-0", "checkmate", None).unwrap();
    }
    let count = |tournament| {
        let (mut calls, mut plies, mut rows) = (0, 0, 0);
        store
            .for_each_call(tournament, |_| {
                calls += 1;
                Ok::<_, ()>(())
            })
            .unwrap();
        store
            .for_each_ply(tournament, |_| {
                plies += 1;
                Ok::<_, ()>(())
            })
            .unwrap();
        store
            .for_each_game(tournament, |_| {
                rows += 1;
                Ok::<_, ()>(())
            })
            .unwrap();
        (calls, plies, rows)
    };
    assert_eq!(count(Some(t)), (6, 6, 2));
    assert_eq!(count(Some(other)), (0, 0, 1));
    assert_eq!(count(None), (6, 6, 3));
    // The caller's error stops the stream at once and comes back as it was.
    let mut seen = 0;
    let err = store
        .for_each_ply(Some(t), |_| {
            seen += 1;
            if seen == 2 { Err("full disk") } else { Ok(()) }
        })
        .unwrap_err();
    assert!(matches!(err, StreamError::Callback("full disk")), "{err:?}");
    assert_eq!(seen, 2);
}

#[test]
fn a_server_location_names_its_database_and_a_file_does_not() {
    let url = Path::new("postgres://me:secret@db.lab:5433/study?sslmode=require");
    assert!(is_server_location(url));
    assert_eq!(server_database(url).as_deref(), Some("study"));
    assert_eq!(
        display_location(url),
        "postgres://me:***@db.lab:5433/study?sslmode=require"
    );
    let file = Path::new("runs/study.db");
    assert!(!is_server_location(file));
    assert_eq!(server_database(file), None);
}

/// SQLite's lookaside misses for want of slot size on the store's connection since the last call
/// (and resets the count).
fn lookaside_size_misses(store: &Store) -> i32 {
    let Backend::Sqlite(sqlite) = &store.backend else {
        unreachable!("a file store is SQLite")
    };
    let conn = sqlite.conn.lock().unwrap();
    let (mut current, mut highest) = (0, 0);
    // SAFETY: the handle is the locked connection's; the two out-pointers live on this stack.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_db_status(
            conn.handle(),
            rusqlite::ffi::SQLITE_DBSTATUS_LOOKASIDE_MISS_SIZE,
            &raw mut current,
            &raw mut highest,
            1,
        )
    };
    assert_eq!(rc, rusqlite::ffi::SQLITE_OK);
    highest
}

#[test]
fn storing_a_call_and_its_verdict_stays_in_sqlite_lookaside_memory() {
    // A request of a few kilobytes is the common case: with SQLite's default 1,200-byte slots,
    // binding it and rewriting its row for the verdict went to malloc.
    let (_dir, path) = temp_store();
    let store = Store::open(&path).unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    let mut long = call(Some(ids[0]), 0, 0, "a");
    long.request_json = format!(r#"{{"messages":["{}"]}}"#, "x".repeat(4000));
    long.raw_body = Some("y".repeat(3000));
    lookaside_size_misses(&store);
    let id = store.record_llm_call(&long).unwrap();
    store
        .record_ply_with_verdict(
            ids[0],
            &ply(0, "a"),
            &CallVerdict {
                call_id: id,
                outcome: "move",
                detail: None,
                candidate: Some("e2e4"),
            },
        )
        .unwrap();
    assert_eq!(lookaside_size_misses(&store), 0);
    assert_eq!(store.llm_calls(ids[0], 0).unwrap()[0].call, long);
}

#[test]
fn a_recorded_call_returns_the_id_of_its_own_row() {
    let store = Store::open_in_memory().unwrap();
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b")]);
    // Other inserts in between (a ply, an event, a refused duplicate) must not leak their ids.
    let first = store
        .record_llm_call(&call(Some(ids[0]), 0, 0, "a"))
        .unwrap();
    store.record_ply(ids[0], &ply(0, "a")).unwrap();
    store
        .record_llm_call(&call(Some(ids[0]), 0, 0, "a"))
        .unwrap_err();
    let second = store
        .record_llm_call(&call(Some(ids[0]), 1, 0, "b"))
        .unwrap();
    assert_ne!(first, second);
    assert_eq!(store.llm_calls(ids[0], 0).unwrap()[0].id, first);
    assert_eq!(store.llm_calls(ids[0], 1).unwrap()[0].id, second);
}

#[test]
fn calls_are_indexed_by_game_only() {
    // Every index is one more b-tree page written per stored call; `player` had one that no
    // query used (version 13 drops it).
    let (_dir, path) = temp_store();
    drop(Store::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let indexes: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'llm_calls'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(indexes, ["sqlite_autoindex_llm_calls_1"]);
}

/// A multi-threaded runtime like `arena run`'s, with two workers (the machines it is measured on).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The SQLite connection, held by a test so that the writes it spawns next find the store busy,
/// and the group-commit counters from before.
struct Held<'s> {
    sqlite: &'s super::group::Sqlite,
    _connection: std::sync::MutexGuard<'s, Connection>,
    before: (u64, u64),
}

/// Holds the SQLite connection; `None` on PostgreSQL. Taken before the writes are spawned:
/// taken after, it raced them, and on a loaded machine they could all commit first, alone.
fn hold(store: &Store) -> Option<Held<'_>> {
    let Backend::Sqlite(sqlite) = &store.backend else {
        return None;
    };
    let before = sqlite.grouped();
    Some(Held {
        sqlite,
        _connection: sqlite.conn.lock().unwrap(),
        before,
    })
}

/// Lets the connection go once `queued` writes wait in the group-commit queue (one more is the
/// lone write blocked on the connection); the counters from before the hold.
fn release_when_queued(held: Option<Held<'_>>, queued: usize) -> Option<(u64, u64)> {
    let held = held?;
    // Writes that never queue (each waiting on the connection instead) fail the test; the
    // bound only keeps such a failure from hanging the run.
    let mut waited = 0;
    while held.sqlite.queued() < queued {
        assert!(
            waited < 60_000,
            "only {} writes queued",
            held.sqlite.queued()
        );
        thread::sleep(std::time::Duration::from_millis(1));
        waited += 1;
    }
    Some(held.before)
}

#[test]
fn concurrent_games_writes_share_commits_and_each_gets_its_own_id() {
    const GAMES: usize = 24;
    let store = Arc::new(Store::open_in_memory().unwrap());
    let pairings: Vec<(u32, &str, &str)> = (0..GAMES as u32).map(|i| (i, "a", "b")).collect();
    let (t, ids) = tournament(&store, "t", &pairings);
    let rt = runtime();
    let held = hold(&store);
    let tasks: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(i, &g)| {
            let store = Arc::clone(&store);
            let ply_n = i as u32;
            rt.spawn(async move {
                let id = store
                    .record_llm_call_grouped(call(Some(g), ply_n, 0, "a"))
                    .await
                    .unwrap();
                // Read-your-writes: the caller resumes once its row is committed.
                let stored = store.llm_calls(g, ply_n).unwrap();
                assert_eq!(
                    stored.len(),
                    1,
                    "game {g}'s call is stored before it returns"
                );
                (g, ply_n, id)
            })
        })
        .collect();
    let before = release_when_queued(held, GAMES - 1);
    let written: Vec<_> = tasks.into_iter().map(|t| rt.block_on(t).unwrap()).collect();
    for (g, ply_n, id) in written {
        assert_eq!(
            store.llm_calls(g, ply_n).unwrap()[0].id,
            id,
            "the id came back to the caller whose row it is"
        );
    }
    assert_eq!(store.totals(t).unwrap().llm_calls, GAMES as u64);
    if let (Some((writes, transactions)), Backend::Sqlite(sqlite)) = (before, &store.backend) {
        let (writes_after, transactions_after) = sqlite.grouped();
        assert_eq!(writes_after - writes, GAMES as u64);
        // The lone write that found the store idle, then everything queued behind it.
        assert_eq!(
            transactions_after - transactions,
            2,
            "writes shared commits"
        );
    }
}

#[test]
fn a_refused_write_in_a_shared_commit_fails_only_its_own_caller() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let (_, ids) = tournament(&store, "t", &[(0, "a", "b"), (1, "a", "b"), (2, "a", "b")]);
    let (g0, g1, g2) = (ids[0], ids[1], ids[2]);
    let stored = store.record_llm_call(&call(Some(g0), 0, 0, "a")).unwrap();
    let verdict = |call_id| CallVerdict {
        call_id,
        outcome: "move",
        detail: None,
        candidate: Some("e2e4"),
    };
    let rt = runtime();
    // Alone on an idle store: refused, and the connection is left out of any transaction.
    let err = rt
        .block_on(store.record_llm_call_grouped(call(Some(g0), 0, 0, "a")))
        .unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    rt.block_on(store.record_llm_call_grouped(call(Some(g2), 9, 0, "b")))
        .unwrap();
    let held = hold(&store);
    let store_ = Arc::clone(&store);
    let duplicate = rt.spawn(async move {
        store_
            .record_llm_call_grouped(call(Some(g0), 0, 0, "a"))
            .await
    });
    let store_ = Arc::clone(&store);
    let no_such_call = rt.spawn(async move {
        store_
            .record_ply_with_verdict_grouped(g1, ply(0, "a"), &verdict(stored + 1000))
            .await
    });
    let store_ = Arc::clone(&store);
    let fine_ply = rt.spawn(async move {
        store_
            .record_ply_with_verdict_grouped(g0, ply(0, "a"), &verdict(stored))
            .await
    });
    let good_calls: Vec<_> = (0..4)
        .map(|n| {
            let store = Arc::clone(&store);
            rt.spawn(async move {
                store
                    .record_llm_call_grouped(call(Some(g2), n, 0, "b"))
                    .await
            })
        })
        .collect();
    release_when_queued(held, 6);
    let err = rt.block_on(duplicate).unwrap().unwrap_err();
    assert!(matches!(err, StoreError::Duplicate { .. }), "{err:?}");
    let err = rt.block_on(no_such_call).unwrap().unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
    rt.block_on(fine_ply).unwrap().unwrap();
    for call in good_calls {
        rt.block_on(call).unwrap().unwrap();
    }
    // The refused writes left nothing; the others all committed.
    assert!(store.plies(g1).unwrap().is_empty());
    assert_eq!(store.llm_calls(g0, 0).unwrap().len(), 1);
    assert_eq!(store.plies(g0).unwrap(), [ply(0, "a")]);
    assert_eq!(
        store.call_outcomes(g0).unwrap()[0].outcome.as_deref(),
        Some("move")
    );
    assert_eq!(
        (0..4)
            .map(|n| store.llm_calls(g2, n).unwrap().len())
            .sum::<usize>(),
        4
    );
    // And the store goes on committing.
    store.record_ply(g2, &ply(0, "a")).unwrap();
}

#[test]
fn grouped_writes_reach_the_file_for_other_connections() {
    let (_dir, path) = temp_store();
    let store = Arc::new(Store::open(&path).unwrap());
    let (t, ids) = tournament(&store, "t", &[(0, "a", "b"), (1, "b", "c")]);
    let rt = runtime();
    let tasks: Vec<_> = ids
        .iter()
        .map(|&g| {
            let store = Arc::clone(&store);
            rt.spawn(async move {
                for n in 0..50 {
                    let id = store
                        .record_llm_call_grouped(call(Some(g), n, 0, "a"))
                        .await
                        .unwrap();
                    let verdict = CallVerdict {
                        call_id: id,
                        outcome: "move",
                        detail: None,
                        candidate: None,
                    };
                    store
                        .record_ply_with_verdict_grouped(g, ply(n, "a"), &verdict)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        rt.block_on(task).unwrap();
    }
    // Another connection (another process, `arena report`) sees every committed write.
    let reader = Store::open_read_only(&path).unwrap();
    let totals = reader.totals(t).unwrap();
    assert_eq!((totals.plies, totals.llm_calls), (100, 100));
}

/// A PostgreSQL store creates no function or aggregate but `arena_now()` in its own schema, and
/// a store of version 13 (which had a `sum(boolean)` aggregate there) migrates to one without it,
/// its leases getting their first token.
#[test]
fn a_postgres_store_defines_no_aggregate_and_older_stores_lose_theirs() {
    let test = "a_postgres_store_defines_no_aggregate_and_older_stores_lose_theirs";
    let Some(server) = crate::test_parts::postgres(test) else {
        return;
    };
    let schema = format!("no_aggregate_{}", std::process::id());
    crate::test_parts::admin(
        &server,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
    )
    .unwrap();
    let separator = if server.contains('?') { '&' } else { '?' };
    let url = format!("{server}{separator}options=-csearch_path%3D{schema}");
    let functions = |store: &Store| -> Vec<String> {
        let conn = store.conn();
        let mut stmt = conn
            .prepare(
                "SELECT proname FROM pg_proc
                 WHERE pronamespace = current_schema()::regnamespace ORDER BY proname",
            )
            .unwrap();
        stmt.query_map(db::params![], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let store = Store::open(Path::new(&url)).unwrap();
    assert_eq!(functions(&store), ["arena_now"]);
    drop(store);

    // Version 13 as arena made it: the aggregate, no tokens, no batches, a lease held.
    crate::test_parts::admin(
        &url,
        "CREATE FUNCTION arena_sum_bool(total bigint, value boolean) RETURNS bigint
         LANGUAGE sql IMMUTABLE AS
         $$ SELECT CASE WHEN value IS NULL THEN total ELSE COALESCE(total, 0) + value::int END $$;
         CREATE AGGREGATE sum(boolean) (SFUNC = arena_sum_bool, STYPE = bigint);
         ALTER TABLE leases DROP COLUMN token;
         DROP TABLE eval_batch_items;
         DROP TABLE eval_batches;
         ALTER TABLE eval_replies DROP COLUMN batch_id;
         DROP TABLE images;
         INSERT INTO leases (kind, item, owner, expires_ms) VALUES ('play', 1, 'w', 0);
         UPDATE arena_store SET version = 13;",
    )
    .unwrap();
    let store = Store::open(Path::new(&url)).unwrap();
    assert_eq!(functions(&store), ["arena_now"]);
    let token: i64 = store
        .conn()
        .query_row(
            "SELECT token FROM leases WHERE item = 1",
            db::params![],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(token, 1);
    // The queries that counted booleans with the aggregate count them without it.
    let t = store.open_tournament("t", "t.lua", "{}").unwrap();
    for name in ["a", "b"] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
            .unwrap();
    }
    store
        .schedule_games(t.id, &[ScheduledGame::new(0, 0, "a", "b")])
        .unwrap();
    let game = store.games(t.id).unwrap()[0].id;
    store.finish_game(game, "1-0", "checkmate", None).unwrap();
    let standings = store.standings(t.id).unwrap();
    let a = standings.iter().find(|s| s.player == "a").unwrap();
    assert_eq!((a.games, a.wins, a.draws, a.losses), (1, 1, 0, 0));
}

/// PostgreSQL stores made before every step had its PostgreSQL side were created at version 11 in
/// one step (`fixtures/postgres_at_11.sql`, kept as they were made) and migrated from there; a
/// new store runs every step from the first. Both must end with the same schema: the same
/// tables and columns (in order, with types, nullability, defaults and identity), the same
/// constraints under the same names, the same indexes and the same function, at the same version.
#[test]
fn postgres_steps_make_the_schema_stores_made_at_version_11_have() {
    let test = "postgres_steps_make_the_schema_stores_made_at_version_11_have";
    let Some(server) = crate::test_parts::postgres(test) else {
        return;
    };
    let pid = std::process::id();
    let (stepped, at_11) = (format!("by_steps_{pid}"), format!("from_11_{pid}"));
    let separator = if server.contains('?') { '&' } else { '?' };
    let url_of = |schema: &str| format!("{server}{separator}options=-csearch_path%3D{schema}");
    for schema in [&stepped, &at_11] {
        crate::test_parts::admin(
            &server,
            &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
        )
        .unwrap();
    }
    drop(Store::open(Path::new(&url_of(&stepped))).unwrap());
    let mut old_route = include_str!("fixtures/postgres_at_11.sql").to_owned();
    for (from, step) in migrations::MIGRATIONS.iter().enumerate().skip(11) {
        old_route.push_str(step.postgres);
        old_route.push_str(&format!(
            ";\nUPDATE arena_store SET version = {};\n",
            from + 1
        ));
    }
    crate::test_parts::admin(&url_of(&at_11), &old_route).unwrap();

    let catalog = |schema: &str| -> Vec<String> {
        let url = url_of(schema);
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
                let queries = [
                    "SELECT 'column', table_name || '.' || ordinal_position || ' ' || column_name
                         || ' ' || data_type || ' null:' || is_nullable || ' default:'
                         || COALESCE(column_default, '-') || ' identity:' || is_identity
                     FROM information_schema.columns WHERE table_schema = current_schema()",
                    "SELECT 'constraint', cl.relname || ' ' || con.conname || ' '
                         || pg_get_constraintdef(con.oid)
                     FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid
                     WHERE cl.relnamespace = current_schema()::regnamespace",
                    "SELECT 'index', indexname || ' '
                         || replace(indexdef, current_schema() || '.', '')
                     FROM pg_indexes WHERE schemaname = current_schema()",
                    "SELECT 'function', pg_get_functiondef(oid) FROM pg_proc
                     WHERE pronamespace = current_schema()::regnamespace",
                    "SELECT 'version', version::text FROM arena_store",
                ];
                let mut rows: Vec<String> = queries
                    .iter()
                    .flat_map(|q| client.query(*q, &[]).unwrap())
                    .map(|r| format!("{} {}", r.get::<_, &str>(0), r.get::<_, &str>(1)))
                    .map(|row| row.replace(&format!("{schema}."), ""))
                    .collect();
                rows.sort();
                rows
            })
            .join()
            .unwrap()
        })
    };
    let (by_steps, from_11) = (catalog(&stepped), catalog(&at_11));
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|r| !b.contains(r)).cloned().collect()
    };
    assert!(
        by_steps == from_11,
        "made step by step, not at 11:\n{}\n\nmade at 11, not step by step:\n{}",
        only(&by_steps, &from_11).join("\n"),
        only(&from_11, &by_steps).join("\n")
    );
    assert!(by_steps.len() > 200, "{} catalog rows", by_steps.len());
    assert!(by_steps.contains(&format!("version {}", schema::CURRENT_VERSION)));
}
