-- The second half of the ladder's calibration: Stockfish's own `UCI_LimitStrength` rungs, which
-- tie the ladder to Stockfish's `UCI_Elo` scale, a second external anchor beside LLM Chess's
-- random mover. Stockfish documents `UCI_Elo` as calibrated at 60 s + 0.6 s per game (CCRL 40/4
-- anchored), so these rungs play that clock, sent to the engine as `wtime/btime/winc/binc`.
--
--   * `uci1350`: `UCI_Elo` 1350, Stockfish 15.1's floor; it meets mix10 and mix05;
--   * `uci1700`: `UCI_Elo` 1700; it meets sf-n1 and sf-n256.
--
-- Their neighbours are where a pilot (24 games against each of seven rungs at 30 ms a move)
-- placed them. The neighbours are the built-in rungs themselves (`arena.ladder`), so the games
-- join the node ladder's in one fit. Run it into the same store as `tournaments/calibrate.lua`:
--
--   arena run tournaments/calibrate_uci.lua --db calibrate.db
--   arena calibrate --db calibrate.db
--
-- `arena calibrate` then fits both tournaments together, once with the random mover pinned at
-- LLM Chess's -122.27 and once with these rungs pinned at their nominal `UCI_Elo`, and prints the
-- offset between the two scales (README "The calibration ladder").
local arena = require("arena")

local function uci(elo)
  return arena.engine {
    name = "uci" .. elo,
    command = "stockfish",
    -- A weakened Stockfish picks its move at a fixed shallow depth, so a loaded machine slows
    -- its search but not its choice; the overhead keeps it clear of losing on time there.
    options = {
      Threads = 1,
      Hash = 16,
      UCI_LimitStrength = true,
      UCI_Elo = elo,
      ["Move Overhead"] = 200,
    },
    time_control = { base_s = 60, increment_s = 0.6 },
  }
end

return arena.tournament {
  name = "calibrate-uci",
  format = "ladder",
  format_options = {
    anchor = "mix10",
    anchor_plays = "neighbours",
    games_per_pair = 64,
    span = 1,
  },
  max_plies = 200,
  seed = 12,
  -- Six games at once: the clock, not the processor, sets how long a game takes.
  concurrency = 6,
  openings = { file = "../books/2moves_v1.epd", order = "random", count = 32 },
  players = {
    arena.ladder("mix10"),
    uci(1350),
    arena.ladder("mix05"),
    arena.ladder("sf-n1"),
    uci(1700),
    arena.ladder("sf-n256"),
  },
}
