-- Blindfold: the model never sees the board. One conversation per player for the whole game: the
-- first turn says the game begins, each later turn gives the opponent's last move (and, optionally,
-- the legal moves, which are not kept in the history). Set `multi_turn = false` for the single-turn
-- variant, which sends the whole move list in one fresh prompt each time.
-- If a game starts from a position other than the initial one, the multi-turn dialog opens with its
-- FEN, since the moves alone could not describe it.
local prompts = require("prompts.blindfold")
local parser = require("parsers.move")
local grammar = require("parsers.grammar")

local M = {}

--- The module holding this mode's words: what a player's `prompt = "..."` stands in for.
M.prompt_module = "prompts.blindfold"

M.defaults = {
  legal_moves = false,
  notation = "uci",
  max_attempts = 5,
  parser = "chessarena",
  multi_turn = true,
  grammar = false, -- constrain answers to the legal moves (llama.cpp only; see parsers/grammar.lua)
  on_cut_off = "feedback", -- a reply cut at max_tokens before a move: "feedback" (as any reply without a move) or "retry_shorter" (ask for a much shorter answer)
}

--- The values a text option may take (a parser option may also be a table: see parsers/move.lua).
M.choices = {
  notation = { "uci", "san" },
  parser = { "chessarena", "chessarena_any", "tolerant" },
  on_cut_off = { "feedback", "retry_shorter" },
}

local INITIAL = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

function M.start(ctx)
  if not ctx.options.multi_turn then
    return grammar.wrap(ctx, {
      { role = "system", content = prompts.system(ctx) },
      { role = "user", content = prompts.move_list(ctx) },
    })
  end
  local messages = {}
  if #ctx.previous_dialog == 0 then
    table.insert(messages, { role = "system", content = prompts.system(ctx) })
    if ctx.start_fen ~= INITIAL then
      messages[1].content = messages[1].content .. "\nThe game starts from this position (FEN): " .. ctx.start_fen
    end
  else
    for _, m in ipairs(ctx.previous_dialog) do
      local content = m.content
      if m.role == "user" then
        content = prompts.strip_legal_moves(content)
      end
      table.insert(messages, { role = m.role, content = content })
    end
  end
  -- Moves the model has not heard about yet: the opponent's reply, and at the very first turn of
  -- Black, White's first move.
  table.insert(messages, { role = "user", content = prompts.turn(ctx) })
  return grammar.wrap(ctx, messages)
end

M.reply = parser.decide

return M
