-- The local model playing the agentic mode through native tool calls, with one tool added to the
-- built-in ones (modes/agentic_tools.lua beside this file), against the random mover.
-- `arena run examples/agentic_tools/tournament.lua` (start the model first:
-- scripts/local-llm.sh start; the server must accept `tools`, as llama.cpp does with --jinja).
local arena = require("arena")

return arena.tournament {
  name = "agentic-tools",
  games_per_pair = 2,
  max_plies = 20,
  players = {
    arena.llm {
      name = "smollm2-tools",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      max_tokens = 128,
      max_concurrency = 1,
      mode = "agentic",
      options = { actions = "tools" },
    },
    arena.random { name = "random" },
  },
}
