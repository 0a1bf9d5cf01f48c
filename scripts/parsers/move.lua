-- Reads the move out of a model's answer with a rule chosen by the mode's `parser` option:
--   "chessarena": the last fenced UCI move wins, a fenced SAN move is the fallback (as ChessArena);
--   "tolerant":   fences, <move> tags, then bare moves; upper-case promotions accepted;
--   a table {pick = "first"|"last", scope = "fenced"|"tagged"|"fenced_or_tagged"|"anywhere",
--            notations = {"uci", "san"}} for anything else.
local M = {}

--- Returns the move as a table {uci, san, matched}, or nil and an error {kind, message, candidate}.
function M.parse(text, ctx)
  return arena.board.find_move(text, ctx.fen, ctx.options.parser, ctx.variant)
end

local feedback = require("prompts.feedback").feedback

--- The `reply` hook of the single-request modes: the move, or a retry with feedback that says what
--- was wrong (the failure kind is the outcome counted in the statistics).
function M.decide(ctx, text)
  local move, err = M.parse(text, ctx)
  if move then
    return { move = move.uci, outcome = "move" }
  end
  return { retry = feedback(ctx, err), outcome = err.kind, candidate = err.candidate }
end

return M
