-- Model against anchors, as LLM Chess plays it: every player listed in `format_options.models`
-- plays every other player (the anchors: random movers and engines) `games_per_pair` times. The
-- anchor has White by default (`anchor_color = "white"`), as the random player always did in LLM
-- Chess; `anchor_color = "alternate"` alternates colours instead. Anchors never play each other.
local M = {}

-- The format options; arena refuses any other key when the script is checked.
M.defaults = { models = {}, anchor_color = "white" }

function M.pairings(state)
  if #state.games > 0 then
    return nil
  end
  local options = state.options
  local is_model = {}
  for _, name in ipairs(options.models) do
    is_model[name] = true
  end
  local alternate = options.anchor_color == "alternate"
  local games = {}
  for g = 1, state.games_per_pair do
    for _, model in ipairs(state.players) do
      if is_model[model] then
        for _, anchor in ipairs(state.players) do
          if not is_model[anchor] then
            local white, black = anchor, model
            if alternate and g % 2 == 0 then
              white, black = model, anchor
            end
            table.insert(games, { white = white, black = black, round = g })
          end
        end
      end
    end
  end
  return games
end

return M
