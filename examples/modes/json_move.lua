-- A custom play mode: the model answers with a JSON object. Shows the whole contract of a mode:
-- `defaults` (its options), `start` (the messages) and `reply` (the decision).
local parser = require("parsers.json_move")

local M = {}

M.defaults = {
  legal_moves = true,
  max_attempts = 3,
}

function M.start(ctx)
  local user = arena.template("Position (FEN): {{fen}}\nYou play {{side}}.", ctx)
  if ctx.options.legal_moves then
    user = user .. "\nLegal moves: " .. table.concat(ctx.legal_uci, " ")
  end
  return {
    { role = "system", content = 'Answer with one JSON object: {"move": "<uci>", "why": "<one sentence>"}.' },
    { role = "user", content = user },
  }
end

function M.reply(ctx, text)
  local move, err = parser.parse(text, ctx)
  if move then
    return { move = move.uci, outcome = "move" }
  end
  return { retry = err.message .. ". Answer with the JSON object only.", outcome = err.kind }
end

return M
