//! The SQL schema, one constant per version, and the migration runner.
//!
//! A store is recognised by two header fields SQLite keeps for applications: `application_id` (always
//! [`APPLICATION_ID`]) and `user_version` (the number of migrations applied). Migrations only ever
//! append: version N+1 is reached by running `MIGRATIONS[N]` on a version-N store, inside one
//! transaction together with the `user_version` bump, so a crash leaves the file at N or N+1.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

/// The `application_id` header field of every arena store: "ARNA" in ASCII.
pub(crate) const APPLICATION_ID: i32 = 0x4152_4E41;

/// Version 1: scripts, tournaments, players, games, plies, LLM calls and events.
///
/// Conventions: timestamps are RFC 3339 UTC text with milliseconds; `games.idx` is the index the
/// tournament format gave the game (stable across runs, so a resumed tournament finds its games);
/// `games.opening_moves` is a JSON array of move strings; `llm_calls` rows are written before their
/// reply is parsed and get their `outcome` afterwards, so a row without an outcome is a reply that a
/// killed run never used. A game's players must exist in `players` (foreign keys), so standings can
/// list every player of a tournament from that table.
pub(crate) const SCHEMA_V1: &str = r"
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

CREATE TABLE games (
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
    result        TEXT CHECK (result IN ('1-0', '0-1', '1/2-1/2')),
    termination   TEXT,
    reason        TEXT,
    script_hash   TEXT,
    generation    INTEGER,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    started_at    TEXT,
    finished_at   TEXT,
    error         TEXT,
    UNIQUE (tournament_id, idx),
    FOREIGN KEY (tournament_id, white) REFERENCES players (tournament_id, name),
    FOREIGN KEY (tournament_id, black) REFERENCES players (tournament_id, name),
    CHECK ((status = 'finished') = (result IS NOT NULL))
);
CREATE INDEX games_by_status ON games (tournament_id, status);

