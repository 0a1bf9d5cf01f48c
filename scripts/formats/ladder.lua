-- Ladder: calibrates a ladder of weak players (a random mover, Stockfish at tiny node counts, ...)
-- against an anchor of known rating. Players are the rungs in script order, weakest first; every
-- rung plays its `span` nearest rungs above it, and the anchor plays every rung, `games_per_pair`
-- games per pair with colours alternating and each opening played once with each colour.
--
--   format = "ladder",
--   format_options = { anchor = "sf-1350", anchor_rating = 1350, games_per_pair = 4, span = 1 },
--
-- With `anchor_plays = "neighbours"` the anchor is an ordinary rung at its place in the list and
-- plays only its `span` nearest rungs: the calibration's random mover at the bottom, which would
-- learn nothing from losing every game to the strong rungs.
--
-- `low_rungs = { through = "mix20", games_per_pair = 1000 }` plays more games in every pair whose
-- weaker rung is `through` or below it: a ladder's errors add up along the chain from the anchor,
-- so the rungs far from it need more games for the same interval.
--
-- `anchor_rating` is for the reader: `arena leaderboard --ladder sf-1350=1350` fits the ratings
-- (maximum likelihood, the anchor pinned to its rating). Returns the whole schedule at once.
local M = {}

-- The format options; arena refuses any other key when the script is checked. `anchor` must be
-- set; `games_per_pair = false` takes the tournament's own.
M.defaults = {
  anchor = false,
  anchor_rating = false,
  games_per_pair = false,
  span = 1,
  anchor_plays = "all",
  low_rungs = false,
}

local function pair_games(state, white, black, per_pair, round, out)
  for g = 1, per_pair do
    local w, b = white, black
    if g % 2 == 0 then
      w, b = black, white
    end
    local opening = nil
    if state.openings > 0 then
      opening = ((g - 1) // 2) % state.openings + 1
    end
    table.insert(out, { white = w, black = b, round = round, opening = opening })
  end
end

function M.pairings(state)
  if #state.games > 0 then
    return nil -- the schedule is already stored
  end
  local options = state.options
  local anchor = options.anchor
  if type(anchor) ~= "string" then
    error("ladder: format_options.anchor must name the anchor player")
  end
  local per_pair = options.games_per_pair or state.games_per_pair
  local span = options.span or 1
  if math.type(per_pair) ~= "integer" or per_pair < 1 then
    error("ladder: games_per_pair must be a positive integer")
  end
  if math.type(span) ~= "integer" or span < 1 then
    error("ladder: span must be a positive integer")
  end

  local anchor_plays = options.anchor_plays or "all"
  if anchor_plays ~= "all" and anchor_plays ~= "neighbours" then
    error('ladder: anchor_plays must be "all" or "neighbours"')
  end
  local rungs = {}
  local found = false
  for _, name in ipairs(state.players) do
    if name == anchor then
      found = true
      if anchor_plays == "neighbours" then
        table.insert(rungs, name)
      end
    else
      table.insert(rungs, name)
    end
  end
  if not found then
    error("ladder: the anchor `" .. anchor .. "` is not a player of this tournament")
  end

  -- How many games the pair whose weaker rung is rungs[i] plays.
  local low_through = 0
  local low_per_pair = per_pair
  local low = options.low_rungs
  if low then
    if type(low) ~= "table" or type(low.through) ~= "string" then
      error('ladder: low_rungs must be { through = "RUNG", games_per_pair = N }')
    end
    for i, name in ipairs(rungs) do
      if name == low.through then
        low_through = i
      end
    end
    if low_through == 0 then
      error("ladder: low_rungs.through `" .. low.through .. "` is not a rung of this ladder")
    end
    low_per_pair = low.games_per_pair
    if math.type(low_per_pair) ~= "integer" or low_per_pair < 1 then
      error("ladder: low_rungs.games_per_pair must be a positive integer")
    end
  end
  local function games_for(i)
    if i <= low_through then
      return low_per_pair
    end
    return per_pair
  end

  local games = {}
  local round = 0
  -- Neighbours first, the closest games carrying the most information about the order.
  for distance = 1, span do
    round = round + 1
    for i = 1, #rungs - distance do
      pair_games(state, rungs[i], rungs[i + distance], games_for(i), round, games)
    end
  end
  if anchor_plays == "all" then
    round = round + 1
    for _, rung in ipairs(rungs) do
      pair_games(state, rung, anchor, per_pair, round, games)
    end
  end
  return games
end

return M
