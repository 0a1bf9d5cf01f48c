-- An engine ladder for rating players far below Stockfish's UCI_Elo floor (1350), such as
-- language models: weak rungs (a random mover, Stockfish at skill level 0 searching 1, 10, 100
-- and 1000 nodes) each play their two nearest neighbours and the anchor, Stockfish limited to
-- UCI_Elo 1350. Then
--
--   arena leaderboard --db ladder.db --ladder sf-elo1350=1350
--
-- fits every rung's Elo by maximum likelihood with the anchor pinned at 1350. Add an LLM player
-- (any position in the list: the format keeps script order as the ladder order) to place it on the
-- same scale.
--
-- Stockfish documents UCI_Elo as calibrated at a time control of about 60 s + 0.6 s per game, so the
-- anchor gets a second per move; faster settings make it play below its nominal rating.
-- Skill levels pick moves at random, so rungs using them are not reproducible run to run.
local arena = require("arena")

local function skill0(nodes)
  return arena.engine {
    name = "sf-skill0-n" .. nodes,
    command = "stockfish",
    options = { ["Skill Level"] = 0, Threads = 1, Hash = 16 },
    limits = { nodes = nodes },
  }
end

return arena.tournament {
  name = "ladder",
  format = "ladder",
  format_options = { anchor = "sf-elo1350", anchor_rating = 1350, games_per_pair = 6, span = 2 },
  max_plies = 300,
  seed = 1,
  concurrency = 2,
  openings = { file = "../books/2moves_v1.epd", order = "random", count = 3 },
  players = {
    arena.random { name = "random" },
    skill0(1),
    skill0(10),
    skill0(100),
    skill0(1000),
    arena.engine {
      name = "sf-elo1350",
      command = "stockfish",
      options = { UCI_LimitStrength = true, UCI_Elo = 1350, Threads = 1, Hash = 16 },
      limits = { movetime_ms = 1000 },
    },
  },
}
