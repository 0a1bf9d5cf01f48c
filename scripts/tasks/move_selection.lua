-- Move selection: pick the best move in a position. Scored by legality, membership in the
-- engine's top moves, and the move's Win% against the position's average (Rust side).
local common = require("tasks.common")

local M = {}

M.defaults = {
  legal_moves = true, -- list the legal moves in the prompt
  -- "chessarena": last fenced UCI move, else last fenced SAN move (as ChessArena);
  -- "chessarena_any": the same, also reading unfenced moves (their --parse_any_move);
  -- "tolerant": the arena's own extraction (fences, tags, then bare moves).
  parser = "chessarena",
}

function M.prompt(item, ctx)
  local side = item.fen:match("^%S+%s+(%S)") == "b" and "Black" or "White"
  local lines = {
    "Position (FEN): " .. item.fen,
    side .. " is to move.",
  }
  if ctx.options.legal_moves then
    lines[#lines + 1] = "Legal moves (UCI): " .. common.list(item.legal_moves)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Which move is strongest here? "
    .. common.answer_style(ctx, "the single move in UCI, such as ```e2e4```")
  return {
    { role = "system", content = common.system() },
    { role = "user", content = table.concat(lines, "\n") },
  }
end

function M.parse(reply, item, ctx)
  reply = common.read_text(reply, ctx)
  local parser = ctx.options.parser
  -- A bullet reply is judged before it is read, as ChessArena's move_choose_metric does; with
  -- ChessArena's parsers by their judge_thinking, with the tolerant one by arena's rule.
  local rule = parser == "tolerant" and "arena" or "chessarena"
  if ctx.mode == "bullet" and arena.board.forbidden_reasoning(reply, rule) then
    return nil, { kind = "forbidden_reasoning", message = "a bullet answer must hold the move alone" }
  end
  local move
  if parser == "tolerant" then
    move = arena.eval.tolerant_move(reply, item.fen)
  else
    move = arena.eval.chessarena_move(reply, item.fen, parser == "chessarena_any")
  end
  if move == nil then
    return nil, { kind = "no_move_found", message = "no move found in the reply" }
  end
  return move
end

return M
