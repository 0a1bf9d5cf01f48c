-- Basic understanding: what stands on a square, and where can it go?
-- The answer is a JSON object {"piece": ..., "legal_moves": [...]}; the Rust side scores it
-- (piece match, precision, recall, F1) with the scoring the task names.
local common = require("tasks.common")

local M = {}

M.defaults = {
  -- "chessarena": only the last ```json block counts (ChessArena's reader);
  -- "tolerant": any fenced block holding an object, then a bare {...} in the text.
  parser = "chessarena",
}

function M.prompt(item, ctx)
  local side = item.fen:match("^%S+%s+(%S)") == "b" and "Black" or "White"
  local question = table.concat({
    "Position (FEN): " .. item.fen,
    side .. " is to move.",
    "Square: " .. item.square,
    "",
    "Which piece stands on " .. item.square .. ", and which legal moves does it have right now?",
    "Write the piece as its FEN letter (upper case for White, lower case for Black: K Q R B N P / k q r b n p),",
    "or null when the square is empty. List the moves in UCI. A piece of the side that is not to move",
    "has no legal moves now, so give an empty list for it.",
    common.answer_style(ctx, 'a JSON object such as {"piece": "N", "legal_moves": ["g1f3", "g1h3"]}')
      .. " Mark the block as ```json.",
  }, "\n")
  return {
    { role = "system", content = common.system() },
    { role = "user", content = question },
  }
end

function M.parse(reply, item, ctx)
  reply = common.read_text(reply, ctx)
  local answer = arena.eval.json_answer(reply, ctx.options.parser)
  if answer == nil then
    return nil, { kind = "no_json", message = "no JSON object found in the reply" }
  end
  return answer
end

return M
