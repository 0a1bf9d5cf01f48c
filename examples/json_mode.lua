-- The local model playing through a custom mode (modes/json_move.lua beside this file) that asks
-- for JSON answers and reads them with a custom parser (parsers/json_move.lua).
-- `arena run examples/json_mode.lua` (start the model first: scripts/local-llm.sh start)
local arena = require("arena")

return arena.tournament {
  name = "json mode",
  games_per_pair = 2,
  max_plies = 20,
  players = {
    arena.llm {
      name = "smollm2-json",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      max_tokens = 64,
      max_concurrency = 1,
      mode = "json_move",
      options = { max_attempts = 2 },
    },
    arena.random { name = "random" },
  },
}
