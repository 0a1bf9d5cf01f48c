-- Fine-grained evaluation: the four side benchmarks of ChessArena (basic understanding, move
-- selection, puzzles, board reconstruction) for the local model, Stockfish and a random player.
-- Run it with `arena eval tournaments/fine_grained.lua`; run the same command again to resume.
--
-- Data: basic understanding, move selection and board reconstruction are built here from real
-- Lichess positions (data/popularpos_sample.epd, CC0). Puzzles and ChessArena's own basic
-- understanding set are read from the folder named by ARENA_REFERENCE_DATA (a data path
-- starting with `$NAME/` takes that variable's folder); without it, drop those two tasks.
-- The subsets are small on purpose: the local 135M model answers one request at a time.
local arena = require("arena")

local reference = "$ARENA_REFERENCE_DATA/ChessArena/fine-grained_evaluation/"

return arena.evaluation {
  name = "fine-grained",
  seed = 11,
  concurrency = 2,
  tasks = {
    {
      task = "basic_understanding",
      data = reference .. "chess_modeling_evaluation/chess_modeling_evaluation.jsonl",
      limit = 6,
      scoring = "strict",
      options = { parser = "tolerant" },
    },
    {
      task = "move_selection",
      build = { book = "data/popularpos_sample.epd", count = 6, depth = 8 },
      options = { parser = "tolerant" },
    },
    {
      task = "puzzles",
      data = reference .. "puzzles_by_rating/lite",
      limit = 7, -- one per rating band
      max_attempts = 2,
      options = { parser = "tolerant" },
    },
    {
      task = "board_reconstruction",
      build = { count = 4, plies = 6 },
    },
  },
  players = {
    arena.llm {
      name = "smollm2-135m",
      base_url = "http://127.0.0.1:8765/v1",
      model = "smollm2-135m-instruct",
      temperature = 0.0,
      max_tokens = 160,
      max_concurrency = 1,
    },
    arena.engine {
      name = "stockfish",
      command = "stockfish",
      options = { Threads = 1, Hash = 16 },
      limits = { depth = 10 },
    },
    arena.random { name = "random" },
  },
}
