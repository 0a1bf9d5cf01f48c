-- Round robin: every pair of players meets `games_per_pair` times, colours alternating, so each
-- pair plays each opening once with each colour. Returns the whole schedule on the first call.
local M = {}

function M.pairings(state)
  if #state.games > 0 then
    return nil -- the schedule is already stored: nothing more to add
  end
  local games = {}
  local players = state.players
  local round = 0
  for g = 1, state.games_per_pair do
    round = round + 1
    -- Each opening is played twice in a row by a pair, once with each colour.
    local opening = nil
    if state.openings > 0 then
      opening = ((g - 1) // 2) % state.openings + 1
    end
    for i = 1, #players do
      for j = i + 1, #players do
        local white, black = players[i], players[j]
        if g % 2 == 0 then
          white, black = black, white
        end
        table.insert(games, { white = white, black = black, round = round, opening = opening })
      end
    end
  end
  return games
end

return M
