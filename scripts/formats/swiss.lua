-- Swiss: a fixed number of rounds, each paired by score as the FIDE Dutch system does it in
-- spirit, a round at a time once the round before has finished.
--
--   format = "swiss",
--   format_options = { rounds = 5, games_per_pairing = 1, bye_points = 1, seeding = "order" },
--
-- Pairing. Players are ranked by points, then by seed (script order, or `anchor_elo` with
-- `seeding = "rating"`). Within a score group the top half meets the bottom half (1-5, 2-6, 3-7,
-- 4-8 in a group of eight); a player who cannot be paired in its group (an odd group, or every
-- candidate already met) floats down to the next. Two players never meet twice. Colours: no
-- player gets the same colour three times in a row or two more of one colour than of the other
-- when the round can be paired otherwise; a pair whose preferences clash gives the stronger one
-- its colour (a colour difference beats an alternation), then alternates from the last round
-- they had different colours, then favours the higher-ranked. When the field is odd, the
-- lowest-ranked player who has not had a bye (and whose bye leaves the others pairable) sits the
-- round out and scores `bye_points`.
--
-- The search is exhaustive (depth first in that order of preference, remembering the groups it
-- found unpairable), so a round is paired whenever a pairing without a repeat exists; first
-- among those keeping the colour rules, else among all. Pairing round by round can corner a
-- long tournament (more rounds than half the field), so there a round is paired only in a way
-- that leaves the next rounds (up to three) pairable; a Swiss as long as a round robin then
-- ends as one. `arena check` refuses more rounds than a round robin has.
--
-- `games_per_pairing = 2` plays each pairing twice, once with each colour. A void game (`*`)
-- scores nothing for either player and counts in no colour history or tie-break; it is not
-- replayed, and its pair still counts as having met (a void game is usually a request the
-- provider refuses for good, and pairing the same two players again would void again).
--
-- `standings(state)` returns the table: rank, points, W/D/L, Buchholz, Buchholz cut-1 and
-- Sonneborn-Berger (the tie-breaks in that order), and each player's colours by round.
local M = {}

-- The format options; arena refuses any other key when the script is checked. `rounds = false`
-- plays ceil(log2(players)) rounds, enough for one player to be the only one with every point.
M.defaults = {
  rounds = false,
  games_per_pairing = 1,
  bye_points = 1,
  seeding = "order",
}

local function is_integer(x)
  return math.type(x) == "integer"
end

-- The most rounds that can be paired without a repeat: everyone meets everyone once, a field
-- of odd size taking one bye each.
local function max_rounds(n)
  if n % 2 == 0 then
    return n - 1
  end
  return n
end

local function rounds_of(options, n)
  if options.rounds then
    return options.rounds
  end
  local r = 0
  while (1 << r) < n do
    r = r + 1
  end
  return math.min(math.max(r, 1), max_rounds(n))
end

function M.check(options, field)
  local problems = {}
  local n = #field.players
  local r = options.rounds
  if r ~= false and (not is_integer(r) or r < 1) then
    table.insert(problems, "`rounds` must be a whole number of at least 1 (or false for ceil(log2(players)))")
  elseif r and r > max_rounds(n) then
    table.insert(
      problems,
      string.format(
        "`rounds = %d` is too many for %d players: at most %d rounds can be paired without a repeat pairing",
        r,
        n,
        max_rounds(n)
      )
    )
  end
  local g = options.games_per_pairing
  if g ~= 1 and g ~= 2 then
    table.insert(problems, "`games_per_pairing` must be 1, or 2 to play both colours")
  end
  local b = options.bye_points
  if type(b) ~= "number" or b < 0 or b > 1 then
    table.insert(problems, "`bye_points` must be a number from 0 to 1")
  end
  if options.seeding ~= "order" and options.seeding ~= "rating" then
    table.insert(problems, '`seeding` must be "order" or "rating"')
  elseif options.seeding == "rating" and next(field.ratings) == nil then
    table.insert(problems, '`seeding = "rating"` needs players with an `anchor_elo`, and none has one')
  end
  return problems