CREATE TABLE plies (
    game_id    INTEGER NOT NULL REFERENCES games (id),
    ply        INTEGER NOT NULL CHECK (ply >= 0),
    fen_before TEXT    NOT NULL,
    uci        TEXT    NOT NULL,
    san        TEXT    NOT NULL,
    player     TEXT    NOT NULL,
    attempts   INTEGER NOT NULL,
    elapsed_ms INTEGER NOT NULL,
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;

CREATE TABLE llm_calls (
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
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_ms        INTEGER NOT NULL,
    transport_retries INTEGER NOT NULL,
    error             TEXT,
    outcome           TEXT,
    outcome_detail    TEXT,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (game_id, ply, seq)
);
CREATE INDEX llm_calls_by_player ON llm_calls (player);

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
";

/// Version 2: engine analysis.
///
/// `analysis_cache` holds one engine answer (a JSON `PositionAnalysis`, or a JSON list for an
/// all-moves search) per position, engine and limits, so a position shared by many games (the start
/// position) is searched once. `ply_analysis` holds the per-ply verdict; evaluations are stored as
/// centipawns or mate distance (exactly one of each pair set), `eval_before` from the mover's view and
/// `eval_after` from the opponent's (each the side to move in its position), and the Win% columns from
/// the mover's view under `win_model`. A `game_analysis` row is written once every ply of a game is
/// analysed: it marks the game done and keeps Lichess's per-colour game accuracy.
pub(crate) const SCHEMA_V2: &str = r"
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
";

/// Version 3: fine-grained evaluations.
///
/// An `eval_runs` row is one evaluation script's run (or a re-scoring of another run, which then
/// names its `source_run_id` and owns no replies of its own). `eval_items` fixes each task's data
/// set at the first run (a built set is never rebuilt behind a resumed run); `task` is the task's
/// label in the script, `idx` the item's place in the set. `eval_replies` holds every answer a
/// player gave, written before it is parsed (`prompt_json` is NULL for engines and random movers,
/// which answer without a prompt); `seq` counts the calls of one item (puzzles take several).
/// `eval_results` is written once an item is scored: the parsed answer and the score as JSON.
pub(crate) const SCHEMA_V3: &str = r"
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

CREATE TABLE eval_replies (
    run_id            INTEGER NOT NULL REFERENCES eval_runs (id),
    task              TEXT    NOT NULL,
    player            TEXT    NOT NULL,
    idx               INTEGER NOT NULL,
    seq               INTEGER NOT NULL CHECK (seq >= 0),
    prompt_json       TEXT,
    reply_text        TEXT    NOT NULL,
    reasoning         TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms        INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, task, player, idx, seq),
    FOREIGN KEY (run_id, task, idx) REFERENCES eval_items (run_id, task, idx)
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
";

/// Version 4: the kind of a set-aside game's error (`api`, `engine`, `script`, `store`), so that
/// reports and ratings can tell an outage from a broken script without parsing messages.
pub(crate) const SCHEMA_V4: &str = r"
ALTER TABLE games ADD COLUMN error_kind TEXT
    CHECK (error_kind IN ('api', 'engine', 'script', 'store'));
";

/// Version 5: the text a refused reply offered as its move (`e1g1` of an illegal castling), as the
/// play mode read it, so that exports can say what was refused without parsing feedback prose.
pub(crate) const SCHEMA_V5: &str = r"
ALTER TABLE llm_calls ADD COLUMN candidate TEXT;
";

/// Version 6: void games, unknown token counts, and failed attempts.
///
/// - A game may finish *void*: `status = 'finished'` with `result = '*'` (PGN's "no result"), a
///   game that ended but counts for nobody (its termination says why, e.g. `context_exceeded`).
///   SQLite cannot change a CHECK constraint in place, so `games` is rebuilt with the same columns.
/// - A reply that reports no token usage stores NULL tokens instead of 0: `llm_calls` and
///   `eval_replies` are rebuilt with nullable token columns (rows stored before keep their numbers).
/// - `failed_calls` keeps every attempt that got an HTTP answer but no usable reply (an error
///   status, or a success whose body does not decode), with the status, the headers that matter
///   (JSON object) and the body, written before the attempt is retried. It is a table of its own so
///   that `llm_calls` keeps one row per (game, ply, seq), the key replay reads. A row belongs to a
///   game ply (`game_id`, `ply`, `seq`) or to an evaluation item (`eval_run_id`, `task`, `idx`,
///   `seq`); `attempt` counts the HTTP attempts of that one call from 1.
///
/// The rebuilds follow SQLite's procedure for schema changes (new table, copy, drop, rename), with
/// foreign keys off for the duration and checked before commit (see [`migrate`]).
pub(crate) const SCHEMA_V6: &str = r"
CREATE TABLE games_v6 (
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
    error_kind    TEXT CHECK (error_kind IN ('api', 'engine', 'script', 'store')),
    UNIQUE (tournament_id, idx),
    FOREIGN KEY (tournament_id, white) REFERENCES players (tournament_id, name),
    FOREIGN KEY (tournament_id, black) REFERENCES players (tournament_id, name),
    CHECK ((status = 'finished') = (result IS NOT NULL))
);
INSERT INTO games_v6 (id, tournament_id, idx, round, white, black, start_fen, opening_moves,
    opening_label, status, result, termination, reason, script_hash, generation, created_at,
    started_at, finished_at, error, error_kind)
SELECT id, tournament_id, idx, round, white, black, start_fen, opening_moves, opening_label,
    status, result, termination, reason, script_hash, generation, created_at, started_at,
    finished_at, error, error_kind
FROM games;
DROP TABLE games;
ALTER TABLE games_v6 RENAME TO games;
CREATE INDEX games_by_status ON games (tournament_id, status);

CREATE TABLE llm_calls_v6 (
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
    candidate         TEXT,
    UNIQUE (game_id, ply, seq)
);
INSERT INTO llm_calls_v6 (id, game_id, ply, seq, player, model, endpoint, request_json,
    reply_text, reasoning, raw_body, finish_reason, http_status, prompt_tokens,
    completion_tokens, latency_ms, transport_retries, error, outcome, outcome_detail, created_at,
    candidate)
SELECT id, game_id, ply, seq, player, model, endpoint, request_json, reply_text, reasoning,
    raw_body, finish_reason, http_status, prompt_tokens, completion_tokens, latency_ms,
    transport_retries, error, outcome, outcome_detail, created_at, candidate
FROM llm_calls;
DROP TABLE llm_calls;
ALTER TABLE llm_calls_v6 RENAME TO llm_calls;
CREATE INDEX llm_calls_by_player ON llm_calls (player);

CREATE TABLE eval_replies_v6 (
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
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (run_id, task, player, idx, seq),
    FOREIGN KEY (run_id, task, idx) REFERENCES eval_items (run_id, task, idx)
) WITHOUT ROWID;
INSERT INTO eval_replies_v6 (run_id, task, player, idx, seq, prompt_json, reply_text, reasoning,
    prompt_tokens, completion_tokens, latency_ms, created_at)
SELECT run_id, task, player, idx, seq, prompt_json, reply_text, reasoning, prompt_tokens,
    completion_tokens, latency_ms, created_at
FROM eval_replies;
DROP TABLE eval_replies;
ALTER TABLE eval_replies_v6 RENAME TO eval_replies;

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
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CHECK ((game_id IS NULL) = (ply IS NULL)),
    CHECK ((eval_run_id IS NULL) = (task IS NULL) AND (task IS NULL) = (idx IS NULL)),
    CHECK ((game_id IS NULL) <> (eval_run_id IS NULL))
);
CREATE INDEX failed_calls_by_game ON failed_calls (game_id, ply, seq);
";

