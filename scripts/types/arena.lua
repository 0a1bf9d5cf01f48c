---@meta
-- The typed reference of arena's Lua API, for editors with the Lua language server (LuaLS): add
-- `scripts/types` to `workspace.library`. Nothing here runs; the functions are implemented in Rust
-- (crates/lua/src/api/).

---@class arena
arena = {}

---@class arena.Tournament
---@field name string                          told apart by name inside one database
---@field format? string                       "round_robin" (default), "matchmaker", "ladder", "swiss", "knockout", or a module of your folder
---@field games_per_pair? integer              round robin: games each pair plays (default 2), in cycles on the FIDE Berger tables, colours reversed every second cycle, the last two rounds of each odd cycle swapped when another cycle follows
---@field max_plies? integer                   draw by move limit after this many plies played from the opening position (default 200, 0 = none); an opening line's book plies do not count
---@field max_plies_include_book? boolean       count the book plies toward `max_plies` too (default false)
---@field seed? integer                        seeds random movers and random opening order
---@field pair_seeds? boolean                  random movers take their seed from the round, not the game (set by `arena.experiment`)
---@field concurrency? integer                 games at once (`--concurrency` wins)
---@field openings? arena.Openings           start positions (default: the initial position)
---@field format_options? table                the format's options, overlaid on its `defaults` and passed as `state.options`; an option the format does not declare is an error
---@field analysis? arena.Analysis              analyse every finished game with an engine
---@field prices? table<string, arena.Price>  by model name: added to (or overriding) the built-in price table
---@field budget? arena.Budget                  what the whole tournament may spend on model calls: once reached, no new game starts
---@field time_control? arena.TimeControl      every player's clock, unless the player has its own
---@field adjudication? arena.Adjudication      end games by an engine's evaluation (cutechess's rules) and judge games at the move limit; off when absent
---@field endings? "automatic"|"claimed"        draws by the game's history: "automatic" (fivefold repetition, 75 moves; as ChessArena and LLM Chess) or "claimed" (threefold repetition and 50 moves end the game at once, as cutechess); default "claimed" when both players are engines, else "automatic"
---@field players (arena.Llm|arena.Moa|arena.Engine|arena.Random|arena.Human)[] the players, each with its own name: model players, mixtures of agents, engines, random movers and people