end

-- Player names in seed order, and each one's seed number.
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
        return ra ~= nil -- rated players before unrated ones
      end
      return position[a] < position[b]
    end)
  end
  local seed = {}
  for i, name in ipairs(names) do
    seed[name] = i
  end
  return names, seed
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

local function pair_key(a, b)
  if a < b then
    return a .. "\0" .. b
  end
  return b .. "\0" .. a
end

-- Everything the games say so far: per player the points, results, colours and byes; the pairs
-- that have met; the rounds played.
local function history(state)
  local names, seed = seeds(state)
  local p = {}
  for _, name in ipairs(names) do
    p[name] = {
      name = name,
      seed = seed[name],
      points = 0,
      w = 0,
      d = 0,
      l = 0,
      colours = {}, -- "W"/"B" per played game, in game order
      rounds = {}, -- per round: { opponent = name | nil, score = points, played = games }
      byes = 0,
    }
  end
  local met = {}
  local last_round = 0
  local games = {}
  for _, g in ipairs(state.games) do
    table.insert(games, g)
  end
  table.sort(games, function(a, b)
    return a.index < b.index
  end)
  local in_round = {}
  for _, g in ipairs(games) do
    last_round = math.max(last_round, g.round)
    met[pair_key(g.white, g.black)] = true
    in_round[g.round] = in_round[g.round] or {}
    in_round[g.round][g.white] = true
    in_round[g.round][g.black] = true
    local ws, bs = points_of(g.result)
    for _, side in ipairs({ { g.white, g.black, ws, "W" }, { g.black, g.white, bs, "B" } }) do
      local me, them, score, colour = side[1], side[2], side[3], side[4]
      local entry = p[me].rounds[g.round]
      if not entry then
        entry = { opponent = them, score = 0, played = 0, games = {} }
        p[me].rounds[g.round] = entry
      end
      if score then
        entry.score = entry.score + score
        entry.played = entry.played + 1
        table.insert(entry.games, score)
        p[me].points = p[me].points + score
        table.insert(p[me].colours, colour)
        if score == 1 then
          p[me].w = p[me].w + 1
        elseif score == 0 then
          p[me].l = p[me].l + 1
        else
          p[me].d = p[me].d + 1
        end
      end
    end
  end
  -- A player absent from a round that was paired had the bye.
  for r = 1, last_round do
    for _, name in ipairs(names) do
      if not (in_round[r] or {})[name] then
        p[name].rounds[r] = { bye = true, score = state.options.bye_points, played = 0, games = {} }
        p[name].points = p[name].points + state.options.bye_points
        p[name].byes = p[name].byes + 1
      end
    end
  end
  return { names = names, players = p, met = met, last_round = last_round }
end

-- Ranked for pairing: points, then seed.
local function ranked(h, names)
  local list = {}
  for _, name in ipairs(names) do
    table.insert(list, h.players[name])
  end
  table.sort(list, function(a, b)
    if a.points ~= b.points then
      return a.points > b.points
    end
    return a.seed < b.seed
  end)
  return list
end

-- Would `colour` break a colour rule for `p`: three in a row, or two more of one colour?
local function colour_breaks(p, colour)
  local c = p.colours
  local n = #c
  if n >= 2 and c[n] == colour and c[n - 1] == colour then
    return true
  end
  local diff = 0
  for _, x in ipairs(c) do
    diff = diff + (x == "W" and 1 or -1)
  end
  diff = diff + (colour == "W" and 1 or -1)
  return math.abs(diff) >= 2
end

-- `colour_breaks`, worked out once per player and hook call: the searches ask it very often.
local function breaks(p, colour)
  if not p.breaks then
    p.breaks = { W = colour_breaks(p, "W"), B = colour_breaks(p, "B") }
  end
  return p.breaks[colour]
end