/// Version 7: chess clocks.
///
/// `plies.clock_ms` is the time a move was charged on its player's clock (what the model's
/// successful calls or the engine's search took; time spent in retries after API faults is not
/// charged), NULL for an untimed player and for book moves; a resumed game replays these
/// charges to restore both clocks exactly. `games.time_control` is the clock each side plays on,
/// as JSON `{"white": {...}, "black": {...}}` (a side without a clock is `null`), written when
/// the game first starts, so that a resumed game and its PGN keep the clocks it started with;
/// NULL for an untimed game. Self-contained, so that it can be renumbered when merged.
pub(crate) const SCHEMA_V7: &str = r"
ALTER TABLE plies ADD COLUMN clock_ms INTEGER CHECK (clock_ms >= 0);
ALTER TABLE games ADD COLUMN time_control TEXT;
";

/// Version 8: replays of games a harness fault made void, and the replies they reuse.
///
/// - `games.replay_of` names the void game (an engine crashed or hung) that this game plays
///   again, and `games.slot` the schedule number both fill (the first attempt's `idx`); both are
///   NULL for a game that is its slot's first attempt. Ratings and formats take a game's place in
///   the schedule from its slot, so a replayed game counts where the void one was scheduled.
/// - `llm_calls.reused_from` names the call of an earlier attempt of the same slot whose reply
///   this row reuses: the replay asked the very same request at the same ply, so the stored reply
///   is used instead of paying for it again. Such rows carry the original's tokens (they are the
///   game's own) but tournament totals and the spend skip them (the call was paid once).
pub(crate) const SCHEMA_V8: &str = r"
ALTER TABLE games ADD COLUMN replay_of INTEGER REFERENCES games (id);
ALTER TABLE games ADD COLUMN slot INTEGER CHECK (slot >= 0);
CREATE INDEX games_by_replay ON games (replay_of);
ALTER TABLE llm_calls ADD COLUMN reused_from INTEGER REFERENCES llm_calls (id);
";

/// Version 9: what a provider reports of a call beyond its prompt and completion tokens.
///
/// Every table of calls (`llm_calls`, `eval_replies`, `failed_calls`) gets the details of the
/// usage (`cached_tokens`: prompt tokens read from the provider's cache; `cache_write_tokens`:
/// written to it; `reasoning_tokens`: the part of the completion spent reasoning) and the
/// provider's own price (`provider_cost_usd`, e.g. OpenRouter's `usage.cost`, with its breakdown
/// as sent in `cost_details_json`). A call with a `provider_cost_usd` was priced by the
/// provider; one without is priced by the price table when it is read. `failed_calls` also gets
/// `prompt_tokens` and `completion_tokens`, for an attempt whose unusable body still reported
/// what it used. Columns only: rows stored before keep NULL in each (unknown, never 0).
pub(crate) const SCHEMA_V9: &str = r"
ALTER TABLE llm_calls ADD COLUMN cached_tokens INTEGER CHECK (cached_tokens >= 0);
ALTER TABLE llm_calls ADD COLUMN cache_write_tokens INTEGER CHECK (cache_write_tokens >= 0);
ALTER TABLE llm_calls ADD COLUMN reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0);
ALTER TABLE llm_calls ADD COLUMN provider_cost_usd REAL CHECK (provider_cost_usd >= 0);
ALTER TABLE llm_calls ADD COLUMN cost_details_json TEXT;

