-- Knockout: a seeded single-elimination bracket of mini-matches.
--
--   format = "knockout",
--   format_options = { games_per_match = 2, tiebreak = "armageddon", max_tiebreak_pairs = 2, seeding = "order",
--                      armageddon_black_time = 0.8 },
--
-- Seeds are the script order (or `anchor_elo`, highest first, with `seeding = "rating"`). The
-- bracket has the standard placement: seed 1 meets the last seed, 2 the second-last, and so on,
-- placed so that seeds 1 and 2 can only meet in the final, 1-4 only from the semi-finals. When the
-- field is not a power of two, the top seeds get the byes into the second round.
--
-- A match is `games_per_match` games (even), each player White in half of them, the higher seed
-- first. Every game is played (no match stops early). A level match goes to its tie-break:
--   tiebreak = "armageddon"  one game in which White must win: a draw sends Black through. Who is
--                            White is drawn by lot from the tournament seed;
--   tiebreak = "pair"        pairs of games (one with each colour) until one player leads after
--                            a pair, at most `max_tiebreak_pairs`, then an armageddon.
-- Black's draw odds in the armageddon are balanced by time odds: White plays on its clock as the
-- tournament sets it, Black on `armageddon_black_time` of its own (default 0.8: the FIDE World
-- Cup's five minutes against four; base and per-move limits scaled, the increment kept). A
-- knockout therefore needs a clock: `arena check` refuses one whose players play without.
-- A match starts as soon as both its players are known, without waiting for the rest of the
-- round. A void game (`*`) is replayed with the same colours; after 3 void games in one match,
-- the higher seed goes through (the note under the bracket says so).
--
-- `standings(state)` returns two tables: the bracket (every match with its score, tie-break and
-- who went through) and the final placing.
local M = {}

-- The format options; arena refuses any other key when the script is checked.
M.defaults = {
  games_per_match = 2,
  tiebreak = "armageddon",
  max_tiebreak_pairs = 2,
  seeding = "order",
  armageddon_black_time = 0.8,
}

-- Void games after which a match is decided by seed: the same two players voiding that often
-- points to a request refused for good, which replaying would only repeat.
local MAX_VOIDS = 3

function M.check(options, field)
  local problems = {}
  local g = options.games_per_match
  if math.type(g) ~= "integer" or g < 2 or g % 2 ~= 0 then
    table.insert(problems, "`games_per_match` must be an even whole number of at least 2 (each player White in half)")
  end
  if options.tiebreak ~= "armageddon" and options.tiebreak ~= "pair" then
    table.insert(problems, '`tiebreak` must be "armageddon" or "pair"')
  end
  local p = options.max_tiebreak_pairs
  if math.type(p) ~= "integer" or p < 1 then
    table.insert(problems, "`max_tiebreak_pairs` must be a whole number of at least 1")
  end
  local t = options.armageddon_black_time
  if type(t) ~= "number" or t <= 0 or t >= 1 then
    table.insert(problems, "`armageddon_black_time` must be a number above 0 and below 1 (Black's share of its clock in the armageddon)")
  end
  if field.untimed and #field.untimed > 0 then
    table.insert(problems, string.format(
      "`tiebreak`: every knockout can end in an armageddon, whose draw odds for Black need time odds for White, and %s play%s without a clock: set the tournament's `time_control`",
      table.concat(field.untimed, ", "), #field.untimed == 1 and "s" or ""))
  end
  if options.seeding ~= "order" and options.seeding ~= "rating" then
    table.insert(problems, '`seeding` must be "order" or "rating"')
  elseif options.seeding == "rating" and next(field.ratings) == nil then
    table.insert(problems, '`seeding = "rating"` needs players with an `anchor_elo`, and none has one')
  end
  return problems
end

-- Player names in seed order.
local function seeds(state)
  local names = {}
  for i, name in ipairs(state.players) do
    names[i] = name
  end
  if state.options.seeding == "rating" then
    local position = {}
    for i, name in ipairs(names) do
      position[name] = i
    end
    local ratings = state.ratings or {}
    table.sort(names, function(a, b)
      local ra, rb = ratings[a], ratings[b]
      if ra and rb and ra ~= rb then
        return ra > rb
      end
      if (ra == nil) ~= (rb == nil) then
        return ra ~= nil
      end
      return position[a] < position[b]
    end)
  end
  return names
end

-- The seed in each bracket line, top to bottom: {1, 2} doubled by pairing every seed s with
-- size + 1 - s gives 1 8 4 5 2 7 3 6 for eight.
local function placement(size)
  local order = { 1 }
  local n = 1
  while n < size do
    n = n * 2
    local next_order = {}
    for _, s in ipairs(order) do
      table.insert(next_order, s)
      table.insert(next_order, n + 1 - s)
    end
    order = next_order
  end
  return order
end

local function round_name(round, rounds)
  local left = rounds - round
  if left == 0 then
    return "final"
  elseif left == 1 then
    return "semi-final"
  elseif left == 2 then
    return "quarter-final"
  end
  return "round of " .. (1 << (left + 1))
end

-- White's and Black's points, or nil for a void or unfinished game.
local function points_of(result)
  if result == "1-0" then
    return 1, 0
  elseif result == "0-1" then
    return 0, 1
  elseif result == "1/2-1/2" then
    return 0.5, 0.5
  end
  return nil
end

-- The phases of a match, in order: the match itself, the tie-break pairs, the armageddon. Each
-- asks for a number of games with the higher seed White (`hi_white`) and with it Black.
local function phases(options, armageddon_hi_white)
  local half = options.games_per_match // 2
  local list = { { kind = "match", hi_white = half, lo_white = half, first_opening = 1 } }
  local opening = half + 1
  if options.tiebreak == "pair" then
    for t = 1, options.max_tiebreak_pairs do
      table.insert(list, { kind = "pair", number = t, hi_white = 1, lo_white = 1, first_opening = opening })
      opening = opening + 1
    end
  end
  table.insert(list, {
    kind = "armageddon",
    hi_white = armageddon_hi_white and 1 or 0,
    lo_white = armageddon_hi_white and 0 or 1,
    first_opening = opening,
  })
  return list
end

-- Reads a match's games: who went through (or nil), the games to schedule next, whether a game
-- is in flight, and what happened, for the table.
local function play_match(m, games, options, lot)
  local list = phases(options, lot)
  local p = 1
  local got = { hi = 0, lo = 0, hi_points = 0, lo_points = 0 }
  m.log = {}
  m.voids = 0
  m.score = { 0, 0 } -- the match phase's points of the higher and lower seed
  for _, g in ipairs(games) do
    if not g.result then
      m.in_flight = true
      return
    end
    if g.result == "*" then
      m.voids = m.voids + 1
      if m.voids >= MAX_VOIDS then
        m.winner, m.loser = m.hi, m.lo
        m.decided_by = "seed after " .. m.voids .. " void games"
        return
      end
    else
      local ws, bs = points_of(g.result)
      local hi_white = g.white == m.hi
      local phase = list[p]
      if hi_white then
        got.hi = got.hi + 1
      else
        got.lo = got.lo + 1
      end
      got.hi_points = got.hi_points + (hi_white and ws or bs)
      got.lo_points = got.lo_points + (hi_white and bs or ws)
      if got.hi >= phase.hi_white and got.lo >= phase.lo_white then
        local h, l = got.hi_points, got.lo_points
        if phase.kind == "match" then
          m.score = { h, l }
        else
          table.insert(m.log, { phase = phase, hi = h, lo = l, white = g.white, result = g.result })
        end
        if phase.kind == "armageddon" then
          -- White must win; a draw sends Black through.
          if g.result == "1-0" then
            m.winner, m.loser = g.white, g.black
          else
            m.winner, m.loser = g.black, g.white
          end
          m.decided_by = "armageddon"
          return
        elseif h ~= l then
          m.winner = h > l and m.hi or m.lo
          m.loser = h > l and m.lo or m.hi
          m.decided_by = phase.kind == "match" and "match" or "tie-break pairs"
          return
        end
        p = p + 1
        got = { hi = 0, lo = 0, hi_points = 0, lo_points = 0 }
      end
    end
  end
  -- Nothing in flight and no winner yet: the missing games of the current phase.
  local phase = list[p]
  m.next = {}
  local opening = phase.first_opening
  -- The armageddon's Black plays on a share of its clock (see the top of this file).
  local black_time = phase.kind == "armageddon" and options.armageddon_black_time or nil
  for _ = got.hi + 1, phase.hi_white do
    table.insert(m.next, { white = m.hi, black = m.lo, opening = opening, black_time = black_time })
    opening = opening + 1
  end
  opening = phase.first_opening
  for _ = got.lo + 1, phase.lo_white do
    table.insert(m.next, { white = m.lo, black = m.hi, opening = opening, black_time = black_time })
    opening = opening + 1
  end
  -- The higher seed's White games and its Black games alternate, higher seed first.
  table.sort(m.next, function(a, b)
    if a.opening ~= b.opening then
      return a.opening < b.opening
    end
    return a.white == m.hi and b.white ~= m.hi
  end)
end

-- A fair coin from the tournament seed, the round and the match (SplitMix64's mixing; Lua's
-- integers wrap around), so the same tournament draws the same colours on every run.
local function draw_lot(seed, round, match)
  local x = seed * 0x9E3779B97F4A7C15 + round * 0x632BE59BD9B4E019 + match * 0x94D049BB133111EB
  x = (x ~ (x >> 30)) * 0xBF58476D1CE4E5B9
  x = (x ~ (x >> 27)) * 0x94D049BB133111EB
  x = x ~ (x >> 31)
  return (x >> 32) & 1 == 0
end

-- The whole bracket as the games so far make it: per round, its matches.
local function bracket(state)
  local names = seeds(state)
  local seed = {}
  for i, name in ipairs(names) do
    seed[name] = i
  end
  local size = 1
  local rounds = 0
  while size < #names do
    size = size * 2
    rounds = rounds + 1
  end
  local by_round = {}
  for _, g in ipairs(state.games) do
    by_round[g.round] = by_round[g.round] or {}
    table.insert(by_round[g.round], g)
  end
  for _, list in pairs(by_round) do
    table.sort(list, function(a, b)
      return a.index < b.index
    end)
  end
  local order = placement(size)
  local matches = {}
  local entrants = {}
  for k = 1, size // 2 do
    entrants[k] = { names[order[2 * k - 1]], names[order[2 * k]] }
  end
  for r = 1, rounds do
    matches[r] = {}
    local next_entrants = {}
    for k = 1, #entrants do
      local a, b = entrants[k][1], entrants[k][2]
      local m = { round = r, number = k }
      if a and b then
        if seed[b] < seed[a] then
          a, b = b, a
        end
        m.hi, m.lo = a, b
        local games = {}
        for _, g in ipairs(by_round[r] or {}) do
          if (g.white == a and g.black == b) or (g.white == b and g.black == a) then
            table.insert(games, g)
          end
        end
        -- The lot for the armageddon's colours, drawn from the tournament seed, the round and
        -- the match: the same tournament draws the same colours on every run.
        local lot = draw_lot(state.seed, r, k)
        play_match(m, games, state.options, lot)
      elseif r == 1 then
        -- Round 1 lines past the last seed are byes.
        m.hi = a or b
        m.winner = m.hi
        m.decided_by = "bye"
      else
        m.hi = a or b -- a feeder match is still being played
      end
      matches[r][k] = m
      local slot = (k + 1) // 2
      next_entrants[slot] = next_entrants[slot] or {}
      next_entrants[slot][2 - k % 2] = m.winner or false
    end
    for _, e in ipairs(next_entrants) do
      e[1] = e[1] or nil
      e[2] = e[2] or nil
    end
    entrants = next_entrants
  end
  return { matches = matches, rounds = rounds, seed = seed, names = names }
end

function M.pairings(state)
  local b = bracket(state)
  if b.rounds == 0 then
    return nil
  end
  local final = b.matches[b.rounds][1]
  if final.winner then
    return nil
  end
  local games = {}
  local in_flight = false
  for r = 1, b.rounds do
    for _, m in ipairs(b.matches[r]) do
      in_flight = in_flight or m.in_flight
      for _, g in ipairs(m.next or {}) do
        local opening = nil
        if state.openings > 0 then
          opening = (g.opening - 1) % state.openings + 1
        end
        table.insert(games, {
          white = g.white, black = g.black, round = r, opening = opening, black_time = g.black_time,
        })
      end
    end
  end
  if #games == 0 and not in_flight then
    error("knockout: no match can go on and the final is not decided (a bug in the format)", 0)
  end
  return games
end

local function score_text(x)
  if x == math.floor(x) then
    return string.format("%d", x)
  end
  return string.format("%.1f", x)
end

function M.standings(state)
  local b = bracket(state)
  local rows = {}
  local eliminated = {} -- name -> round lost in
  local notes = {}
  for r = 1, b.rounds do
    for _, m in ipairs(b.matches[r]) do
      local function who(name)
        if not name then
          return false
        end
        return string.format("%s (%d)", name, b.seed[name])
      end
      local score, tiebreak, through = false, false, false
      if m.decided_by == "bye" then
        tiebreak = "bye"
      elseif m.lo then
        score = score_text(m.score[1]) .. "-" .. score_text(m.score[2])
        local parts = {}
        for _, t in ipairs(m.log or {}) do
          if t.phase.kind == "pair" then
            table.insert(parts, string.format("pair %d: %s-%s", t.phase.number, score_text(t.hi), score_text(t.lo)))
          else
            table.insert(parts, string.format("armageddon, %s White: %s", t.white, t.result))
          end
        end
        if m.decided_by and m.decided_by:find("^seed") then
          table.insert(parts, "decided by " .. m.decided_by)
          table.insert(notes, string.format("%s match %d: %s went through by seed after %d void games", round_name(r, b.rounds), m.number, m.hi, m.voids))
        end
        if #parts > 0 then
          tiebreak = table.concat(parts, "; ")
        end
      end
      if m.winner then
        through = m.winner
        if m.loser then
          eliminated[m.loser] = r
        end
      elseif m.lo and (m.in_flight or m.next) then
        through = "(playing)"
      end
      if m.hi or m.lo then
        table.insert(rows, { round_name(r, b.rounds), m.number, who(m.hi), who(m.lo), score, tiebreak, through })
      end
    end
  end
  -- Placing: the winner, then by the round a player went out in, latest first; players still
  -- in (a bracket being played) above everyone already out.
  local final = b.rounds > 0 and b.matches[b.rounds][1] or nil
  local depth = {}
  for _, name in ipairs(b.names) do
    if final and final.winner == name then
      depth[name] = b.rounds + 2
    elseif eliminated[name] then
      depth[name] = eliminated[name]
    else
      depth[name] = b.rounds + 1
    end
  end
  local order = {}
  for _, name in ipairs(b.names) do
    table.insert(order, name)
  end
  table.sort(order, function(x, y)
    if depth[x] ~= depth[y] then
      return depth[x] > depth[y]
    end
    return b.seed[x] < b.seed[y]
  end)
  local placing_rows = {}
  for _, name in ipairs(order) do
    local above, level = 0, 0
    for _, other in ipairs(b.names) do
      if depth[other] > depth[name] then
        above = above + 1
      elseif depth[other] == depth[name] then
        level = level + 1
      end
    end
    local place, out
    if eliminated[name] then
      out = "lost the " .. round_name(eliminated[name], b.rounds)
    elseif depth[name] == b.rounds + 2 then
      out = "won the final"
    else
      out = "still in"
    end
    if out == "still in" then
      place = false
    elseif level == 1 then
      place = tostring(above + 1)
    else
      place = string.format("%d-%d", above + 1, above + level)
    end
    table.insert(placing_rows, { place, name, b.seed[name], out })
  end
  table.insert(notes, 1, string.format(
    "scores are the higher seed's first, over the %d games of the match; tie-break: %s",
    state.options.games_per_match,
    state.options.tiebreak == "pair"
        and string.format("up to %d pairs of games, then an armageddon (White must win)", state.options.max_tiebreak_pairs)
      or "an armageddon (White must win; a draw sends Black through)"
  ))
  return {
    {
      title = "bracket (knockout)",
      columns = { "round", "match", "higher seed", "lower seed", "score", "tie-break", "through" },
      rows = rows,
      notes = notes,
    },
    {
      title = "placing (knockout)",
      columns = { "place", "player", "seed", "out" },
      rows = placing_rows,
      notes = { "players out in the same round share the place range" },
    },
  }
end

return M
