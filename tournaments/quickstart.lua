-- A first tournament: a real small language model, a weak Stockfish and a random mover, in a round
-- robin where each pair plays both colours. Run it with `arena run tournaments/quickstart.lua`.
--
-- Games are adjudicated by Stockfish, as cutechess-cli does it: a side whose score stays at -10
-- pawns or worse after three of its moves in a row resigns (termination `adjudication_resign`), so
-- Stockfish's wins show within a few minutes. A game that reaches the move limit stays a draw; the
-- standings' `at limit W-D-L` column adds who Stockfish's evaluation of the final position favours.
-- Every engine here is deterministic: a fixed node count on one thread (never `Skill Level`, which
-- draws its moves from the clock).
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
  max_plies = 40, -- a demonstration, not a rating; adjudication decides most games sooner
  seed = 7,
  concurrency = 2,
  adjudication = {
    engine = "stockfish", nodes = 20000, -- one search of 20,000 nodes per ply, Threads 1, Hash 16
    resign = { score_cp = 1000, moves = 3 },
    move_limit = { score_cp = 200 }, -- a verdict beside the draw: at least +2 pawns wins
  },
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
      name = "stockfish-n256", -- the calibrated ladder's sf-n256 rung (about 1670 Elo)
      command = "stockfish",
      options = { Threads = 1, Hash = 16 },
      limits = { nodes = 256 },
    },
    arena.random { name = "random" },
  },
}
