-- Engine analysis as part of a tournament: the local model (constrained to legal moves by a
-- llama.cpp grammar, so it plays whole games) against Stockfish at skill level 0 and a random
-- mover, every game analysed by Stockfish as soon as it finishes. Run it with
-- `arena run tournaments/analysis.lua`; under the standings it prints the papers' analysis columns
-- (legal-move and top-move rates, best/inaccuracy/mistake/blunder rates per ply, blunders per game
-- phase, average centipawn loss, accuracy). `arena leaderboard --db analysis.db` shows them again.
--
-- The papers analyse at depth 20; depth 10 keeps this demonstration to a few minutes.
local arena = require("arena")

return arena.tournament {
  name = "analysis",
  games_per_pair = 2,
  max_plies = 20, -- short games: a demonstration, not a rating
  seed = 11,
  concurrency = 2,
  analysis = {
    engine = "stockfish",
    depth = 10,            -- or nodes = N, or movetime_ms = N; 20 when none is given
    multipv = 3,           -- ChessArena's top-3 moves
    threads = 1,
    hash = 16,
    processes = 1,         -- engine searches at once (default: one per CPU)
    win_model = "lichess", -- LLM Chess's Win% (0.00368208, mate = ±1000); "chessarena": 0.004, mate = 10000
    all_moves = false,     -- true also scores every legal move (ChessArena's move-advantage rate)
    during_play = true,    -- false: analyse after the last game
  },
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
    arena.engine {
      name = "stockfish-skill0",
      command = "stockfish",
      options = { ["Skill Level"] = 0, Threads = 1, Hash = 16 },
      limits = { nodes = 2000 },
    },
    arena.random { name = "random" },
  },
}
