-- Experiment: the paired schedule of `arena.experiment{}` (see src/tournament/experiment.rs for
-- the design and the statistics). Cell c is one opening played with both colours: round 2c-1 has
-- the tested player White, round 2c has it Black. In each cell every undecided arm plays a pair
-- against the baseline (head to head) or against each common opponent, and then the baseline
-- plays the same pairs. A new cell is scheduled while fewer than `cells_ahead` cells are in
-- flight; the statistics (checked after every finished pair, in Rust) decide which arms go on.
local M = {}

M.defaults = {
  experiment = false, -- set by arena.experiment{}
  cells_ahead = 2,    -- cells in flight at once: more keeps more games going, fewer wastes less
}

local function in_flight(state)
  local open = {}
  local count = 0
  for _, g in ipairs(state.games) do
    if g.result == nil then
      local cell = (g.round + 1) // 2
      if not open[cell] then
        open[cell] = true
        count = count + 1
      end
    end
  end
  return count
end

function M.pairings(state)
  local status = arena.experiment_status(state)
  if status.finished then
    return nil
  end
  if in_flight(state) >= state.options.cells_ahead then
    return {} -- wait for a game to finish
  end
  local design = state.options.experiment
  local cell = status.next_cell
  local opening = nil
  if state.openings > 0 then
    opening = (cell - 1) % state.openings + 1
  end
  local games = {}
  local function pair(player, opponent)
    table.insert(games, { white = player, black = opponent, round = 2 * cell - 1, opening = opening })
    table.insert(games, { white = opponent, black = player, round = 2 * cell, opening = opening })
  end
  local opponents = design.opponents or {}
  for _, arm in ipairs(status.active) do
    if #opponents == 0 then
      pair(arm, design.baseline)
    else
      for _, opponent in ipairs(opponents) do
        pair(arm, opponent)
      end
    end
  end
  if #opponents > 0 then
    for _, opponent in ipairs(opponents) do
      pair(design.baseline, opponent)
    end
  end
  return games
end

function M.standings(state)
  return { arena.experiment_status(state).table }
end

return M