ALTER TABLE eval_replies ADD COLUMN cached_tokens INTEGER CHECK (cached_tokens >= 0);
ALTER TABLE eval_replies ADD COLUMN cache_write_tokens INTEGER CHECK (cache_write_tokens >= 0);
ALTER TABLE eval_replies ADD COLUMN reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0);
ALTER TABLE eval_replies ADD COLUMN provider_cost_usd REAL CHECK (provider_cost_usd >= 0);
ALTER TABLE eval_replies ADD COLUMN cost_details_json TEXT;

ALTER TABLE failed_calls ADD COLUMN prompt_tokens INTEGER CHECK (prompt_tokens >= 0);
ALTER TABLE failed_calls ADD COLUMN completion_tokens INTEGER CHECK (completion_tokens >= 0);
ALTER TABLE failed_calls ADD COLUMN cached_tokens INTEGER CHECK (cached_tokens >= 0);
ALTER TABLE failed_calls ADD COLUMN cache_write_tokens INTEGER CHECK (cache_write_tokens >= 0);
ALTER TABLE failed_calls ADD COLUMN reasoning_tokens INTEGER CHECK (reasoning_tokens >= 0);
ALTER TABLE failed_calls ADD COLUMN provider_cost_usd REAL CHECK (provider_cost_usd >= 0);
ALTER TABLE failed_calls ADD COLUMN cost_details_json TEXT;
";

/// Version 10: the rules a game is played under (`standard` or `chess960`), which its start FEN
/// alone does not tell (Chess960's start 518 is the standard position, but castles as Chess960).
pub(crate) const SCHEMA_V10: &str = r"
ALTER TABLE games ADD COLUMN variant TEXT NOT NULL DEFAULT 'standard'
    CHECK (variant IN ('standard', 'chess960'));
";

/// Version 11: adjudication by an engine (see `tournament::adjudicate`).
///
/// - `adjudication_evals` holds the adjudication engine's evaluation of the position after each
///   ply it saw (`score` as JSON, `{"cp": 35}` or `{"mate": -3}`, the view of the side to move in
///   that position, as UCI reports it; NULL when the engine gave none, which the rules count as
///   cutechess counts a move without an evaluation). A resumed game replays them through the
///   rules instead of searching again.
/// - `limit_verdicts` holds the verdict on a game that reached the move limit: the result the
///   engine's evaluation of the final position gives by the tournament's threshold. It is kept
///   apart from `games.result`, which it never changes; `score` is White's view.
pub(crate) const SCHEMA_V11: &str = r"
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
";

/// Version 12: leases, so that several processes (on several machines, with a shared server)
/// play one tournament and analyse it without doing anything twice.
///
/// A lease says that `owner` (a worker: machine, process and a random token) works on `item` (a
/// game id) of `kind` (`play` or `analysis`) until `expires_ms` (milliseconds since the Unix epoch
/// by the database's clock, so that machines whose clocks differ agree). A worker renews its leases
/// while it works and deletes each when done; one killed with -9 stops renewing, and another worker
/// may take the item once the lease has expired.
pub(crate) const SCHEMA_V12: &str = r"
CREATE TABLE leases (
    kind       TEXT    NOT NULL CHECK (kind IN ('play', 'analysis')),
    item       INTEGER NOT NULL,
    owner      TEXT    NOT NULL,
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (kind, item)
) WITHOUT ROWID;
";

/// Version 13: `llm_calls` loses its index on `player`, which no query uses (every read of the
/// calls goes by game, or scans them all), so that storing a call writes two b-tree pages
/// instead of three: one WAL frame (two `pwrite`s) fewer per LLM ply.
pub(crate) const SCHEMA_V13: &str = r"
DROP INDEX llm_calls_by_player;
";

/// Version 14: fencing tokens on leases. `token` grows every time an item changes hands (a
/// takeover, or a claim after a release: releasing a lease now keeps its row, with an empty
/// `owner` and expired, so the count goes on), and every write of a game's plies, calls and
/// result checks, in its own transaction, that the lease row still holds the writer's owner and
/// token: a worker that stalled past its lease while another took the game over is refused. A
/// lease of an older store starts at 1.
pub(crate) const SCHEMA_V14: &str = r"
ALTER TABLE leases ADD COLUMN token INTEGER NOT NULL DEFAULT 1 CHECK (token >= 1);
";

