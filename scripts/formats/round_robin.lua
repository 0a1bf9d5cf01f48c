-- Round robin on the FIDE Berger tables (FIDE Handbook C.05, Annex 1): every pair of players
-- meets `games_per_pair` times, in cycles. Returns the whole schedule on the first call.
--
-- Players take the tables' numbers in script order (1 is the first listed). With an odd number
-- of players the tables of the next even size are used and the highest number is the bye: its
-- games are not played. A cycle is the table's n - 1 rounds, in the table's order, board by
-- board. Colours follow the table in odd cycles and are reversed in even ones, so a double
-- round robin gives every pair one game with each colour, and over any number of cycles no
-- player has more than one White more than Blacks. Each opening is played by a pair once with
-- each colour: cycles 1 and 2 play opening 1, cycles 3 and 4 opening 2, and so on.
--
-- As the Handbook recommends for a double round robin, an odd cycle followed by another plays
-- the table's last two rounds in the other order (round n - 1 before round n - 2), so that no
-- player has three games in a row with one colour where the cycles meet. Each pair of cycles is
-- such a double round robin; where two of them meet (cycles 2 and 3) three in a row can happen.
--
-- The table of round r (n even, m = n - 1): board 1 pairs player n with the player p such that
-- 2p = r + 1 (mod m), player n Black in odd rounds and White in even ones; board k (2 to n/2)
-- pairs White ((k - 1 + (r - 1) n/2) mod m) + 1 with Black ((n - k + (r - 1) n/2) mod m) + 1.
-- That is round 1's boards (1-n, 2-(n-1), ...) with every number but n moved on by n/2 each
-- round, as the Handbook builds its tables.
--
-- With `format_options = { target = 50 }` a model stops playing once its 95% interval against the
-- players with an `anchor_elo` is at most +/- 50 Elo (a freeze rule: the placement format's stop,
-- `arena.rating.frozen`): the schedule is then played round by round, and a round's games that
-- involve a frozen model, or no model at all (two anchors), are left out.
local M = {}

-- The format options; arena refuses any other key when the script is checked.
M.defaults = { target = false }

function M.check(options, field)
  return require("formats.lib.freeze").problems(options, field)
end

-- The games of one Berger table for `n` (even) numbers: { round, white, black } in order.
local function berger(n)
  local m = n - 1
  local half = n // 2
  local games = {}
  for r = 1, m do
    local shift = (r - 1) * half
    local p = (shift % m) + 1 -- player n's opponent: board 1 of round 1 moved on
    if r % 2 == 1 then
      table.insert(games, { round = r, white = p, black = n })
    else
      table.insert(games, { round = r, white = n, black = p })
    end
    for k = 2, half do
      table.insert(games, {
        round = r,
        white = ((k - 1 + shift) % m) + 1,
        black = ((n - k + shift) % m) + 1,
      })
    end
  end
  return games
end

-- The whole schedule, in order.
local function schedule(state)
  local players = state.players
  local games = {}
  if #players < 2 then
    return games
  end
  local n = #players + #players % 2 -- an odd field plays on the next table, number n the bye
  local rounds = n - 1
  local by_round = {}
  for r = 1, rounds do
    by_round[r] = {}
  end
  for _, g in ipairs(berger(n)) do
    table.insert(by_round[g.round], g)
  end
  for cycle = 1, state.games_per_pair do
    local opening = nil
    if state.openings > 0 then
      opening = ((cycle - 1) // 2) % state.openings + 1
    end
    -- Whether the table's last two rounds trade places in this cycle (see above).
    local swap = cycle % 2 == 1 and cycle < state.games_per_pair and rounds >= 3
    for round = 1, rounds do
      local from_table = round
      if swap and round >= rounds - 1 then
        from_table = 2 * rounds - 1 - round -- round n - 1 is played n - 2nd, and n - 2 last
      end
      for _, g in ipairs(by_round[from_table]) do
        local white, black = players[g.white], players[g.black]
        if white and black then -- a game against the bye is not played
          if cycle % 2 == 0 then
            white, black = black, white
          end
          table.insert(games, {
            white = white,
            black = black,
            round = (cycle - 1) * rounds + round,
            opening = opening,
          })
        end
      end
    end
  end
  return games
end

function M.pairings(state)
  if not state.options.target then
    if #state.games > 0 then
      return nil -- the schedule is already stored: nothing more to add
    end
    return schedule(state)
  end
  return require("formats.lib.freeze").next_round(state, schedule(state))
end

return M
