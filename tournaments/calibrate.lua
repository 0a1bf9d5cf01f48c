-- The calibration of arena's built-in engine ladder (`arena.ladder(name)`): rungs from the random
-- mover up, each reproducible from the tournament seed, every rung playing its two nearest
-- neighbours. Rungs are
--
--   * `random`: the uniform random mover (LLM Chess calibrates it at -122.27 against Komodo Dragon);
--   * `mixNN`: a seeded mixture, a random legal move with probability NN %, else Stockfish at 1 node;
--   * `sf-nN`: Stockfish searching N nodes per move.
--
-- Stockfish always runs with `Threads = 1` and a fixed hash, so a node-limited search is
-- deterministic; no rung uses `Skill Level`, which draws its move choice from the clock. Games are
-- 100 moves at most (LLM Chess's limit, where the random mover's rating was measured) and start from
-- the 2-move book (500 openings: 1000 games for the pairs at the bottom, 500 for the others), each
-- opening once with each colour, so that two deterministic rungs never repeat a game. Then
--
--   arena calibrate --db calibrate.db --anchor random=-122.27 --out data/ladder/calibration.json
--
-- fits the ladder (maximum-likelihood Elo, the random mover pinned) and writes the shipped file;
-- README "The calibration ladder" has the procedure and the figures.
local arena = require("arena")

local ENGINE = { Threads = 1, Hash = 16 }

local function sf(nodes)
  return arena.engine {
    name = "sf-n" .. nodes,
    command = "stockfish",
    options = ENGINE,
    limits = { nodes = nodes },
  }
end

local function mix(percent)
  return arena.engine {
    name = string.format("mix%02d", percent),
    command = "stockfish",
    options = ENGINE,
    limits = { nodes = 1 },
    random_move_p = percent / 100,
  }
end

return arena.tournament {
  name = "calibrate",
  format = "ladder",
  format_options = {
    anchor = "random",
    anchor_rating = -122.27,
    anchor_plays = "neighbours",
    games_per_pair = 500,
    -- The pairs at the bottom sit furthest along the chain from the random mover: twice the games.
    low_rungs = { through = "mix20", games_per_pair = 1000 },
    span = 2,
  },
  max_plies = 200,
  seed = 11,
  concurrency = 2,
  openings = { file = "../books/2moves_v1.epd", order = "random", count = 500 },
  players = {
    arena.random { name = "random" },
    mix(90),
    mix(75),
    mix(60),
    mix(50),
    mix(40),
    mix(30),
    mix(20),
    mix(15),
    mix(10),
    mix(5),
    sf(1),
    sf(256),
    sf(512),
    sf(700),
    sf(1024),
  },
}