/// Version 15: evaluation items sent through a provider's batch API (`arena eval --batch`).
///
/// `eval_batches` holds each batch arena submitted: the run, the endpoint and wire format it
/// went to, the provider's batch id, and `ended` once its results were read and stored. It is
/// written as soon as the provider has accepted the batch and before any polling, so a run
/// killed while waiting polls the same batch again instead of submitting its items twice.
/// `eval_batch_items` holds the requests in it, one per item call (`custom_id` names it in the
/// batch; `prompt_json` holds its messages, stored with the answer), and what became of each:
/// NULL while the batch runs, then `answered`, `errored`, `expired` or `canceled`, with the
/// provider's error when there is one. An answer itself is
/// stored in `eval_replies` like any call; its `batch_id` column marks it as a batch answer
/// (billed at the provider's batch price) and is NULL for calls made one by one.
pub(crate) const SCHEMA_V15: &str = r"
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

ALTER TABLE eval_replies ADD COLUMN batch_id TEXT;
";

/// Version 16: pictures sent to models (board images), each distinct one stored once.
///
/// A stored request names its pictures by media type and SHA-256 (see `llm::Image`); `images`
/// holds their bytes under that hash, base64-encoded (text on both backends, so copies and
/// checksums between SQLite and PostgreSQL treat it like every other column). A row is written
/// before the first request that shows it and never changes.
pub(crate) const SCHEMA_V16: &str = r"
CREATE TABLE images (
    sha256      TEXT NOT NULL PRIMARY KEY,
    media_type  TEXT NOT NULL,
    data_base64 TEXT NOT NULL
) WITHOUT ROWID;
";

/// The whole schema at [`CURRENT_VERSION`], exactly as SQLite holds it once every migration has
/// run on an empty store. A new store is made from it in one batch: replaying the history instead
/// (tables rebuilt, renamed and altered, each time making SQLite re-read its whole catalogue on
/// both connections) cost 61 M instructions, 4 % of a 2,000-ply run's.
///
/// The test `a_new_store_has_the_schema_every_migration_makes` checks that the two agree
/// statement for statement; after adding a migration, `ARENA_BLESS=1 cargo test --lib
/// new_store_has_the_schema` rewrites the file, to be reviewed as a diff like a golden file.
pub(crate) const NEW_STORE_SCHEMA: &str = include_str!("new_store.sql");

/// Every migration in order; `MIGRATIONS[n]` takes a store from version `n` to `n + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_V6, SCHEMA_V7, SCHEMA_V8,
    SCHEMA_V9, SCHEMA_V10, SCHEMA_V11, SCHEMA_V12, SCHEMA_V13, SCHEMA_V14, SCHEMA_V15, SCHEMA_V16,
];

/// The schema version this build writes (and the newest it can read).
pub(crate) const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// What the header and catalogue of an existing file say about it, read without writing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An empty database (a new or zero-length file): ours to initialise.
    Empty,
    /// An arena store at this schema version.
    Arena(i64),
    /// A database some other program made.
    Foreign,
}

/// Classifies the database behind `conn` by reading only.
pub(crate) fn classify(conn: &Connection) -> rusqlite::Result<Kind> {
    let app_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app_id == APPLICATION_ID {
        return Ok(Kind::Arena(version));
    }
    let any_object: Option<i64> = conn
        .query_row("SELECT 1 FROM sqlite_schema LIMIT 1", [], |r| r.get(0))
        .optional()?;
    if app_id == 0 && version == 0 && any_object.is_none() {
        Ok(Kind::Empty)
    } else {
        Ok(Kind::Foreign)
    }
}

/// Brings an empty or older arena store up to [`CURRENT_VERSION`], returning the version it found.
///
/// Runs under an immediate transaction and re-reads the version inside it, so two processes opening
/// the same new file at once migrate it exactly once. A caller must have classified the file first;
/// this function re-checks only that it has not become foreign or newer meanwhile.
pub(crate) fn migrate(conn: &mut Connection) -> Result<i64, MigrateError> {
    migrate_making_new_stores(conn, NewStore::FromSnapshot)
}

