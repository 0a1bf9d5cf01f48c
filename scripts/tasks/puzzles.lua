-- Puzzles: find the winning line one move at a time. The opponent's replies come from the
-- solution; a reply without a legal move uses one of the attempts and is answered with feedback.
local common = require("tasks.common")

local M = {}

M.defaults = {
  legal_moves = false, -- list the legal moves in the prompt
  parser = "chessarena", -- a rule for arena.board.find_move: "chessarena", "tolerant" or a table
}

function M.prompt(item, ctx)
  local side = ctx.fen:match("^%S+%s+(%S)") == "b" and "Black" or "White"
  local lines = {
    "This is a chess puzzle: " .. side .. " to move has a winning continuation.",
    "Position (FEN): " .. ctx.fen,
    "Moves played since the puzzle began (UCI): " .. common.list(ctx.history),
  }
  if ctx.options.legal_moves then
    lines[#lines + 1] = "Legal moves (UCI): " .. common.list(ctx.legal_uci)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Find the best move. " .. common.answer_style(ctx, "the move in UCI, such as ```e2e4```")
  return {
    { role = "system", content = common.system() },
    { role = "user", content = table.concat(lines, "\n") },
  }
end

function M.parse(reply, item, ctx)
  reply = common.read_text(reply, ctx)
  local move, err = arena.board.find_move(reply, ctx.fen, ctx.options.parser)
  if move == nil then
    return nil, err
  end
  return { uci = move.uci }
end

function M.feedback(err, item, ctx)
  local left = ctx.max_attempts - ctx.attempt
  local what
  if err.kind == "illegal" then
    what = "That move is not legal in this position (" .. (err.message or "") .. ")."
  elseif err.kind == "ambiguous" then
    what = "That move is ambiguous: name it in UCI."
  else
    what = "I could not find a move in your answer."
  end
  return what .. " " .. left .. " attempt(s) left. Give one move in UCI inside a ``` fenced block."
end

return M
