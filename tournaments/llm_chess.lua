-- LLM Chess in arena: the local model plays the agentic mode (get_current_board, get_legal_moves,
-- make_move) as Black against the random mover and against Stockfish at its weakest, and
-- `arena leaderboard --db llm_chess.db` prints the LLM Chess table (Win/Loss, game duration,
-- wrong actions, tokens and cost, Elo against the anchors).
--
-- The anchor ratings here are illustrative, not calibrations:
--   * random: -122, LLM Chess's calibration of its random player against Komodo Dragon;
--   * stockfish-skill0 at 1 node: 250, a placeholder of the order of Dragon level 1 (LLM Chess's
--     weakest engine anchor). Calibrate it against random (or Dragon) before trusting the Elo.
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
    arena.random { name = "random", anchor_elo = -122 },
    arena.engine {
      name = "stockfish-skill0",
      command = "stockfish",
      options = { ["Skill Level"] = 0, Threads = 1, Hash = 16 },
      limits = { nodes = 1 },
      anchor_elo = 250,
    },
  },
}
