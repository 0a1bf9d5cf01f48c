-- Placement: places each model on a calibrated ladder to a stated precision in few games. Every
-- model is placed on its own and all at once: its next pair of games (both colours, a fresh
-- opening) goes to the rung that tells the most about it, given its current estimate and the
-- rung's own error, and it stops when its 95% interval is at most `target` Elo, at `max_games`,
-- when a budget keeps its games from starting, or when it is plainly below the bottom rung or
-- above the top one (outside the ladder's range: never extrapolated). The method is in the book
-- (methods, "Placement: a rating to a stated precision"); `arena.rating.placement` does the maths.
--
--   format = "placement",
--   format_options = {
--     rungs = "ladder",   -- the built-in calibrated ladder, or a list of players with anchor_elo
--                         -- and anchor_se (arena.tournament{} adds the rungs to the players)
--     target = 50,        -- stop a model when its 95% interval is at most +/- this
--     max_games = 400,    -- stop a model after this many games
--     start_elo = false,  -- where the first pair goes (default: the ladder's middle rung)
--   },
--
-- The models are the players that are not rungs. A void game (a harness fault) counts for
-- nobody and its replay takes its place.
local M = {}

M.defaults = {
  rungs = "ladder",
  target = 50,
  max_games = 400,
  start_elo = false,
}

local function rung_list(state)
  local rungs = state.options.rungs
  if type(rungs) ~= "table" then
    error("placement: format_options.rungs is not a list of rungs: write the tournament as arena.tournament{ ... } so that it adds them", 0)
  end
  local is_rung = {}
  for _, r in ipairs(rungs) do
    is_rung[r.name] = true
  end
  return rungs, is_rung
end

local function score_of(result, white)
  if result == "1/2-1/2" then
    return 0.5
  end
  if (result == "1-0") == white then
    return 1
  end
  return 0
end

-- Each model's finished games (as arena.rating.placement takes them), games in flight, and
-- games scheduled in all.
local function games_by_model(state, is_rung)
  local models = {}
  for _, name in ipairs(state.players) do
    if not is_rung[name] then
      models[name] = { finished = {}, open = 0, scheduled = 0 }
    end
  end
  for _, g in ipairs(state.games) do
    local model, rung, white
    if models[g.white] and is_rung[g.black] then
      model, rung, white = g.white, g.black, true
    elseif models[g.black] and is_rung[g.white] then
      model, rung, white = g.black, g.white, false
    end
    if model then
      local m = models[model]
      m.scheduled = m.scheduled + 1
      if not g.result then
        m.open = m.open + 1
      elseif g.result ~= "*" then
        table.insert(m.finished, { rung = rung, score = score_of(g.result, white), color = white and "white" or "black" })
      end
    end
  end
  return models
end

local function place(state, rungs, games)
  local opts = state.options
  return arena.rating.placement(rungs, games, {
    target = opts.target,
    max_games = opts.max_games,
    start_elo = opts.start_elo or nil,
  })
end

local function budget_reached(state, name)
  return state.spend ~= nil and state.spend[name] ~= nil and state.spend[name].budget_reached
end

function M.check(options, field)
  local problems = {}
  if type(options.target) ~= "number" or options.target <= 0 then
    table.insert(problems, "target must be a positive number of Elo")
  end
  if math.type(options.max_games) ~= "integer" or options.max_games < 2 then
    table.insert(problems, "max_games must be a whole number of at least 2")
  end
  if options.start_elo and type(options.start_elo) ~= "number" then
    table.insert(problems, "start_elo must be a number")
  end
  local rungs = options.rungs
  if type(rungs) ~= "table" then
    table.insert(problems, "the rungs were not added: write the tournament as arena.tournament{ ... }, which adds them to the players")
  else
    local is_rung, models = {}, 0
    for _, r in ipairs(rungs) do
      is_rung[r.name] = true
    end
    for _, name in ipairs(field.players) do
      if not is_rung[name] then
        models = models + 1
      end
    end
    if models == 0 then
      table.insert(problems, "every player is a rung; add the models to place to `players`")
    end
  end
  return problems
end

function M.pairings(state)
  local rungs, is_rung = rung_list(state)
  local models = games_by_model(state, is_rung)
  local out = {}
  local waiting = false
  local pairs_so_far = #state.games // 2
  for _, name in ipairs(state.players) do
    local m = models[name]
    if m and m.open > 0 then
      waiting = true
    elseif m and not budget_reached(state, name) then
      local p = place(state, rungs, m.finished)
      if p.next then
        pairs_so_far = pairs_so_far + 1
        local opening = nil
        if state.openings > 0 then
          opening = (pairs_so_far - 1) % state.openings + 1
        end
        local round = m.scheduled // 2 + 1
        table.insert(out, { white = name, black = p.next, round = round, opening = opening })
        table.insert(out, { white = p.next, black = name, round = round, opening = opening })
      end
    end
  end
  if #out > 0 then
    return out
  end
  if waiting then
    return {}
  end
  return nil
end

local function rungs_text(played)
  local parts = {}
  for _, r in ipairs(played) do
    table.insert(parts, string.format("%s %d", r.name, r.games))
  end
  return table.concat(parts, ", ")
end

function M.standings(state)
  local rungs, is_rung = rung_list(state)
  local models = games_by_model(state, is_rung)
  local rows = {}
  local notes = {}
  local priced = true
  for _, name in ipairs(state.players) do
    local m = models[name]
    if m then
      local p = place(state, rungs, m.finished)
      local e, wl = p.estimate, p.with_ladder
      local stop
      -- Stable names, for the JSON as much as for the eye.
      if p.stop then
        stop = p.stop
      elseif budget_reached(state, name) then
        stop = "budget"
      elseif m.open > 0 or p.next then
        stop = "playing"
      end
      local elo, margin, margin_ladder = false, false, false
      if e and e.elo then
        elo, margin, margin_ladder = e.elo, e.margin95, wl.margin95
      elseif e and e.kind == "at_most" then
        elo = string.format("<= %.0f", e.upper95)
      elseif e and e.kind == "at_least" then
        elo = string.format(">= %.0f", e.lower95)
      end
      local spend = state.spend and state.spend[name]
      local tokens, usd = false, false
      if spend then
        tokens, usd = spend.tokens, spend.usd
        if spend.unpriced_calls > 0 then
          priced = false
        end
      end
      table.insert(rows, { name, elo, margin, margin_ladder, p.games, rungs_text(p.rungs_played), stop or false, tokens, usd })
    end
  end
  table.insert(notes, string.format("stop: target (the 95%% interval on the ladder's scale is at most +/- %g Elo), max_games (%d), budget, below_ladder or above_ladder (outside the ladder's range, not extrapolated), or playing.", state.options.target, state.options.max_games))
  table.insert(notes, "+/-95% is on the ladder's scale (the rungs' Elo taken as exact); with ladder adds the rungs' own calibration errors.")
  if not priced then
    table.insert(notes, "Some calls have no price: their cost is not in cost (USD).")
  end
  return {
    {
      title = "Placement",
      kind = "placement",
      columns = { "player", "Elo", "±95%", "±95% with ladder", "games", "rungs played", "stop", "tokens", "cost (USD)" },
      rows = rows,
      notes = notes,
      decimals = { Elo = 1, ["±95%"] = 1, ["±95% with ladder"] = 1, ["cost (USD)"] = 4 },
    },
  }
end

return M
