-- The freeze rule of the round robin and the matchmaker (`format_options.target`), kept here so
-- that both read it alike; not a format of its own. A model (a player without `anchor_elo`) is
-- frozen once its 95% interval against the players with one is at most +/- target Elo
-- (`arena.rating.frozen`, the placement format's stop): it plays no more games.
local M = {}

--- The problems of `options.target` for this field of players.
function M.problems(options, field)
  local target = options.target
  if not target then
    return {}
  end
  if type(target) ~= "number" or target <= 0 then
    return { "target must be a positive number of Elo (or false: no freeze rule)" }
  end
  if next(field.ratings) == nil then
    return { "target freezes a model by its interval against the players with an anchor_elo, and no player has one" }
  end
  return {}
end

--- Whether a game of the schedule is still played: neither player is frozen, and one of them is
--- a model (a game between two anchors tells nothing about a model).
local function wanted(state, frozen, g)
  if frozen[g.white] or frozen[g.black] then
    return false
  end
  return state.ratings[g.white] == nil or state.ratings[g.black] == nil
end

--- The next round of `schedule` (the format's whole schedule, in order) with its wanted games,
--- after the rounds already scheduled; {} while games are in flight (the next round depends on
--- their results); nil when no round is left.
function M.next_round(state, schedule)
  local last = 0
  for _, g in ipairs(state.games) do
    if not g.result then
      return {}
    end
    last = math.max(last, g.round)
  end
  local frozen = arena.rating.frozen(state, state.options.target)
  local out, round = {}, nil
  for _, g in ipairs(schedule) do
    if g.round > last and (round == nil or g.round == round) and wanted(state, frozen, g) then
      round = g.round
      table.insert(out, g)
    end
  end
  if #out == 0 then
    return nil
  end
  return out
end

return M