/// How [`migrate`] makes the schema of an empty store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewStore {
    /// In one batch, from [`NEW_STORE_SCHEMA`].
    FromSnapshot,
    /// By running every migration in turn, as an old store is brought up: how the snapshot's
    /// test makes the schema it compares the snapshot with.
    #[cfg(test)]
    ByEveryMigration,
}

/// [`migrate`], making an empty store's schema as `new_store` says.
pub(crate) fn migrate_making_new_stores(
    conn: &mut Connection,
    new_store: NewStore,
) -> Result<i64, MigrateError> {
    // Rebuilding a table that others reference (version 6 rebuilds `games`) needs foreign keys
    // off, and the pragma is a no-op inside a transaction: switch it off around the transaction
    // and check the keys before committing instead (SQLite's documented procedure).
    let foreign_keys: bool = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .map_err(|e| MigrateError::Sql(0, e))?;
    if foreign_keys {
        conn.pragma_update(None, "foreign_keys", "OFF")
            .map_err(|e| MigrateError::Sql(0, e))?;
    }
    let migrated = migrate_in_transaction(conn, new_store);
    if foreign_keys {
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| MigrateError::Sql(0, e))?;
    }
    migrated
}

fn migrate_in_transaction(conn: &mut Connection, new_store: NewStore) -> Result<i64, MigrateError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| MigrateError::Sql(0, e))?;
    let found = match classify(&tx).map_err(|e| MigrateError::Sql(0, e))? {
        Kind::Empty => 0,
        Kind::Arena(v) if v <= CURRENT_VERSION => v,
        Kind::Arena(v) => return Err(MigrateError::Newer(v)),
        Kind::Foreign => return Err(MigrateError::Foreign),
    };
    if found == 0 && new_store == NewStore::FromSnapshot {
        tx.execute_batch(NEW_STORE_SCHEMA)
            .map_err(|e| MigrateError::Sql(CURRENT_VERSION, e))?;
        set_version(&tx, CURRENT_VERSION)?;
    } else {
        for (from, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            let to = from as i64 + 1;
            tx.execute_batch(sql)
                .map_err(|e| MigrateError::Sql(to, e))?;
            set_version(&tx, to)?;
        }
    }
    let violation: Option<String> = tx
        .query_row("PRAGMA foreign_key_check", [], |r| {
            Ok(format!(
                "a row of `{}` refers to a missing `{}`",
                r.get::<_, String>(0)?,
                r.get::<_, String>(2)?
            ))
        })
        .optional()
        .map_err(|e| MigrateError::Sql(CURRENT_VERSION, e))?;
    if let Some(violation) = violation {
        return Err(MigrateError::Sql(
            CURRENT_VERSION,
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
                Some(violation),
            ),
        ));
    }
    tx.commit()
        .map_err(|e| MigrateError::Sql(CURRENT_VERSION, e))?;
    Ok(found)
}

/// Records in the header that the store is at `version` (and is an arena store).
fn set_version(conn: &Connection, version: i64) -> Result<(), MigrateError> {
    // PRAGMA values cannot be bound as parameters; both are integers we control.
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {version};"
    ))
    .map_err(|e| MigrateError::Sql(version, e))
}

/// The schema of the store behind `conn` as the statements that make it, one per line group, in
/// the order SQLite's catalogue holds them (the order they were made in), each ending in `;`.
/// SQLite's own tables (`sqlite_sequence` and the like) are left out: it makes them itself.
#[cfg(test)]
pub(crate) fn schema_statements(conn: &Connection) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         ORDER BY rowid",
    )?;
    let mut out = String::new();
    for sql in stmt.query_map([], |r| r.get::<_, String>(0))? {
        out.push_str(&sql?);
        out.push_str(";\n");
    }
    Ok(out)
}

/// Why [`migrate`] failed; `mod.rs` turns it into a `StoreError` that names the path.
#[derive(Debug)]
pub(crate) enum MigrateError {
    /// SQL failed while moving to this version (0: before any migration ran).
    Sql(i64, rusqlite::Error),
    /// Another process wrote a newer schema after we classified the file.
    Newer(i64),
    /// Another program created tables after we classified the file.
    Foreign,
}
