-- ChessArena's competition, in arena: the local model in all four play modes, with and without the
-- legal moves, against Stockfish at two strengths and the random mover. The matchmaker picks each
-- next pair by Glicko-1 information until every RD is at most 100 or the game budget is spent.
-- Then: arena leaderboard --db chessarena.db --all --stats
local arena = require("arena")

local players = {
  arena.engine { name = "stockfish-skill0", options = { ["Skill Level"] = 0 }, limits = { nodes = 100 } },
  arena.engine { name = "stockfish-1350", options = { UCI_LimitStrength = true, UCI_Elo = 1350 }, limits = { movetime_ms = 50 } },
  arena.random { name = "random" },
}
for _, mode in ipairs { "bullet", "blitz", "standard", "blindfold" } do
  for _, legal in ipairs { true, false } do
    table.insert(players, arena.llm {
      name = ("smollm2_%s_%s"):format(mode, legal), mode = mode, options = { legal_moves = legal },
      base_url = "http://127.0.0.1:8765/v1", model = "smollm2-135m-instruct", max_tokens = 128, max_concurrency = 1,
    })
  end
end

return arena.tournament {
  name = "chessarena", format = "matchmaker", max_plies = 200, seed = 1,
  format_options = { target_rd = 100, max_games = 40 }, -- raise the budget for real ratings
  players = players,
}
