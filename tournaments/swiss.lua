-- A five-round Swiss of eight players: Stockfish at seven node counts and the random mover
-- (about ten seconds on two cores). `arena run tournaments/swiss.lua`, then
-- `arena leaderboard --db swiss.db` shows the Swiss table with its tie-breaks.
--
-- Each round is paired when the one before has finished: by score, top half against bottom half
-- of each score group, never a pair twice, colours alternating. Put an LLM player in the list
-- to place a model among engines of known strength in five games instead of seven.
local arena = require("arena")

local function stockfish(nodes)
  return arena.engine {
    name = "sf-" .. nodes,
    options = { Threads = 1, Hash = 16 },
    limits = { nodes = nodes },
  }
end

return arena.tournament {
  name = "swiss",
  format = "swiss",
  format_options = {
    rounds = 5, -- at most 5 for eight players (`arena check` says why)
    games_per_pairing = 1, -- 2: each pairing plays a game with each colour
    bye_points = 1, -- for an odd field: the lowest-ranked player without a bye sits out
    seeding = "order", -- or "rating": by each player's anchor_elo
  },
  max_plies = 120,
  seed = 1,
  players = {
    stockfish(400),
    stockfish(200),
    stockfish(100),
    stockfish(50),
    stockfish(20),
    stockfish(5),
    stockfish(1),
    arena.random { name = "random" },
  },
}
