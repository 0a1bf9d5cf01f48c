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

local words = require("prompts.feedback")
local feedback = words.feedback

--- The `reply` hook of the single-request modes: the move, or a retry with feedback that says what
--- was wrong (the failure kind is the outcome counted in the statistics). A reply cut off at the
--- token limit before a readable move (`ctx.finish_reason == "length"`) is the outcome `cut_off`;
--- with the option `on_cut_off = "retry_shorter"` its feedback asks for a much shorter answer.
function M.decide(ctx, text)
  local move, err = M.parse(text, ctx)
  if move then
    return { move = move.uci, outcome = "move" }
  end
  local cut = ctx.finish_reason == "length" and (err.kind == "no_move_found" or err.kind == "unparseable")
  if cut then
    local retry = ctx.options.on_cut_off == "retry_shorter" and words.shorter(ctx) or feedback(ctx, err)
    return { retry = retry, outcome = "cut_off", candidate = err.candidate }
  end
  return { retry = feedback(ctx, err), outcome = err.kind, candidate = err.candidate }
end

return M
