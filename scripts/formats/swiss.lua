-- Swiss: a fixed number of rounds, each paired by score as the FIDE Dutch system does it in
-- spirit, a round at a time once the round before has finished.
--
--   format = "swiss",
--   format_options = { rounds = 5, games_per_pairing = 1, bye_points = 1, seeding = "order" },
--
-- Pairing: the FIDE Dutch system (FIDE Handbook C.04.3, the 2025 rules), computed in Rust by
-- `arena.pairing.dutch` exactly as bbpPairings pairs it. Pairing numbers are the seeds (script
-- order, or `anchor_elo` with `seeding = "rating"`). Two players never meet twice; no two players
-- with the same absolute colour preference meet (except a top scorer in the last round); each
-- score bracket is paired top half against bottom half with the fewest floaters, the quality
-- criteria in their order (colour preferences, then repeated floats of the last two rounds); the
-- pairing-allocated bye goes to the lowest-ranked player of the lowest score who has not had one
-- and scores `bye_points`. Colours follow the Dutch allocation rules; with no preference on
-- either side, the tournament seed picks the first board's colour (White when it is even) and the
-- boards alternate by pairing number. The Dutch system looks no further than the round it pairs:
-- a Swiss of nearly as many rounds as a round robin can reach a round that no pairing without a
-- repeat can complete. `arena check` refuses round counts where that is known to happen (see
-- `max_rounds`); should it happen all the same, the run stops with arena's "no legal pairing for
-- round N" error, and every game played so far is kept.
--
-- `games_per_pairing = 2` plays each pairing twice, once with each colour. A void game (`*`)
-- scores nothing for either player and counts in no colour history (in the tie-breaks, a round of
-- void games counts as unplayed: against a virtual opponent); it is not replayed. It is treated
-- as FIDE's rules treat a double forfeit: the game was never played, so its two players have not
-- met and may be paired again, and `arena export trf` writes it as one (`-` on both sides), so a
-- pairing program checks every round as arena paired it.
--
-- `standings(state)` returns the table: rank, points, W/D/L, Buchholz, Buchholz cut-1 and
-- Sonneborn-Berger (ties broken by cut-1, Buchholz, then Sonneborn-Berger; unplayed rounds
-- count against a virtual opponent as FIDE's tie-break regulations have it), and each player's
-- colours by round. `pairing_record(state)` gives the tournament as a pairing program reads
-- it, for `arena export trf`.
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

-- The most rounds `arena check` accepts. Count an odd field with the bye as one more player,
-- m = n rounded up to even: m - 1 rounds is the round robin, the most that could ever be paired
-- without a repeat. The Dutch system pairs one round at a time and looks no further, so long
-- before that a round can be left with no pairing that avoids every repeat and every clash of
-- absolute colour preferences. bbpPairings' own generator (`-g`, 300 random tournaments per size
-- and round count, 3 to 20 players) gets stuck in 4 to 25 % of tournaments at m - 2 rounds and
-- in 4 to 100 % at m - 1 (always for an even field); at m - 3, 3000 per size with 0, 30 and 60 %
-- draws, in none for 5 to 8 and 12 players and in 1 to 8 of 3000 for 9 to 24 players. So a Swiss
-- may have at most m - 3 rounds; a field of at most 4 (m = 4, whose 3-round round robin paired
-- in all 300 tries) may have 3. Within that limit a stuck round is rare, not ruled out: it stops
-- the run with a clear error (below), keeping the games played.
local function max_rounds(n)
  local m = n + n % 2
  if m <= 4 then
    return m - 1
  end
  return m - 3
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
        "`rounds = %d` is too many for %d players: a Swiss of more than %d rounds can reach a round that the Dutch system cannot pair (every pairing left repeats a game or breaks an absolute colour rule); play at most %d rounds, or a round robin",
        r,
        n,
        max_rounds(n),
        max_rounds(n)
      )
    )
  end
  local g = options.games_per_pairing
  if g ~= 1 and g ~= 2 then
    table.insert(problems, "`games_per_pairing` must be 1, or 2 to play both colours")
  end
  local b = options.bye_points
  if type(b) ~= "number" or b < 0 or b > 1 or math.abs(b * 10 - math.floor(b * 10 + 0.5)) > 1e-9 then
    table.insert(problems, "`bye_points` must be a number from 0 to 1 in tenths (0, 0.5, 1, ...)")
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
        entry.colour = entry.colour or colour -- the round's colour: its first scored game's
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

