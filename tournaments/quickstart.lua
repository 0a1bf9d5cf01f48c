-- A first tournament: a real small language model, a weak Stockfish and a random mover, in a round
-- robin where each pair plays both colours. Run it with `arena run tournaments/quickstart.lua`.
--
-- The model plays twice: once answering freely (a 135M model rarely manages a legal move, so this
-- player shows parse errors, feedback, retries and forfeits), and once with its answer constrained
-- to the legal moves by a llama.cpp grammar (so it plays whole games, about as well as a random
-- mover).
--
-- The model is SmolLM2-135M-Instruct served offline by scripts/local-llm.sh; any OpenAI-compatible
-- endpoint works the same way (set `api_key_env` to the name of the variable holding its key).
local arena = require("arena")

return arena.tournament {
  name = "quickstart",
  games_per_pair = 2,
  max_plies = 24, -- short games: this is a demonstration, not a rating
  seed = 7,
  concurrency = 2,
  players = {
    arena.llm {
      name = "smollm2-135m",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      temperature = 0.7,
      max_tokens = 96,
      max_concurrency = 1, -- the local server answers one request at a time
      mode = "blitz",
      -- "tolerant" also reads moves written outside a fence: a 135M model rarely fences its answer.
      options = { legal_moves = true, history = 10, max_attempts = 3, parser = "tolerant" },
    },
    arena.llm {
      name = "smollm2-135m-grammar",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      temperature = 0.7,
      max_tokens = 24,
      max_concurrency = 1,
      mode = "blitz",
      options = { legal_moves = true, history = 10, max_attempts = 3, grammar = true },
    },
    arena.engine {
      name = "stockfish-skill0",
      command = "stockfish",
      options = { ["Skill Level"] = 0, Threads = 1, Hash = 16 },
      limits = { nodes = 2000 },
    },
    arena.random { name = "random" },
  },
}