---Where games start: FENs given inline, a book file, a built-in book, or Chess960 start
---positions. The built-in formats play each opening once with each colour.
---@class arena.Openings
---@field fens? string[]                       start positions given inline
---@field file? string                         an .epd or .pgn book, relative to the script
---@field book? "2moves_v1"|"8moves_v3"        a built-in book by name (the repository's books/, compiled in), found from any folder; not with `file`
---@field order? "sequential"|"random"         "sequential" (default, as in the file) or shuffled with the tournament seed
---@field count? integer                       use only the first N openings (after ordering); with `chess960 = true`, how many start positions to draw (at least 1)
---@field chess960? boolean|integer[]          Chess960 games: `true` draws `count` distinct start positions from the tournament seed, a list names them (Scharnagl's numbers, 0 to 959; 518 is the standard position); not with `file` or `fens`

---A model's price, US dollars per million tokens, for the cost columns, budgets and dry runs of
---calls the provider did not price itself (a provider's own `usage.cost`, as OpenRouter sends,
---always wins).
---@class arena.Price
---@field input_per_mtok number                prompt tokens
---@field output_per_mtok number               generated tokens
---@field reasoning_per_mtok? number           reasoning tokens, when billed apart from the output (default: as output)
---@field cached_input_per_mtok? number        prompt tokens read from the provider's cache (default: as input)
---@field cache_write_per_mtok? number         prompt tokens written to the provider's cache (default: as input)

---@class arena.Analysis
---@field engine? string                       default "stockfish"
---@field args? string[]                       the engine's command-line arguments
---@field depth? integer                       one of depth, nodes, movetime_ms (default depth 20)
---@field nodes? integer                       `go nodes N` instead of a depth
---@field movetime_ms? integer                 `go movetime N`, milliseconds, instead of a depth (not reproducible)
---@field multipv? integer                     top moves kept per position (default 3)
---@field threads? integer                     default 1
---@field hash? integer                        MB, default 128
---@field processes? integer                   engine searches at once (default: one per CPU)
---@field win_model? "lichess"|"chessarena"    the Win% formula behind the move classes (default "lichess", as LLM Chess; "chessarena" as ChessArena)
---@field all_moves? boolean                   score every legal move (for the move-advantage rate)
---@field during_play? boolean                 default true; false analyses after the last game

---Adjudication by an engine, with cutechess-cli's rules: the engine searches the position after
---every ply and the score of the side that just moved is counted. The game ends with termination
---`adjudication_resign` or `adjudication_draw`; `move_limit` only records a verdict beside a game
---that reached `max_plies` and never changes its result.
---@class arena.Adjudication
---@field engine? string                       an engine player's name (its command and options) or a command; needed by every rule
---@field args? string[]                       the command's arguments
---@field options? table<string, string|integer|boolean> UCI options after the player's (Threads 1 and Hash 16 unless given)
---@field nodes? integer                       one of nodes, depth, movetime_ms per ply (default nodes 50000)
---@field depth? integer                       `go depth N` per ply instead of nodes
---@field movetime_ms? integer                 milliseconds per ply instead of nodes (not reproducible)
---@field resign? arena.ResignRule             a side whose score stays at or below -score_cp for `moves` of its own moves loses
---@field draw? arena.DrawRule                 drawn once after_move full moves are played and both sides stay within score_cp for `moves` moves each
---@field move_limit? arena.MoveLimitRule      the verdict on games that reach max_plies, stored apart from the result

---cutechess's `-resign movecount=moves score=score_cp [twosided=true]`.
---@class arena.ResignRule
---@field score_cp integer                     centipawns, at least 1
---@field moves integer                        consecutive moves of the losing side, at least 1
---@field twosided? boolean                    also the winner's score at or above score_cp for `moves` of its moves (default false)

---cutechess's `-draw movenumber=after_move movecount=moves score=score_cp`.
---@class arena.DrawRule
---@field after_move integer                   full moves on the board (book moves included) before the rule applies, at least 1
---@field score_cp integer                     both sides' scores within this many centipawns of zero
---@field moves integer                        consecutive moves of each side (2 × moves plies; a capture or pawn move restarts the count), at least 1

---The verdict at the move limit: White wins when White's score of the final position is at least
---score_cp, Black when at most -score_cp, else a draw (the `at limit` columns).
---@class arena.MoveLimitRule
---@field score_cp? integer                    default 200
---@field engine? string                       another engine for the verdict (default the adjudication's)
---@field nodes? integer                       the verdict's search (default the adjudication's limit)
---@field depth? integer                       the verdict's search depth instead of nodes
---@field movetime_ms? integer                 the verdict's search time in milliseconds instead of nodes

---@class arena.Llm
---@field name string                          the player's name, unique in the tournament (standings, store and exports use it)
---@field base_url string                      e.g. "http://127.0.0.1:8765/v1"
---@field model string                         the model name sent in each request
---@field provider? "openai"|"openai_responses"|"anthropic"|"gemini" the wire format: chat completions ("openai", default), the Responses API, Anthropic's or Gemini's
---@field api_key_env? string                  the NAME of the environment variable holding the key
---@field temperature? number                  sampling temperature (default: the server's)
---@field top_p? number                        nucleus sampling (default: the server's)
---@field max_tokens? integer                  completion tokens per request at most (default: the server's)
---@field seed? integer                        sampling seed, for servers that honour it
---@field reasoning_effort? "low"|"medium"|"high" reasoning effort, for APIs that take one
---@field thinking_budget? integer             Anthropic thinking budget, tokens
---@field extra_body? table                    merged into every request body
---@field timeout_s? number                    per request (default 120)
---@field outage_s? number                     how long an unreachable endpoint is retried before the game is set aside (default 600)
---@field decode_retries? integer              retries of a success reply whose body cannot be decoded (each body is stored first), then the game is set aside (default 3)
---@field max_concurrency? integer             requests in flight against this endpoint and key at most (default 4); the adaptive window halves on 429/503/529 and grows back
---@field stream? boolean                     read each reply as server-sent events while it is written (default false); a cut stream keeps its partial reply in `failed_calls`, see the book's "Streamed replies"
---@field stream_idle_s? number                seconds a streamed reply may send nothing before it is cut as failed (default 60)
---@field api_version? string                the API version to name instead of arena's: Anthropic's `anthropic-version` (for a gateway that needs an older one), Azure OpenAI's `api-version` (default "2024-10-21")
---@field azure? boolean                      Azure OpenAI (provider "openai" or "openai_responses"): base_url is "https://NAME.openai.azure.com/openai", model the deployment's name, the key goes in the `api-key` header (default false)
---@field headers? table<string, string>       extra headers sent with every request: header name → the NAME of the environment variable holding its value (never stored or logged)
---@field rate? arena.Rate                      rate limits of this endpoint and key, shared by every player on them; requests are paced to them (and to the limits the provider's headers report)
---@field mode? string                         "blitz" (default), "bullet", "standard", "blindfold", "agentic", or your module
---@field options? table                       the mode's options (see its `defaults`), and `samples = N` (1 to 32, default 1), handled by arena for any mode with one reply per attempt: N samples per attempt at the player's `temperature` (which must be above 0), the move most of them decided played (see the book's "Self-consistency voting")
---@field prompt? string                       this player's words for its mode, e.g. "prompts/think.lua": a file of the script's folder (then the built-ins) standing in for the module the mode names as its `prompt_module` (blitz's "prompts.blitz"), so that one arm of an experiment differs from the baseline in this line
---@field modules? table<string, string>        any module the mode requires, replaced for this player: the name as the mode requires it to the file standing in for it, e.g. { ["parsers.move"] = "parsers/lenient.lua" }; a name the mode never requires is an error
---@field anchor_elo? number                   a calibrated rating, when this player anchors Elo estimates
---@field on_rejected? "void"|"forfeit"         when the provider refuses a request for good (context exceeded, request rejected): the game ends void (default) or as this player's forfeit
---@field budget? arena.Budget                  what this player may spend: once reached, no new game of it starts
---@field time_control? arena.TimeControl      this player's clock (overrides the tournament's)

---@class arena.Model
---@field base_url string                      the API's base URL, e.g. "http://127.0.0.1:8765/v1"
---@field model string                         the model name sent in each request
---@field provider? "openai"|"openai_responses"|"anthropic"|"gemini" the wire format, as for `arena.Llm` (default "openai")
---@field api_key_env? string                  the NAME of the environment variable holding the key
---@field temperature? number                  sampling temperature (default: the server's)
---@field top_p? number                        nucleus sampling (default: the server's)
---@field max_tokens? integer                  completion tokens per request at most (default: the server's)
---@field seed? integer                        sampling seed, for servers that honour it
---@field reasoning_effort? "low"|"medium"|"high" reasoning effort, for APIs that take one
---@field thinking_budget? integer             Anthropic thinking budget, tokens
---@field extra_body? table                    merged into every request body
---@field timeout_s? number                    seconds per request (default 120)
---@field outage_s? number                     how long an unreachable endpoint is retried before the game is set aside, seconds (default 600)
---@field decode_retries? integer              retries of a success reply whose body cannot be decoded (default 3)
---@field max_concurrency? integer             requests in flight against this endpoint (default 4)
---@field stream? boolean                     read each reply as server-sent events, as for `arena.Llm` (default false)
---@field stream_idle_s? number                seconds a streamed reply may send nothing before it is cut (default 60)
---@field api_version? string                the API version to name instead of arena's, as for `arena.Llm`
---@field azure? boolean                      Azure OpenAI, as for `arena.Llm` (default false)
---@field headers? table<string, string>       extra headers: header name → the NAME of the environment variable holding its value, as for `arena.Llm`
---@field rate? arena.Rate                    this endpoint and key's rate limit, shared by every player on them (see `arena.Llm`'s `rate`)

---A mixture of agents: the proposers answer (concurrently), the synthesizer merges their answers.
---@class arena.Moa
---@field name string                          the player's name, unique in the tournament
---@field proposers arena.Model[]              the models that answer each turn, concurrently (at least one)
---@field synthesizer arena.Model              the model that reads the proposers' answers and writes the player's reply
---@field mode? string                         the play mode, as for `arena.Llm` (default "blitz")
---@field options? table                       the mode's options (see its `defaults`)
---@field prompt? string                       this player's words for its mode, as for `arena.Llm`
---@field modules? table<string, string>        modules the mode requires, replaced for this player, as for `arena.Llm`
---@field anchor_elo? number                   a calibrated rating, when this player anchors Elo estimates
---@field on_rejected? "void"|"forfeit"        when a provider refuses one of its requests for good: the game ends void (default) or as this player's forfeit
---@field budget? arena.Budget                  what this player may spend, all its models together
---@field time_control? arena.TimeControl      this player's clock (overrides the tournament's)

---A spending limit, checked before each game starts (games in progress finish, so it can be
---overrun by what they spend); at least one field, each above 0. Calls without reported usage
---count at a length estimate (4 characters per token).
---Rate limits per minute, as the provider publishes them for the key; a part left out is learned
---from the answers' headers (OpenAI's and OpenRouter's x-ratelimit-*, Anthropic's
---anthropic-ratelimit-*).
---@class arena.Rate
---@field rpm? integer                         requests per minute
---@field tpm? integer                         tokens per minute (prompt plus completion)

---@class arena.Budget
---@field usd? number                          US dollars, by the price table (the models must have a price)
---@field tokens? number                       prompt plus completion tokens

---@class arena.Engine
---@field name string                          the player's name, unique in the tournament
---@field command? string                      path or name (PATH, then /usr/games); default "stockfish"
---@field args? string[]                       the command's arguments (e.g. `--uci` for gnuchess)
---@field options? table<string, string|integer|boolean>   UCI options, set in name order
---@field limits? arena.EngineLimits          search limit per move
---@field anchor_elo? number                   a calibrated Elo for this engine at these settings, when it anchors Elo estimates
---@field anchor_se? number                    standard error of anchor_elo (arena.ladder sets it)
---@field random_move_p? number                probability of a seeded random legal move instead of a search
---@field seed? integer                        seed of those random moves (with the tournament seed, game, ply)
---@field time_control? arena.TimeControl      this player's clock, sent as `go wtime .. btime .. winc .. binc ..` and/or `movetime` (overrides the tournament's)

---A chess clock: a base clock with an increment (Fischer), a limit per move, or both. Seconds,
---fractions allowed. Running out, or one move over `per_move_s`, loses on time (termination
---`time_forfeit`), or draws when the opponent cannot mate with its material.
---@class arena.TimeControl
---@field base_s? number                       the clock each side starts with (0 only with an increment)
---@field increment_s? number                  added after each move made in time (needs base_s; default 0)
---@field per_move_s? number                   the longest one move may take

---How long an engine searches per move; UCI combines the limits given.
---@class arena.EngineLimits
---@field nodes? integer                       `go nodes N`
---@field depth? integer                       `go depth N`
---@field movetime_ms? integer                 `go movetime N` (not reproducible)

---@class arena.Random
---@field name string                        the player's unique name (in an experiment's `opponents` it may be left out: the kind's name, numbered when repeated)
---@field seed? integer                        mixed with the tournament seed, the game and the ply to draw each move (default 0)
---@field anchor_elo? number                   a calibrated rating, when this player anchors Elo estimates
---@field anchor_se? number                    standard error of anchor_elo (arena.ladder sets it)
---@field time_control? arena.TimeControl      this player's clock (overrides the tournament's)

---A person, who plays in the browser: `arena serve` on the same store shows the board, and
---`arena run` waits for each of the person's moves (see the book's page on `arena serve`).
---Resigning ends the game with termination `resignation`; draw offers are declined.
---@class arena.Human
---@field name string                          the player's unique name
---@field show_reply? boolean                  show the opponent model's reply text after its move (default true; the page has a switch)
---@field anchor_elo? number                   a known rating, when this person anchors Elo estimates
---@field time_control? arena.TimeControl      this player's clock (overrides the tournament's); running out loses on time

---Marks a tournament table (records its line for error messages).
---@param t arena.Tournament                   the tournament's settings and players
---@return arena.Tournament
function arena.tournament(t) end

---@param t arena.Llm                          the player's settings
---@return arena.Llm
function arena.llm(t) end

---@param t arena.Engine                       the player's settings
---@return arena.Engine
function arena.engine(t) end

---@param t arena.Random                       the player's settings
---@return arena.Random
function arena.random(t) end

---@param t arena.Human                        the person's settings
---@return arena.Human
function arena.human(t) end

---A built-in ladder rung by name (`"random"`, `"mix30"`, `"sf-n1024"`, ...): its settings from the
---shipped calibration, with `anchor_elo`/`anchor_se` its calibrated Elo and standard error.
---Without a name: the rungs' names, weakest first.
---@param name? string                         a rung's name; without it, the list of names
---@return arena.Engine|arena.Random|string[]
function arena.ladder(name) end

---@param t arena.Moa                          the player's settings
---@return arena.Moa
function arena.moa(t) end

---"Did my change help?": a tournament with a paired schedule and a sequential test. Takes every
---field of `arena.Tournament` except `players`, `format`, `format_options`, `games_per_pair` and
---`pair_seeds`, which it sets: the players are the baseline, the variants, the null copy
---(`<baseline>-null`, an exact copy of the baseline) and the opponents; the format is
---`experiment`. Each cell is one opening with both colours; every undecided variant plays a game
---pair against the baseline (no opponents) or against each opponent (and the baseline plays the
---same pairs). The pentanomial SPRT (fastchess's GSPRT) is checked after every finished pair; a
---decided arm gets no new games; the run ends when every arm is decided or at `max_pairs`.
---@class arena.Experiment: arena.Tournament
---@field baseline arena.Llm|arena.Moa|arena.Engine|arena.Random    the player the variants are compared with
---@field variants (arena.Llm|arena.Moa|arena.Engine|arena.Random)[]  players that differ from the baseline in what is tested
---@field opponents? (arena.Llm|arena.Moa|arena.Engine|arena.Random)[] common opponents (none: variants play the baseline head to head); one without a `name` is named by its kind (`random`, `random-2`, ...)
---@field sprt? arena.SprtSettings             the sequential test (give this or `games`)
---@field games? integer                       fixed size: games per arm (even); reports the Elo difference with its 95 % interval and Holm-adjusted p-values
---@field null? boolean                        also play an exact copy of the baseline: the noise floor (default false)
---@field max_pairs? integer                   cap on game pairs per arm for the sequential test (default 1000)

---@class arena.SprtSettings
---@field elo0? number                         Elo under H0 (default 0)
---@field elo1 number                          Elo under H1
---@field alpha? number                        false-positive rate (default 0.05; Holm across variants)
---@field beta? number                         false-negative rate (default 0.05)
---@field model? "normalized"|"logistic"       the Elo scale of elo0/elo1 (default "normalized", as fastchess)

---@param t arena.Experiment                   the experiment's settings and players
---@return arena.Tournament
function arena.experiment(t) end

---The `experiment` format's statistics from its state: the arms still to schedule, the next
---cell, why the experiment is over (nil while it runs) and its table for the standings.
---@param state table                          the `state` the `experiment` format's hooks receive
---@return { finished: string?, next_cell: integer, active: string[], table: arena.FormatTable }
function arena.experiment_status(state) end

---An evaluation script (`arena eval`): fine-grained tasks over data sets.
---@class arena.Evaluation
---@field name string                          told apart by name inside one store
---@field seed? integer                        seeds random players and built data sets
---@field concurrency? integer                 items answered at once (`--concurrency` wins)
---@field tasks arena.Task[]                   the tasks, each over its own data set
---@field players (arena.Llm|arena.Engine|arena.Random)[] the players that answer every task's items

---One task of an evaluation; give `data` or `build`.
---@class arena.Task
---@field task "basic_understanding"|"move_selection"|"puzzles"|"board_reconstruction" which task to run; its module is `tasks.<task>` unless `script` names another
---@field name? string                         label in reports and the store (default: the task name); two entries of one task need different names
---@field data? string                         a data file or folder, relative to the script or `$VAR/...` (a folder from the environment)
---@field build? arena.Build                   build the data set instead of reading it
---@field limit? integer                       use only the first N items
---@field scoring? "strict"|"chessarena"       basic understanding (default "strict")
---@field max_attempts? integer                puzzles: replies allowed per solver move (default 5)
---@field options? table                       the task script's options (see its `defaults`: `parser`, `legal_moves`, ...)
---@field script? string                       the task module (default "tasks.<task>"; a `tasks/` copy in the script's folder wins)

---How a task's data set is built when no file gives it.
---@class arena.Build
---@field count integer                        how many items to build
---@field book? string                         an EPD or PGN book the positions come from (relative to the script, or `$VAR/...`)
---@field games? string                        or an arena store: the positions of its stored games (book moves left out)
---@field player? string                       with `games`: only the positions this player was to move in (default: every player's)
---@field depth? integer                       engine depth for move-selection sets (default 10 unless `nodes` is given)
---@field nodes? integer                       engine nodes per search instead of a depth
---@field plies? integer                       board reconstruction: plies per move list (default 12)
---@field seed? integer                        seed of the sampling (default: the evaluation's seed)
---@field engine? string                       the analysis engine (default "stockfish")
---@field processes? integer                   engine processes for the analysis (default 1)

---@param t arena.Evaluation                   the evaluation's settings, tasks and players
---@return arena.Evaluation
function arena.evaluation(t) end

---Replaces `{{name}}` with `vars.name`; a missing variable is an error.
---@param template string                      text with `{{name}}` placeholders
---@param vars table                           the values, by placeholder name
---@return string
function arena.template(template, vars) end

arena.json = {}
---@param value any                            the value to write as JSON
---@return string
function arena.json.encode(value) end
---@param text string                          JSON text
---@return any value, string? error
function arena.json.decode(text) end

arena.log = {}
---@param ... any                              values to log, joined by tabs
function arena.log.info(...) end
---@param ... any                              values to log, joined by tabs
function arena.log.warn(...) end
---@param ... any                              values to log, joined by tabs
function arena.log.error(...) end

arena.board = {}

---@class arena.FoundMove
---@field uci string                           the move in UCI
---@field san string                           the move in SAN
---@field matched string   the text the move was read from

---@class arena.MoveError
---@field kind "no_move_found"|"unparseable"|"illegal"|"ambiguous" why no legal move was read
---@field message string                       what went wrong, in words a model can be told
---@field candidate? string                    the text read as a move, when one was found but refused

---"chessarena": ChessArena's reader exactly (last fenced UCI move, else last fenced SAN move converted
---by python-chess; `unparseable` is a move python-chess cannot read, never `ambiguous`);
---"chessarena_any": the same, also reading unfenced moves; "tolerant": arena's forgiving search;
---or a table for arena's search.
---@alias arena.ParseRule "chessarena"|"chessarena_any"|"tolerant"|{ pick?: "first"|"last", scope?: "fenced"|"tagged"|"fenced_or_tagged"|"anywhere", notations?: ("uci"|"san")[] }

---Reads a move out of free text.
---@param text string                          the reply to read
---@param fen string                           the position the move is played in
---@param rule? arena.ParseRule                how to search (default "tolerant")
---@return arena.FoundMove? move, arena.MoveError? error
---@param variant? "standard"|"chess960"  the game's rules (`ctx.variant`); without it, read from the FEN's castling rights
function arena.board.find_move(text, fen, rule, variant) end

---Castling is `e1g1` in standard chess and king takes rook (`e1h1`) in Chess960.
---@param fen string                           the position
---@param notation? "uci"|"san"                the notation of the list (default "uci")
---@param variant? "standard"|"chess960"  as for find_move
---@return string[]
function arena.board.legal_moves(fen, notation, variant) end

---@param fen string                           the position
---@param style? "ascii"|"unicode"|"fen"       the drawing (default "ascii")
---@return string
function arena.board.render(fen, style) end

---A picture a message can show: put it in a message's `images` list
---(`{ role = "user", content = "...", images = { arena.board.image(ctx.fen) } }`). It is sent in each
---provider's image format, and stored once however many requests show it.
---@class arena.Image
---@field media_type string                    the picture's media type, "image/png"
---@field data string                          the picture's bytes (a binary string)

---@class arena.BoardImageOptions
---@field size? integer                        the picture's side in pixels, 64 to 2048 (default 384)
---@field orientation? "white"|"black"         the side drawn at the bottom (default: the side to move)
---@field coordinates? boolean                 file letters and rank digits along the edges (default true)
---@field last_move? string                    a move in UCI (`ctx.last_move`) whose two squares are tinted

---The position drawn as a PNG picture, for vision models: the same FEN and options give the same
---bytes. Raises on a bad FEN, size, option or last move.
---@param fen string                           the position (standard or Chess960)
---@param options? arena.BoardImageOptions     how to draw it
---@return arena.Image
function arena.board.image(fen, options) end

---True when the text holds anything besides the move (bullet mode's rule). "arena" (default): one
---move, UCI or SAN, fenced, tagged or bare, and nothing else; "chessarena": ChessArena's
---`judge_thinking` (anything left after deleting UCI-shaped moves and fences).
---@param text string                          the reply
---@param rule? "arena"|"chessarena"           the rule, as above (default "arena")
---@return boolean
function arena.board.forbidden_reasoning(text, rule) end

arena.rating = {}
arena.rating.glicko = {}

---@class arena.Rating
---@field rating number                        the rating, on the Glicko scale
---@field rd number                            the rating deviation
---@field low? number                          the lower end of the 95 % interval (rating - 1.96 rd); set on results, ignored on input
---@field high? number                         the upper end of the 95 % interval (rating + 1.96 rd); set on results, ignored on input

---@param white arena.Rating                   White's rating before the game
---@param black arena.Rating                   Black's rating before the game
---@param score number   White's score: 1, 0.5 or 0
---@param opts? { initial_rating?: number, initial_rd?: number, min_rd?: number, compat?: "correct"|"chessarena" } a new player's rating and deviation (default 1500 and 350), the deviation's floor (default 50), and ChessArena's update instead of the correct one (`compat = "chessarena"`)
---@return arena.Rating white, arena.Rating black
function arena.rating.glicko.update(white, black, score, opts) end

---Rates the games in the order given (each its own rating period): pass them in schedule order.
---@param games { white: string, black: string, score: number }[] the games, each with White's score
---@param opts? { initial_rating?: number, initial_rd?: number, min_rd?: number, compat?: "correct"|"chessarena" } as for `update`
---@return { players: table<string, arena.Rating>, ranking: string[] }
function arena.rating.glicko.rate(games, opts) end

arena.rating.elo = {}
---LLM Chess's Elo estimate against anchors (Algorithm 1). `opponent_se`, the opponent's own
---standard error (a ladder rung's `anchor_se`), widens the interval (errors taken as correlated).
---@param blocks { opponent_elo: number, wins?: integer, draws?: integer, losses?: integer, color?: "white"|"black", color_shift?: number, opponent_se?: number }[] the results against each anchor: its Elo and the games won, drawn and lost, optionally with one colour and its shift
---@param opts? { white_advantage?: number }   White's advantage in Elo (default 35)
---@return { kind: "point"|"at_least"|"at_most", elo?: number, se?: number, margin95?: number, lower95?: number, upper95?: number }
function arena.rating.elo.estimate(blocks, opts) end

---Where a player stands on a calibrated ladder and what it plays next (the `placement` format's
---maths; the book's methods page, "Placement"): the next pair goes to the rung that leaves the
---smallest expected variance, and the answer says `stop` instead once the 95% interval on the
---ladder's scale is at most `target`, at `max_games`, or when the player is plainly below the
---bottom rung or above the top one.
---@param rungs "ladder"|{ name: string, elo: number, se?: number }[] the built-in calibrated ladder, or rungs with their Elo and its standard error
---@param games { rung: string, score: number, color: "white"|"black" }[] the player's finished games: the rung, its score (1, 0.5 or 0) and its colour
---@param opts? { target?: number, max_games?: integer, start_elo?: number, white_advantage?: number } the 95% half-width to stop at (default 50), the game limit (default 400), where the first pair goes (default the middle rung) and White's advantage (default 35)
---@return { next?: string, stop?: "target"|"max_games"|"below_ladder"|"above_ladder", games: integer, estimate?: table, with_ladder?: table, rungs_played: { name: string, games: integer }[] } `estimate` on the ladder's scale and `with_ladder` with the rungs' own errors, as `arena.rating.elo.estimate` returns them
function arena.rating.placement(rungs, games, opts) end

---The players a freeze rule stops (`format_options.target` of the round robin and the matchmaker):
---every player without an `anchor_elo` whose Elo against the players with one (LLM Chess's
---estimate, colour per game) has a 95% half-width of at most `target`. Anchors are never frozen.
---@param state table                          a format's `state` (its players, ratings and games)
---@param target number                        the 95% half-width, in Elo
---@return table<string, boolean> frozen       the frozen players' names, mapped to true
function arena.rating.frozen(state, target) end

---@param player string                        the player to find an opponent for
---@param candidates string[]                  the players it may meet
---@param ratings table<string, arena.Rating>  everyone's current rating, by name
---@param opts? { criterion?: "chessarena"|"pair_score", top_k?: integer, seed?: integer } how candidates are ranked (default "chessarena"), how many of the best one is drawn from (default 3), and the draw's seed (default: unseeded)
---@return string? opponent
function arena.rating.pick_opponent(player, candidates, ratings, opts) end

arena.pairing = {}

---One player's round for `arena.pairing.dutch`: a game played (`opponent` and `colour`), the
---pairing-allocated bye (`bye = true`), or neither (a forfeit, an absence, a void game).
---@class arena.PairingRound
---@field opponent? integer                    the opponent's pairing number
---@field colour? "white"|"black"              this player's colour in the game played
---@field bye? boolean                         the pairing-allocated bye
---@field points? number                       points scored in the round, in tenths (default 0)

---@class arena.PairingPlayer
---@field rounds? arena.PairingRound[]         one entry per round played so far, every player the same number
---@field available? boolean                   false: not paired this round (default true)

---The next round by the FIDE Dutch system (FIDE Handbook C.04.3, the 2025 rules), as bbpPairings
---pairs it. Players are given by pairing number (the list's order); the bye, when the field is
---odd, goes to the player the rules choose. When no pairing keeps the absolute criteria (every
---pairing left repeats a game or clashes absolute colour preferences) it returns nil and the
---reason, naming the round; bad input raises an error naming the player and round.
---@param t { players: arena.PairingPlayer[], rounds: integer, initial_colour?: "white"|"black", forbidden?: integer[][], points?: { win?: number, draw?: number } } the players, by pairing number, and the tournament's shape (see below)
---  `rounds`: the tournament's rounds (for the last round's rules); `initial_colour`: pairing number 1's colour in round 1 (default white); `forbidden`: pairs that must not meet besides those that played; `points`: a win's and a draw's points (default 1 and 0.5)
---@return { pairs: { white: integer, black: integer }[], bye?: integer }|nil  pairs in board order
---@return string? reason  why no pairing exists (when the first value is nil)
function arena.pairing.dutch(t) end

-- A play mode is a module returning:
---@class arena.Mode
---@field defaults? table                      the options it understands, with defaults (arena enforces max_attempts and max_turns); a player's option must have its default's type (a number, true or false, text; text options may also take a table)
---@field choices? table<string, string[]>     the values a text option may take (`choices = { notation = { "uci", "san" } }`): `arena check` refuses any other, naming the closest
---@field exhausted? "forfeit"|"too_many_wrong_actions"   how a game ends when max_attempts are used up (default forfeit)
---@field prompt_module? string                the module holding its words, as it requires it (blitz: "prompts.blitz"): what a player's `prompt = "..."` stands in for
---@field start fun(ctx: arena.TurnContext): ({role: string, content: string, images?: arena.Image[]}[] | { messages: {role: string, content: string, images?: arena.Image[]}[], request?: table, tools?: arena.Tool[] }) the messages that open each attempt: a list, or `{ messages, request, tools }` whose `request` fields are added to the request body and whose `tools` are offered to the model; a message's `images` are shown after its text
---@field reply fun(ctx: arena.TurnContext, text: string, calls: arena.ToolCall[]): arena.Decision reads the model's reply (and the tools it called, an empty list when none) and decides what happens next

-- A tool a play mode offers the model (`tools` in what `start` returns).
---@class arena.Tool
---@field name string                          the tool's name: 1 to 64 letters, digits, `_` or `-`
---@field description string                   what it does, for the model
---@field parameters? table                    its arguments as a JSON schema (default: an object without properties)

-- A tool call in a model's reply (`reply`'s third argument, and `tool_calls` of its message in `ctx.dialog`).
---@class arena.ToolCall
---@field id string                            the provider's id of the call, which its result names
---@field name string                          the tool called
---@field arguments string                     the arguments as the JSON text the model wrote (it may not be valid JSON)

-- The move lists and dialogs are made when first read (`pairs` makes them all; `rawget`/`next` see
-- only those read); the metatable is protected; a ctx kept past its call keeps only those it read.
---@class arena.TurnContext
---@field fen string                           the position to move in
---@field start_fen string                     where the game started (after the opening line)
---@field variant "standard"|"chess960"  Chess960: castling in UCI is king takes rook (`e1h1`), FENs are X-FEN
---@field side "white"|"black"                 the side the player moves for
---@field ply integer                          plies played so far (0 before the first move)
---@field move_number integer                  the position's full-move number
---@field legal_uci string[]                   the legal moves in UCI
---@field legal_san string[]                   the legal moves in SAN
---@field history_uci string[]                 every move of the game so far, in UCI
---@field history_san string[]                 every move of the game so far, in SAN
---@field last_move? string                    the opponent's last move in UCI (nil before any)
---@field attempt integer                      which attempt at this ply, from 1
---@field max_attempts integer                 attempts allowed at this ply before the game ends as `exhausted` says
---@field player string                        the player's name
---@field opponent string                      the opponent's name
---@field game integer                         the game's number in the tournament schedule
---@field options table                        the mode's options: its `defaults` overlaid with the player's
---@field dialog {role: string, content: string, tool_calls?: arena.ToolCall[], tool_call_id?: string}[] the messages of this ply so far (in `reply`, the reply included); a reply that called tools has `tool_calls`, a tool result (role `tool`) the `tool_call_id` it answers
---@field previous_dialog {role: string, content: string}[] the whole dialog of this player's previous move in this game (its final attempt, reply included); empty on its first move
---@field reasoning? string                    `reply` only: the reasoning the provider returned beside the answer
---@field finish_reason? string                `reply` only: why the provider stopped generating, in OpenAI chat terms for every API (`stop`; `length` when the reply was cut at its token limit)

---@class arena.Decision
---@field move? string        play this move (UCI)
---@field retry? string|true  ask again with this feedback (true with reset = true: start over)
---@field reset? boolean                       with `retry = true`: start the dialog over from `start` instead of sending feedback
---@field say? string         answer and continue the dialog without spending an attempt
---@field forfeit? string     give the game up, with a reason
---@field outcome? string     the label counted in the statistics
---@field candidate? string   the move read in a refused reply (`err.candidate`), stored with the call and shown by `arena export pgn --annotate`
---@field other_calls? string the result sent for each tool call of the reply after the first (the first gets the `say` or `retry` text; default empty)

---`format_options` of `format = "swiss"`.
---@class arena.SwissOptions
---@field rounds? integer|false                rounds to play (default false: ceil(log2(players))); at most m - 3, m the players rounded up to even (3 for 3 or 4 players): longer Swisses can reach a round the Dutch system cannot pair
---@field games_per_pairing? 1|2               2: each pairing plays a game with each colour (default 1)
---@field bye_points? number                   what a bye scores, 0 to 1 (default 1)
---@field seeding? "order"|"rating"            seeds in script order (default) or by `anchor_elo`, highest first

---`format_options` of `format = "placement"`. `arena.tournament{}` adds the rungs to the players
---and lists them here as `{ name, elo, se }`; every other player is a model to place.
---@class arena.PlacementOptions
---@field rungs? "ladder"|table[]              the built-in calibrated ladder (default), or the rungs as players with `anchor_elo` (and `anchor_se`)
---@field target? number                       stop a model when its 95% interval on the ladder's scale is at most +/- this (default 50)
---@field max_games? integer                   stop a model after this many games (default 400)
---@field start_elo? number|false              where a model's first pair goes (default false: the ladder's middle rung)

---`format_options` of `format = "knockout"`.
---@class arena.KnockoutOptions
---@field games_per_match? integer             games per match, even (default 2): each player White in half
---@field tiebreak? "armageddon"|"pair"        a level match: an armageddon (default; White must win, a draw sends Black through) or pairs of games, then an armageddon
---@field max_tiebreak_pairs? integer          `tiebreak = "pair"`: at most this many pairs before the armageddon (default 2)
---@field seeding? "order"|"rating"            seeds in script order (default) or by `anchor_elo`, highest first
---@field armageddon_black_time? number        Black's share of its clock in the armageddon, above 0 and below 1 (default 0.8: White 5 minutes, Black 4); White's draw-odds handicap is time. A knockout needs a `time_control`: `arena check` refuses one whose players play without a clock

---A table a format's `standings` hook returns: cells are strings, integers, floats (shown with the
---column's `decimals`, default 1) or false (empty).
---@class arena.FormatTable
---@field title string                         the heading above the table
---@field kind? string                         the table's stable name in `--format json` (snake_case; default "format")
---@field columns string[]                     the column names
---@field rows (string|number|false)[][]       the rows, one cell per column
---@field notes? string[]                      lines under the table in text output
---@field decimals? table<string, integer>     decimals of a column's floats, by column name

-- A format is a module returning:
---@class arena.Format
---@field defaults? table                      the `format_options` it understands, with their defaults (any other key is an error)
---`check(options, field)`: the problems of the effective options for this field, as messages; `arena check` reports each at the tournament's line.
---`field.untimed` lists the players who play without a clock (a format whose games need one refuses them).
---@field check? fun(options: table, field: { players: string[], ratings: table<string, number>, untimed: string[] }): (string[]|string|nil)
---`standings(state)`: the format's own tables (same `state` as `pairings`), shown by `arena leaderboard`, the HTML report and at the end of `arena run`.
---@field standings? fun(state: table): arena.FormatTable[]
---`state.games` lists every game scheduled so far in schedule order (by `index`), finished or not; `state.ratings` each player's `anchor_elo` where it has one;
---`state.spend` what each player has spent on model calls (tokens, dollars) and whether a budget (its own or the tournament's) keeps its next game from starting.
---A game an engine crash or hang made void (`"*"`) that the next run plays again is replaced there by
---its replay, which carries the void game's `index`: a format sees what it would have without the fault.
---Instead of games, `pairings` may return `{ no_pairing = { round = N, reason = "..." } }` when its rules allow no pairing of round N (the Swiss format does when the Dutch system is stuck): the run stops with the error "no legal pairing for round N: ...", every game played so far is kept, and a later run stops the same way.
---A pairing's `black_time` (above 0, at most 1) gives time odds: Black plays on that share of its clock (base and per-move limit; the increment is kept), White on its own, as in an armageddon.
---@field pairings fun(state: { players: string[], ratings: table<string, number>, games: { index: integer, round: integer, white: string, black: string, result?: "1-0"|"0-1"|"1/2-1/2"|"*" }[], games_per_pair: integer, openings: integer, seed: integer, options: table, analysis?: table<string, { plies: integer, top_move_rate: number, best_rate: number, inaccuracy_rate: number, mistake_rate: number, blunder_rate: number, acpl: number, accuracy?: number, legal_move_rate?: number }>, spend?: table<string, { calls: integer, tokens: integer, usd: number, unpriced_calls: integer, budget_reached: boolean }> }): ({ white: string, black: string, round?: integer, opening?: integer, black_time?: number }[] | nil)

-- A task module (`scripts/tasks/*.lua`) is a module returning:
---@class arena.TaskModule
---@field defaults? table                      the options it understands, with their defaults (any other key is an error)
---@field prompt fun(item: table, ctx: arena.TaskContext): {role: string, content: string}[] the messages that ask for one item
---@field parse fun(reply: string, item: table, ctx: arena.TaskContext): (table|nil), (table|string|nil) reads a reply: the answer, or nil and an error (a table with a `message`, or a string) that counts as a wrong reply
---@field feedback? fun(err: table, item: table, ctx: arena.TaskContext): string the message sent after a refused answer before the next attempt (default: the error's `message`)

---@class arena.TaskContext
---@field task string                          the task's label
---@field mode string                          the player's play mode (`bullet` asks for the answer alone)
---@field player string                        the player's name
---@field options table                        the task's effective options
---@field attempt integer                      which reply this is, from 1
---@field max_attempts integer                 replies allowed (the task's `max_attempts`)
---@field reasoning? string                    parse only: the reasoning the provider returned beside the reply (ChessArena's readers read it before the reply)
---@field fen? string                          puzzles: the position to move in
---@field history? string[]                    puzzles: the moves since the puzzle's FEN
---@field legal_uci? string[]                  puzzles: the legal moves
---@field legal_san? string[]                  puzzles: the legal moves in SAN
---@field step? integer                        puzzles: which of the solver's moves this is

-- Helpers for task scripts (`scripts/tasks/`).
arena.eval = {}

---The JSON answer of a reply: the last ```json block ("chessarena") or any JSON object ("tolerant").
---@param text string                          the reply
---@param rule? "chessarena"|"tolerant"        which JSON to take (default "tolerant")
---@return table? answer
function arena.eval.json_answer(text, rule) end

---ChessArena's move parsing (last fenced UCI move, fenced SAN fallback; `any` also reads bare moves).
---@param text string                          the reply
---@param fen string                           the position the move is played in
---@param any? boolean                         also read moves outside fences (default false)
---@return { uci: string, read_as: "uci"|"san" }? move
function arena.eval.chessarena_move(text, fen, any) end

---arena's tolerant move parsing (fences, tags, bare moves, SAN or UCI).
---@param text string                          the reply
---@param fen string                           the position the move is played in
---@return { uci: string, read_as: "uci"|"san" }? move
function arena.eval.tolerant_move(text, fen) end

---The FEN a reply states (board reconstruction).
---@param text string                          the reply
---@param rule? "chessarena"|"tolerant"        how to find the FEN (default "tolerant")
---@return string? fen
function arena.eval.extract_fen(text, rule) end
