-- Bullet: the answer must be the fenced move alone. A reply with any other text is "forbidden
-- reasoning": the attempt is spent and counted, and the ply starts over from the original prompt
-- without feedback (ChessArena's rule). Unparseable or illegal answers get feedback as in blitz.
local prompts = require("prompts.bullet")
local parser = require("parsers.move")
local grammar = require("parsers.grammar")

local M = {}

M.defaults = {
  legal_moves = true,
  history = 10,
  notation = "uci",
  max_attempts = 5,
  parser = "chessarena",
  grammar = false, -- constrain answers to the legal moves (llama.cpp only; see parsers/grammar.lua)
}

function M.start(ctx)
  return grammar.wrap(ctx, {
    { role = "system", content = prompts.system(ctx) },
    { role = "user", content = prompts.position(ctx) },
  })
end

function M.reply(ctx, text)
  local move, err = parser.parse(text, ctx)
  if not move then
    return { retry = prompts.feedback(ctx, err), outcome = err.kind, candidate = err.candidate }
  end
  if arena.board.forbidden_reasoning(text) then
    return { retry = true, reset = true, outcome = "forbidden_reasoning" }
  end
  return { move = move.uci, outcome = "move" }
end

return M
