-- Matchmaker: ChessArena's competition sampling (paper, appendix C.2). Game after game it picks a
-- player, pairs it with the opponent whose game would tell the most about both ratings (Glicko-1:
-- among the best `top_k` by the chosen criterion, uniformly), plays two games with colours
-- swapped, and repeats until every player's RD is at most `target_rd` or `max_games` are played.
--
-- format_options (all optional, see M.defaults):
--   target_rd = 100        stop when every player's rating deviation is at most this
--   max_games = 200        stop after this many games in the tournament (the budget)
--   top_k = 3              choose uniformly among this many best opponents (ChessArena: 3)
--   criterion = "chessarena" | "pair_score"   see crates/core/src/rating/matchmaking.rs
--   focus = "name"         always pick this player first while its RD is above target: how a new
--                          model joins a rated pool stored in the same database
--   compat = "correct" | "chessarena"         Glicko update rule used to decide
--   target = false        a freeze rule: a model whose 95% interval against the players with an
--                         anchor_elo is at most +/- target Elo plays no more games, neither picked
--                         nor picked as an opponent (see formats/lib/freeze.lua)
--
-- ChessArena picks the first player uniformly from everyone; here it is picked uniformly among the
-- players still above `target_rd`, so no game is spent on players that are already converged.
local M = {}

-- The format options and their defaults; arena refuses any other key when the script is checked.
-- `focus = false` means no player is focused.
M.defaults = {
  target_rd = 100,
  max_games = 200,
  top_k = 3,
  criterion = "chessarena",
  focus = false,
  compat = "correct",
  target = false,
}

function M.check(options, field)
  return require("formats.lib.freeze").problems(options, field)
end

--- Current ratings of every player, from the finished games in schedule order (game number):
--- Glicko-1 depends on the order, and finishing order depends on concurrency.
local function ratings(state, opts)
  local finished = {}
  for _, g in ipairs(state.games) do
    -- "*" is a void game: finished, but it counts for nobody.
    if g.result and g.result ~= "*" then
      table.insert(finished, g)
    end
  end
  table.sort(finished, function(a, b)
    return a.index < b.index
  end)
  local games = {}
  for _, g in ipairs(finished) do
    local score = g.result == "1-0" and 1 or (g.result == "0-1" and 0 or 0.5)
    table.insert(games, { white = g.white, black = g.black, score = score })
  end
  local rated = arena.rating.glicko.rate(games, { compat = opts.compat }).players
  local all = {}
  for _, name in ipairs(state.players) do
    local r = rated[name] or { rating = 1500, rd = 350 }
    all[name] = { rating = r.rating, rd = r.rd }
  end
  return all
end

function M.pairings(state)
  local opts = state.options
  for _, g in ipairs(state.games) do
    if not g.result then
      return {} -- wait for the games in flight: the next choice needs their results
    end
  end
  if #state.games >= opts.max_games then
    return nil
  end
  local current = ratings(state, opts)
  local frozen = {}
  if opts.target then
    frozen = arena.rating.frozen(state, opts.target)
  end
  local open = {}
  for _, name in ipairs(state.players) do
    if current[name].rd > opts.target_rd and not frozen[name] then
      table.insert(open, name)
    end
  end
  if #open == 0 then
    return nil
  end
  if opts.focus and current[opts.focus] == nil then
    error("matchmaker: `focus` names `" .. opts.focus .. "`, who is not a player", 0)
  end
  local seed = state.seed * 1000003 + #state.games
  math.randomseed(seed)
  local first
  if opts.focus and current[opts.focus].rd > opts.target_rd and not frozen[opts.focus] then
    first = opts.focus
  else
    first = open[math.random(#open)]
  end
  local others = {}
  for _, name in ipairs(state.players) do
    if name ~= first and not frozen[name] then
      table.insert(others, name)
    end
  end
  if #others == 0 then
    return nil -- everyone else is frozen: nobody left to learn from
  end
  local opponent = arena.rating.pick_opponent(first, others, current, {
    criterion = opts.criterion,
    top_k = opts.top_k,
    seed = seed,
  })
  local round = #state.games // 2 + 1
  return {
    { white = first, black = opponent, round = round },
    { white = opponent, black = first, round = round },
  }
end

return M
