-- A knockout of six players, seeded in script order: seeds 1 and 2 have byes into the
-- semi-finals and can only meet in the final. `arena run tournaments/knockout.lua`, then
-- `arena leaderboard --db knockout.db` shows the bracket and the placing.
--
-- Every match is two games, one with each colour; a level match goes to extra pairs of games
-- (at most two), then to an armageddon in which White must win (a draw sends Black through;
-- who is White is drawn by lot from the seed), played with time odds: White on the clock below,
-- Black on `armageddon_black_time` of it. A knockout needs a clock for that.
local arena = require("arena")

local function stockfish(nodes)
  return arena.engine {
    name = "sf-" .. nodes,
    options = { Threads = 1, Hash = 16 },
    limits = { nodes = nodes },
  }
end

return arena.tournament {
  name = "knockout",
  format = "knockout",
  format_options = {
    games_per_match = 2, -- even: each player White in half of them
    tiebreak = "pair", -- or "armageddon" at once
    max_tiebreak_pairs = 2,
    seeding = "order", -- or "rating": by each player's anchor_elo
    armageddon_black_time = 0.8, -- Black's share of its clock in the armageddon
  },
  time_control = { base_s = 60, increment_s = 1 },
  max_plies = 160,
  seed = 1,
  players = {
    stockfish(400),
    stockfish(100),
    stockfish(20),
    stockfish(5),
    stockfish(1),
    arena.random { name = "random" },
  },
}
