-- Board reconstruction: after a list of moves from a known position, state the resulting FEN.
-- Scored by exact match (ChessArena's criterion) and field by field (Rust side).
local common = require("tasks.common")

local M = {}

M.defaults = {
  notation = "san", -- how the moves are listed: "san" or "uci"
  -- "chessarena": first FEN in the first block holding one, else the first in the text;
  -- "tolerant": the last FEN in the last block holding one, else the last in the text.
  parser = "tolerant",
}

local START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

function M.prompt(item, ctx)
  local moves = ctx.options.notation == "uci" and item.moves_uci or item.moves_san
  local numbered = {}
  for i, m in ipairs(moves) do
    if i % 2 == 1 then
      numbered[#numbered + 1] = ((i + 1) // 2) .. ". " .. m
    else
      numbered[#numbered + 1] = m
    end
  end
  local start = item.start_fen or START
  local lines = {
    "A game starts from this position (FEN): " .. start,
    "These moves are played (" .. string.upper(ctx.options.notation) .. "): " .. table.concat(numbered, " "),
    "",
    "What is the position now? Give the complete FEN with all six fields (placement, side to move,",
    "castling rights, en passant square, halfmove clock, fullmove number).",
    common.answer_style(ctx, "the FEN"),
  }
  return {
    { role = "system", content = common.system() },
    { role = "user", content = table.concat(lines, "\n") },
  }
end

function M.parse(reply, item, ctx)
  reply = common.read_text(reply, ctx)
  local fen = arena.eval.extract_fen(reply, ctx.options.parser)
  if fen == nil then
    return nil, { kind = "no_fen", message = "no FEN found in the reply" }
  end
  return { fen = fen }
end

return M
