-- Places models on the built-in calibrated ladder, each to a stated precision in as few games as
-- it can (`format = "placement"`; the book's formats page, "Placement"). Run it with
-- `arena run tournaments/placement.lua`.
--
-- The model is SmolLM2-135M-Instruct served offline by scripts/local-llm.sh, its answers held to
-- the legal moves by a llama.cpp grammar, so it plays whole games (about as well as the random
-- mover at the ladder's foot). `arena.tournament{}` adds the ladder's rungs to the players; each
-- model then plays pairs of games against the rung that tells the most about it, until its 95%
-- interval is at most +/- `target` Elo, `max_games` are played, a budget is reached, or it is
-- plainly below the bottom rung or above the top one. The table at the end says each model's Elo,
-- interval, games, the rungs it met and what it spent; a model with a price (`prices`, or a
-- provider that prices its calls) also gets a dot on the report's cost-versus-rating chart.
local arena = require("arena")

return arena.tournament {
  name = "placement",
  format = "placement",
  format_options = { target = 100, max_games = 120 },
  max_plies = 160,
  seed = 11,
  concurrency = 2,
  players = {
    arena.llm {
      name = "smollm2-135m-grammar",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      temperature = 0.7,
      max_tokens = 24,
      max_concurrency = 1, -- the local server answers one request at a time
      mode = "blitz",
      options = { legal_moves = true, history = 10, max_attempts = 3, grammar = true },
    },
  },
}
