-- The schema of a new arena store, version 16: what running the SQLite side of every
-- step of crates/store/src/migrations.rs makes of an empty store, made here in one batch.
-- Written by `ARENA_BLESS=1 cargo test -p arena-store --lib new_store_has_the_schema`: never edit it by
-- hand; add a migration and bless the file again.
CREATE TABLE scripts (
    hash     TEXT    NOT NULL,
    position INTEGER NOT NULL,
    path     TEXT    NOT NULL,
    content  TEXT    NOT NULL,
    PRIMARY KEY (hash, position),
    UNIQUE (hash, path)
) WITHOUT ROWID;
CREATE TABLE tournaments (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    script_path   TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE players (
    id            INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (tournament_id, name)
);
CREATE TABLE plies (
    game_id    INTEGER NOT NULL REFERENCES games (id),
    ply        INTEGER NOT NULL CHECK (ply >= 0),
    fen_before TEXT    NOT NULL,
    uci        TEXT    NOT NULL,
    san        TEXT    NOT NULL,
    player     TEXT    NOT NULL,
    attempts   INTEGER NOT NULL,
    elapsed_ms INTEGER NOT NULL,
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), clock_ms INTEGER CHECK (clock_ms >= 0),
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;
CREATE TABLE events (
    id            INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
    game_id       INTEGER REFERENCES games (id),
    level         TEXT NOT NULL,
    kind          TEXT NOT NULL,
    message       TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX events_by_tournament ON events (tournament_id, id);
CREATE TABLE analysis_cache (
    fen         TEXT NOT NULL,
    engine_id   TEXT NOT NULL,
    limits_key  TEXT NOT NULL,
    result_json TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (fen, engine_id, limits_key)
) WITHOUT ROWID;
CREATE TABLE ply_analysis (
    game_id          INTEGER NOT NULL,
    ply              INTEGER NOT NULL,
    engine_id        TEXT    NOT NULL,
    limits_key       TEXT    NOT NULL,
    win_model        TEXT    NOT NULL,
    eval_before_cp   INTEGER,
    eval_before_mate INTEGER,
    eval_after_cp    INTEGER,
    eval_after_mate  INTEGER,
    best             TEXT,
    pv               TEXT    NOT NULL,
    top_json         TEXT    NOT NULL,
    played_rank      INTEGER CHECK (played_rank >= 1),
    in_top           INTEGER NOT NULL CHECK (in_top IN (0, 1)),
    played_cp        INTEGER,
    played_mate      INTEGER,
    all_moves_json   TEXT,
    win_before       REAL    NOT NULL,
    win_after        REAL    NOT NULL,
    cp_loss          INTEGER NOT NULL CHECK (cp_loss BETWEEN 0 AND 1000),
    accuracy         REAL    NOT NULL,
    phase            TEXT    NOT NULL CHECK (phase IN ('opening', 'middlegame', 'endgame')),
    classification   TEXT    NOT NULL,
    created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (game_id, ply),
    FOREIGN KEY (game_id, ply) REFERENCES plies (game_id, ply),
    CHECK ((eval_before_cp IS NULL) <> (eval_before_mate IS NULL)),
    CHECK ((eval_after_cp IS NULL) <> (eval_after_mate IS NULL))
) WITHOUT ROWID;
CREATE TABLE game_analysis (
    game_id        INTEGER PRIMARY KEY REFERENCES games (id),
    engine_id      TEXT NOT NULL,
    limits_key     TEXT NOT NULL,
    win_model      TEXT NOT NULL,
    white_accuracy REAL,
    black_accuracy REAL,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE eval_runs (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    script_path   TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    source_run_id INTEGER REFERENCES eval_runs (id),
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE eval_items (
    run_id    INTEGER NOT NULL REFERENCES eval_runs (id),
    task      TEXT    NOT NULL,
    idx       INTEGER NOT NULL CHECK (idx >= 0),
    item_key  TEXT    NOT NULL,
    item_json TEXT    NOT NULL,
    PRIMARY KEY (run_id, task, idx),
    UNIQUE (run_id, task, item_key)
) WITHOUT ROWID;
CREATE TABLE eval_results (
    run_id      INTEGER NOT NULL REFERENCES eval_runs (id),
    task        TEXT    NOT NULL,
    player      TEXT    NOT NULL,
    idx         INTEGER NOT NULL,
    calls       INTEGER NOT NULL CHECK (calls >= 0),
    parsed_json TEXT    NOT NULL,
    score_json  TEXT    NOT NULL,
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, task, player, idx)
) WITHOUT ROWID;
CREATE TABLE "games" (
    id            INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
    idx           INTEGER NOT NULL CHECK (idx >= 0),
    round         INTEGER NOT NULL CHECK (round >= 0),
    white         TEXT NOT NULL,
    black         TEXT NOT NULL,
    start_fen     TEXT,
    opening_moves TEXT NOT NULL DEFAULT '[]',
    opening_label TEXT,
    status        TEXT NOT NULL DEFAULT 'scheduled'
                  CHECK (status IN ('scheduled', 'running', 'finished', 'errored')),
    result        TEXT CHECK (result IN ('1-0', '0-1', '1/2-1/2', '*')),
    termination   TEXT,
    reason        TEXT,
    script_hash   TEXT,
    generation    INTEGER,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    started_at    TEXT,
    finished_at   TEXT,
    error         TEXT,
    error_kind    TEXT CHECK (error_kind IN ('api', 'engine', 'script', 'store')), time_control TEXT, replay_of INTEGER REFERENCES games (id), slot INTEGER CHECK (slot >= 0), variant TEXT NOT NULL DEFAULT 'standard'
    CHECK (variant IN ('standard', 'chess960')),
    UNIQUE (tournament_id, idx),
    FOREIGN KEY (tournament_id, white) REFERENCES players (tournament_id, name),
    FOREIGN KEY (tournament_id, black) REFERENCES players (tournament_id, name),
    CHECK ((status = 'finished') = (result IS NOT NULL))
);
CREATE INDEX games_by_status ON games (tournament_id, status);
CREATE TABLE "llm_calls" (
    id                INTEGER PRIMARY KEY,
    game_id           INTEGER REFERENCES games (id),
    ply               INTEGER NOT NULL CHECK (ply >= 0),
    seq               INTEGER NOT NULL CHECK (seq >= 0),
    player            TEXT    NOT NULL,
    model             TEXT    NOT NULL,
    endpoint          TEXT    NOT NULL,
    request_json      TEXT    NOT NULL,
    reply_text        TEXT,
    reasoning         TEXT,
    raw_body          TEXT,
    finish_reason     TEXT,
    http_status       INTEGER,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    latency_ms        INTEGER NOT NULL,
    transport_retries INTEGER NOT NULL,
    error             TEXT,
    outcome           TEXT,
    outcome_detail    TEXT,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    candidate         TEXT, reused_from INTEGER REFERENCES llm_calls (id), cached_tokens INTEGER CHECK (cached_tokens >= 0), cache_write_tokens INTEGER CHECK (cache_write_tokens >= 0), reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0), provider_cost_usd REAL CHECK (provider_cost_usd >= 0), cost_details_json TEXT,
    UNIQUE (game_id, ply, seq)
);
CREATE TABLE "eval_replies" (
    run_id            INTEGER NOT NULL REFERENCES eval_runs (id),
    task              TEXT    NOT NULL,
    player            TEXT    NOT NULL,
    idx               INTEGER NOT NULL,
    seq               INTEGER NOT NULL CHECK (seq >= 0),
    prompt_json       TEXT,
    reply_text        TEXT    NOT NULL,
    reasoning         TEXT,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    latency_ms        INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), cached_tokens INTEGER CHECK (cached_tokens >= 0), cache_write_tokens INTEGER CHECK (cache_write_tokens >= 0), reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0), provider_cost_usd REAL CHECK (provider_cost_usd >= 0), cost_details_json TEXT, batch_id TEXT,
    PRIMARY KEY (run_id, task, player, idx, seq),
    FOREIGN KEY (run_id, task, idx) REFERENCES eval_items (run_id, task, idx)
) WITHOUT ROWID;
CREATE TABLE failed_calls (
    id           INTEGER PRIMARY KEY,
    game_id      INTEGER REFERENCES games (id),
    ply          INTEGER CHECK (ply >= 0),
    eval_run_id  INTEGER REFERENCES eval_runs (id),
    task         TEXT,
    idx          INTEGER CHECK (idx >= 0),
    seq          INTEGER NOT NULL CHECK (seq >= 0),
    attempt      INTEGER NOT NULL CHECK (attempt >= 1),
    player       TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    endpoint     TEXT    NOT NULL,
    request_json TEXT    NOT NULL,
    http_status  INTEGER NOT NULL,
    headers_json TEXT    NOT NULL,
    raw_body     TEXT    NOT NULL,
    error        TEXT    NOT NULL,
    latency_ms   INTEGER NOT NULL,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), prompt_tokens INTEGER CHECK (prompt_tokens >= 0), completion_tokens INTEGER CHECK (completion_tokens >= 0), cached_tokens INTEGER CHECK (cached_tokens >= 0), cache_write_tokens INTEGER CHECK (cache_write_tokens >= 0), reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0), provider_cost_usd REAL CHECK (provider_cost_usd >= 0), cost_details_json TEXT,
    CHECK ((game_id IS NULL) = (ply IS NULL)),
    CHECK ((eval_run_id IS NULL) = (task IS NULL) AND (task IS NULL) = (idx IS NULL)),
    CHECK ((game_id IS NULL) <> (eval_run_id IS NULL))
);
CREATE INDEX failed_calls_by_game ON failed_calls (game_id, ply, seq);
CREATE INDEX games_by_replay ON games (replay_of);
CREATE TABLE adjudication_evals (
    game_id INTEGER NOT NULL REFERENCES games (id),
    ply     INTEGER NOT NULL CHECK (ply >= 0),
    score   TEXT,
    depth   INTEGER,
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;
CREATE TABLE limit_verdicts (
    game_id      INTEGER PRIMARY KEY REFERENCES games (id),
    result       TEXT    NOT NULL CHECK (result IN ('1-0', '0-1', '1/2-1/2')),
    score        TEXT    NOT NULL,
    threshold_cp INTEGER NOT NULL,
    engine       TEXT    NOT NULL,
    limits       TEXT    NOT NULL,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE leases (
    kind       TEXT    NOT NULL CHECK (kind IN ('play', 'analysis')),
    item       INTEGER NOT NULL,
    owner      TEXT    NOT NULL,
    expires_ms INTEGER NOT NULL, token INTEGER NOT NULL DEFAULT 1 CHECK (token >= 1),
    PRIMARY KEY (kind, item)
) WITHOUT ROWID;
CREATE TABLE eval_batches (
    id         INTEGER PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES eval_runs (id),
    provider   TEXT    NOT NULL,
    endpoint   TEXT    NOT NULL,
    batch_id   TEXT    NOT NULL,
    ended      INTEGER NOT NULL DEFAULT 0 CHECK (ended IN (0, 1)),
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (endpoint, batch_id)
);
CREATE TABLE eval_batch_items (
    batch     INTEGER NOT NULL REFERENCES eval_batches (id),
    custom_id TEXT    NOT NULL,
    task      TEXT    NOT NULL,
    player    TEXT    NOT NULL,
    idx       INTEGER NOT NULL CHECK (idx >= 0),
    seq       INTEGER NOT NULL CHECK (seq >= 0),
    prompt_json TEXT NOT NULL,
    outcome   TEXT CHECK (outcome IN ('answered', 'errored', 'expired', 'canceled')),
    error     TEXT,
    PRIMARY KEY (batch, custom_id)
) WITHOUT ROWID;
CREATE TABLE images (
    sha256      TEXT NOT NULL PRIMARY KEY,
    media_type  TEXT NOT NULL,
    data_base64 TEXT NOT NULL
) WITHOUT ROWID;