-- What `arena.pairing.dutch` needs: every player's rounds by pairing number (the seed) and the
-- points of a win and a draw (a round of two games is worth two points). A round whose games
-- were all void is unplayed, as after a double forfeit: its pair has not met.
local function dutch_input(h, state, total)
  local number = {}
  for i, name in ipairs(h.names) do
    number[name] = i
  end
  local players = {}
  for i, name in ipairs(h.names) do
    local rounds = {}
    for r = 1, h.last_round do
      local e = h.players[name].rounds[r]
      if e.bye then
        rounds[r] = { bye = true, points = e.score }
      elseif e.played > 0 then
        rounds[r] = { opponent = number[e.opponent], colour = e.colour == "W" and "white" or "black", points = e.score }
      else
        rounds[r] = { points = 0 } -- every game of the round void: no game played
      end
    end
    players[i] = { rounds = rounds }
  end
  local per_round = state.options.games_per_pairing
  return {
    players = players,
    rounds = total,
    initial_colour = state.seed % 2 == 0 and "white" or "black",
    points = { win = per_round, draw = per_round / 2 },
  }
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
  local result, stuck = arena.pairing.dutch(dutch_input(h, state, total))
  if not result then
    -- No legal pairing (bbpPairings: "no valid pairing exists"): the tournament stops here, the
    -- rounds played stand.
    return { no_pairing = { round = round, reason = string.format("swiss, round %d of %d: %s", round, total, stuck) } }
  end
  local opening = nil
  if state.openings > 0 then
    opening = (round - 1) % state.openings + 1
  end
  local games = {}
  for _, pair in ipairs(result.pairs) do -- in board order
    local white, black = h.names[pair.white], h.names[pair.black]
    table.insert(games, { white = white, black = black, round = round, opening = opening })
    if state.options.games_per_pairing == 2 then
      table.insert(games, { white = black, black = white, round = round, opening = opening })
    end
  end
  return games
end

-- The tournament as a Swiss pairing program reads it, for `arena export trf`: the input of
-- `arena.pairing.dutch` with the players' names and ratings by pairing number.
function M.pairing_record(state)
  local h = history(state)
  local record = dutch_input(h, state, rounds_of(state.options, #state.players))
  record.names = h.names
  -- The void games of rounds in which their players played nothing else: paired, but unplayed.
  record.unplayed = {}
  local number = {}
  for i, name in ipairs(h.names) do
    number[name] = i
  end
  local listed = {}
  for _, g in ipairs(state.games) do
    local entry = h.players[g.white].rounds[g.round]
    local key = g.round .. "\0" .. pair_key(g.white, g.black)
    if g.result == "*" and entry and not entry.bye and entry.played == 0 and not listed[key] then
      listed[key] = true
      table.insert(record.unplayed, { round = g.round, white = number[g.white], black = number[g.black] })
    end
  end
  record.ratings = {}
  for i, name in ipairs(h.names) do
    record.ratings[i] = (state.ratings or {})[name] -- nil for an unrated player
  end
  return record
end

-- Tie-breaks of every player, with unplayed rounds as FIDE's tie-break regulations (2009-2022,
-- "virtual opponent") treat them: Buchholz (the sum of the opponents' points, once per round),
-- Buchholz cut-1 (without the least of those) and Sonneborn-Berger (per game, the points scored
-- times the opponent's points). An opponent's points count each of its own unplayed rounds (a
-- bye, a void round) as a draw. A round the player did not play (its bye, a void round) counts
-- as played against a virtual opponent who had the player's points before that round, took
-- from the round what the player did not, and drew every later round: SPR + (1 - SfPR) +
-- 0.5 * (n - R) points after the n rounds played (per game of a pairing with two games).
local function tiebreaks(h, per_round)
  local adjusted = {}
  for _, name in ipairs(h.names) do
    local p = h.players[name]
    local total = 0
    for r = 1, h.last_round do
      local entry = p.rounds[r]
      if entry and not entry.bye and entry.played > 0 then
        total = total + entry.score
      else
        total = total + per_round / 2
      end
    end
    adjusted[name] = total
  end
  for _, name in ipairs(h.names) do
    local p = h.players[name]
    local buchholz, least, sb = 0, nil, 0
    local before = 0 -- the player's points before round r
    for r = 1, h.last_round do
      local entry = p.rounds[r]
      local scored = entry and entry.score or 0
      local value
      if entry and not entry.bye and entry.played > 0 then
        value = adjusted[entry.opponent]
        for _, score in ipairs(entry.games) do
          sb = sb + score * value
        end
      else
        value = before + (per_round - scored) + per_round / 2 * (h.last_round - r)
        sb = sb + scored * value
      end
      buchholz = buchholz + value
      if least == nil or value < least then
        least = value
      end
      before = before + scored
    end
    p.buchholz = buchholz
    p.cut1 = buchholz - (least or 0)
    p.sb = sb
  end
end

function M.standings(state)
  local h = history(state)
  tiebreaks(h, state.options.games_per_pairing)
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
        "colours by round: W white, B black, - bye, * void; void games count in no other column but the tie-breaks (as unplayed rounds)",
      },
    },
  }
end

return M