-- A player's colour preference and its strength: 3 when the other colour would break a rule,
-- 2 when it has had more of one colour, 1 to alternate, 0 (no preference) before its first game.
local function colour_preference(p)
  local diff = 0
  for _, x in ipairs(p.colours) do
    diff = diff + (x == "W" and 1 or -1)
  end
  local want
  if diff < 0 then
    want = "W"
  elseif diff > 0 then
    want = "B"
  elseif #p.colours > 0 then
    want = p.colours[#p.colours] == "W" and "B" or "W"
  else
    return nil, 0
  end
  local other = want == "W" and "B" or "W"
  if breaks(p, other) then
    return want, 3
  end
  return want, diff ~= 0 and 2 or 1
end

-- `colour_preference`, worked out once per player and hook call.
local function preference(p)
  if not p.strength then
    p.want, p.strength = colour_preference(p)
  end
  return p.want, p.strength
end

-- Can `a` and `b` meet with neither breaking a colour rule?
local function colours_fit(a, b)
  return (not breaks(a, "W") and not breaks(b, "B")) or (not breaks(a, "B") and not breaks(b, "W"))
end

-- Whether `a` (ranked above `b`) gets White.
local function a_gets_white(a, b, board, seed)
  local a_white_ok = not breaks(a, "W") and not breaks(b, "B")
  local a_black_ok = not breaks(a, "B") and not breaks(b, "W")
  if a_white_ok ~= a_black_ok then
    return a_white_ok
  end
  local wa, sa = preference(a)
  local wb, sb = preference(b)
  if wa == nil and wb == nil then
    -- First game for both: the higher-ranked takes White on odd boards (Black when the
    -- tournament seed is odd), alternating down the boards.
    return (board + seed) % 2 == 1
  end
  if wa ~= wb then
    if wa == nil then
      return wb == "B"
    end
    return wa == "W"
  end
  if sa ~= sb then
    if sa > sb then
      return wa == "W"
    end
    return wb ~= "W"
  end
  -- Same preference, same strength: alternate from the last game they had different colours.
  local ca, cb = a.colours, b.colours
  local i, j = #ca, #cb
  while i >= 1 and j >= 1 do
    if ca[i] ~= cb[j] then
      return ca[i] == "B"
    end
    i, j = i - 1, j - 1
  end
  return wa == "W"
end

-- Candidates for `remaining[1]` in order of preference: its own score group, the bottom half
-- from its Dutch opposite down, then the top half upwards; then lower groups by rank. Within
-- the group, partners whose colour preferences do not clash come first.
local function candidates(remaining, h, strict)
  local p = remaining[1]
  local group, lower = {}, {}
  for i = 2, #remaining do
    local q = remaining[i]
    if q.points == p.points then
      table.insert(group, q)
    else
      table.insert(lower, q)
    end
  end
  local m = #group + 1 -- with p
  local ideal = m // 2 -- index into `group` of p's opposite in the bottom half
  local order = {}
  for i = math.max(ideal, 1), #group do
    table.insert(order, group[i])
  end
  for i = ideal - 1, 1, -1 do
    table.insert(order, group[i])
  end
  local fitting, clashing = {}, {}
  local want_p = preference(p)
  for _, q in ipairs(order) do
    local want_q = preference(q)
    if want_p ~= nil and want_p == want_q then
      table.insert(clashing, q)
    else
      table.insert(fitting, q)
    end
  end
  local out = {}
  for _, list in ipairs({ fitting, clashing, lower }) do
    for _, q in ipairs(list) do
      if not h.met[pair_key(p.name, q.name)] and (not strict or colours_fit(p, q)) then
        table.insert(out, q)
      end
    end
  end
  return out
end

-- How many rounds a pairing looks ahead, and the nodes all of its searches together may visit
-- before it gives up looking ahead (and pairs the round alone), which keeps a hook call far
-- inside its instruction limit whatever the field.
local LOOKAHEAD_ROUNDS = 3
local LOOKAHEAD_NODES = 20000
local lookahead_left = nil -- nodes left while a look-ahead runs, else nil

-- A pairing of every player of `pool` (ranked), or nil when none exists under these rules. With
-- `accept`, a complete pairing it refuses is passed over and the search goes on (such a search
-- cannot remember unpairable subsets: whether one is refused depends on the rest). During a
-- look-ahead every search counts its nodes against `lookahead_left` and fails when it runs out.
local function pair_all(pool, h, strict, accept)
  local unpairable = {}
  local function key(remaining)
    local parts = {}
    for i, q in ipairs(remaining) do
      parts[i] = q.seed
    end
    return table.concat(parts, ",")
  end
  local function search(remaining, chosen)
    if #remaining == 0 then
      return not accept or accept(chosen)
    end
    if lookahead_left then
      lookahead_left = lookahead_left - 1
      if lookahead_left < 0 then
        return false
      end
    end
    local k
    if not accept then
      k = key(remaining)
      if unpairable[k] then
        return false
      end
    end
    for _, q in ipairs(candidates(remaining, h, strict)) do
      local rest = {}
      for i = 2, #remaining do
        if remaining[i] ~= q then
          table.insert(rest, remaining[i])
        end
      end
      table.insert(chosen, { remaining[1], q })
      if search(rest, chosen) then
        return true
      end
      table.remove(chosen)
    end
    if k then
      unpairable[k] = true
    end
    return false
  end
  local chosen = {}
  if search(pool, chosen) then
    return chosen
  end
  return nil
end

-- The pairs of the next round and the player with the bye (or nil), or nil when none exists.
-- `accept(pairs, bye)`, when given, may refuse a pairing (the look-ahead); `any_colours` skips
-- the search that keeps the colour rules (a look-ahead only asks whether a pairing exists).
local function pair_round(h, accept, any_colours)
  local list = ranked(h, h.names)
  local passes = any_colours and { false } or { true, false }
  local function attempt(pool, bye)
    local check = accept and function(pairs)
      return accept(pairs, bye)
    end
    for _, strict in ipairs(passes) do
      local pairs = pair_all(pool, h, strict, check)
      if pairs then
        return pairs
      end
    end
  end
  if #list % 2 == 0 then
    return attempt(list, nil), nil
  end
  -- The bye: the lowest-ranked player without one whose absence leaves a pairing.
  for _, without_bye in ipairs({ true, false }) do
    for i = #list, 1, -1 do
      local p = list[i]
      if not without_bye or p.byes == 0 then
        local pool = {}
        for j, q in ipairs(list) do
          if j ~= i then
            table.insert(pool, q)
          end
        end
        local pairs = attempt(pool, p)
        if pairs then
          return pairs, p
        end
      end
    end
  end
  return nil
end

-- Whether the `depth` rounds after this one (these pairs, this bye) can still be paired without
-- a repeat: pairing greedily round by round can corner itself when the rounds are more than half
-- the field (six players: three rounds can leave two triangles of players who have all met).
local function leaves_a_pairing(h, depth)
  return function(pairs, bye)
    local met = setmetatable({}, { __index = h.met })
    for _, pair in ipairs(pairs) do
      met[pair_key(pair[1].name, pair[2].name)] = true
    end
    if bye then
      bye.byes = bye.byes + 1
    end
    local after = { names = h.names, players = h.players, met = met }
    local next_pairs = pair_round(after, depth > 1 and leaves_a_pairing(after, depth - 1) or nil, true)
    if bye then
      bye.byes = bye.byes - 1
    end
    return next_pairs ~= nil
  end
end

function M.pairings(state)
  for _, g in ipairs(state.games) do
    if not g.result then
      return {} -- the next round is paired on this round's results
    end
  end
  local h = history(state)
  local total = rounds_of(state.options, #state.players)
  if h.last_round >= total then
    return nil
  end
  local round = h.last_round + 1
  -- The bye is whoever has no game in the round: nothing else records it.
  local pairs
  if round < total and total > #state.players // 2 then
    -- More rounds than half the field: only a pairing that leaves the next rounds pairable.
    lookahead_left = LOOKAHEAD_NODES
    pairs = pair_round(h, leaves_a_pairing(h, math.min(total - round, LOOKAHEAD_ROUNDS)))
    lookahead_left = nil
  end
  if not pairs then
    pairs = pair_round(h)
  end
  if not pairs then
    error(string.format("swiss: round %d: no pairing without a repeat exists for these players", round), 0)
  end
  local opening = nil
  if state.openings > 0 then
    opening = (round - 1) % state.openings + 1
  end
  local games = {}
  for board, pair in ipairs(pairs) do
    local a, b = pair[1], pair[2]
    local white, black = b.name, a.name
    if a_gets_white(a, b, board, state.seed) then
      white, black = a.name, b.name
    end
    table.insert(games, { white = white, black = black, round = round, opening = opening })
    if state.options.games_per_pairing == 2 then
      table.insert(games, { white = black, black = white, round = round, opening = opening })
    end
  end
  return games
end

-- Tie-breaks of every player: Buchholz (the sum of the points of the opponents met, once per
-- round), Buchholz cut-1 (without the least of those, a round without an opponent counting 0)
-- and Sonneborn-Berger (per game, the opponent's points times the points scored against it).
local function tiebreaks(h)
  for _, name in ipairs(h.names) do
    local p = h.players[name]
    local buchholz, least, sb = 0, nil, 0
    for r = 1, h.last_round do
      local entry = p.rounds[r]
      local value = 0
      if entry and entry.opponent and entry.played > 0 then
        local opp = h.players[entry.opponent].points
        value = opp
        for _, score in ipairs(entry.games) do
          sb = sb + score * opp
        end
      end
      buchholz = buchholz + value
      if least == nil or value < least then
        least = value
      end
    end
    p.buchholz = buchholz
    p.cut1 = buchholz - (least or 0)
    p.sb = sb
  end
end

function M.standings(state)
  local h = history(state)
  tiebreaks(h)
  local list = ranked(h, h.names)
  local function key(p)
    return { p.points, p.cut1, p.buchholz, p.sb }
  end
  -- 1 when `a` ranks above `b`, -1 below, 0 level on points and every tie-break.
  local function compare(a, b)
    local ka, kb = key(a), key(b)
    for i = 1, #ka do
      if ka[i] ~= kb[i] then
        return ka[i] > kb[i] and 1 or -1
      end
    end
    return 0
  end
  table.sort(list, function(a, b)
    local c = compare(a, b)
    if c ~= 0 then
      return c > 0
    end
    return a.seed < b.seed
  end)
  local rows = {}
  local rank = 0
  for i, p in ipairs(list) do
    local prev = list[i - 1]
    if not prev or compare(prev, p) ~= 0 then
      rank = i
    end
    local colours = {}
    local c = 1
    for r = 1, h.last_round do
      local entry = p.rounds[r]
      if entry and entry.bye then
        table.insert(colours, "-")
      elseif not entry or entry.played == 0 then
        table.insert(colours, "*") -- every game of the round void
      else
        table.insert(colours, table.concat(p.colours, "", c, c + (entry and entry.played or 0) - 1))
        c = c + (entry and entry.played or 0)
      end
    end
    table.insert(rows, {
      rank,
      p.name,
      p.seed,
      p.points + 0.0,
      p.w + p.d + p.l,
      p.w,
      p.d,
      p.l,
      p.buchholz + 0.0,
      p.cut1 + 0.0,
      p.sb + 0.0,
      table.concat(colours, " "),
    })
  end
  local total = rounds_of(state.options, #state.players)
  return {
    {
      title = "standings (Swiss)",
      columns = { "#", "player", "seed", "points", "games", "W", "D", "L", "Buchholz", "Buchholz cut-1", "Sonneborn-Berger", "colours" },
      decimals = { points = 1, Buchholz = 1, ["Buchholz cut-1"] = 1, ["Sonneborn-Berger"] = 2 },
      rows = rows,
      notes = {
        string.format(
          "after %d of %d rounds; a bye scores %s; ties broken by Buchholz cut-1, Buchholz, Sonneborn-Berger, then seed",
          h.last_round,
          total,
          tostring(state.options.bye_points)
        ),
        "colours by round: W white, B black, - bye, * void; void games count in no other column",
      },
    },
  }
end

return M
