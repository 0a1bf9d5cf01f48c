-- The fastchess parity workload: Stockfish against itself at 2000 nodes per move, Threads 1,
-- Hash 16, the first ten UHO openings, each played once with each colour, no move limit and no
-- adjudication. It mirrors this fastchess command (see tournaments/books/PROVENANCE.md):
--
--   fastchess -engine cmd=/usr/games/stockfish name=sf1 -engine cmd=/usr/games/stockfish name=sf2 \
--     -each nodes=2000 option.Threads=1 option.Hash=16 \
--     -openings file=uho10.epd format=epd order=sequential -rounds 10 -repeat -concurrency 2
--
-- With `ucinewgame` before every game Stockfish is deterministic here, so arena must play the very
-- same 20 games (tests/integration/fastchess.rs checks it) and the run doubles as a throughput
-- benchmark (`arena bench engines`).
local arena = require("arena")

local function stockfish(name)
  return arena.engine {
    name = name,
    command = "stockfish",
    options = { Threads = 1, Hash = 16 },
    limits = { nodes = 2000 },
  }
end

return arena.tournament {
  name = "fastchess-parity",
  games_per_pair = 20, -- 10 openings x 2 colours
  max_plies = 0, -- games end by the rules only, as in fastchess without adjudication
  concurrency = 2,
  openings = { file = "books/uho10.epd", order = "sequential" },
  players = { stockfish("sf1"), stockfish("sf2") },
}
