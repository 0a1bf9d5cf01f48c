-- The local model playing the worked `coach` mode (modes/coach.lua beside this file) against
-- the random mover. `arena run examples/coach/tournament.lua` (start the model first:
-- scripts/local-llm.sh start).
local arena = require("arena")

return arena.tournament {
  name = "coach",
  games_per_pair = 2,
  max_plies = 20,
  players = {
    arena.llm {
      name = "smollm2-coach",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      max_tokens = 64,
      max_concurrency = 1,
      mode = "coach",
      options = { show_legal = "on_retry", max_attempts = 3 },
    },
    arena.random { name = "random" },
  },
}
