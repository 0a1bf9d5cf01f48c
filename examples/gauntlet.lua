-- Stockfish at three settings in a gauntlet against the random mover, with a custom format
-- (formats/gauntlet.lua beside this file). `arena run examples/gauntlet.lua`
local arena = require("arena")

return arena.tournament {
  name = "gauntlet",
  format = "gauntlet",
  games_per_pair = 2,
  max_plies = 120,
  players = {
    arena.random { name = "random" },
    arena.engine { name = "sf-nodes-1", options = { ["Skill Level"] = 0 }, limits = { nodes = 1 } },
    arena.engine { name = "sf-nodes-100", options = { ["Skill Level"] = 0 }, limits = { nodes = 100 } },
    arena.engine { name = "sf-depth-4", limits = { depth = 4 } },
  },
}
