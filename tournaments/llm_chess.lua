-- LLM Chess in arena: the local model plays the agentic mode (get_current_board, get_legal_moves,
-- make_move) as Black against the bottom rungs of arena's built-in ladder, and
-- `arena leaderboard --db llm_chess.db` prints the LLM Chess table (Win/Loss, game duration,
-- wrong actions, tokens and cost, Elo against the anchors).
--
-- No rating here is set by hand: `arena.ladder(name)` gives each rung its calibrated Elo and
-- standard error from data/ladder/calibration.json (README "The calibration ladder"), on LLM
-- Chess's scale (the random mover pinned at its -122.27), and the Elo interval includes the rungs'
-- own uncertainty.
--   * random: the uniform random mover;
--   * mix90, mix75: a random legal move with probability 90 % / 75 %, else Stockfish at 1 node.
--
-- The mode's switches reproduce the paper's ablations, e.g. options = { board = "fen" },
-- { only_make_move = true }, { legal_moves = false, board = "fen" }, { previous_moves = true },
-- { single_request = true }; `rule = "strict"` reads actions more strictly than LLM Chess.
local arena = require("arena")

local model = {
  base_url = "http://127.0.0.1:8765/v1",
  model = "smollm2-135m-instruct",
  temperature = 0.3, -- the paper's setting
  max_tokens = 64,
  max_concurrency = 1, -- the local server answers one request at a time
}

return arena.tournament {
  name = "llm-chess",
  format = "anchors",
  format_options = { models = { "smollm2-135m" } }, -- the anchors take White
  games_per_pair = 2,
  max_plies = 200, -- LLM Chess's limit: 100 moves
  seed = 3,
  concurrency = 2,
  players = {
    arena.llm {
      name = "smollm2-135m",
      base_url = model.base_url,
      model = model.model,
      temperature = model.temperature,
      max_tokens = model.max_tokens,
      max_concurrency = model.max_concurrency,
      mode = "agentic",
      options = { max_turns = 10, max_attempts = 3, rule = "llm_chess" },
    },
    arena.ladder("random"),
    arena.ladder("mix90"),
    arena.ladder("mix75"),
  },
}
