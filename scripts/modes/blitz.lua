-- Blitz: the model may reason freely, then ends its answer with the move in a fenced block.
-- One request per attempt; after a failed attempt the model is told what was wrong and tries
-- again, up to `max_attempts`, then forfeits. (ChessArena's blitz, in our own words.)
local prompts = require("prompts.blitz")
local parser = require("parsers.move")

local M = {}

--- Options a player may set with `options = {...}`.
M.defaults = {
  legal_moves = true, -- list the legal moves in the prompt
  history = 10, -- show the last N moves (0: none)
  notation = "uci", -- "uci" or "san": how moves are shown and expected
  board = "none", -- "none", "ascii" or "unicode": a diagram beside the FEN
  max_attempts = 5, -- failed answers allowed per move before forfeit
  parser = "chessarena", -- see parsers/move.lua
  -- Constrained decoding for servers that take a GBNF `grammar` (llama.cpp): the answer can only
  -- be one legal move in a fence. For demonstrations with tiny models; it measures nothing.
  grammar = false,
}

--- A GBNF grammar whose only sentences are the legal moves, fenced.
local function legal_move_grammar(ctx)
  local moves = ctx.options.notation == "san" and ctx.legal_san or ctx.legal_uci
  local alternatives = {}
  for i, move in ipairs(moves) do
    alternatives[i] = '"' .. move .. '"'
  end
  return 'root ::= "```\\n" (' .. table.concat(alternatives, " | ") .. ') "\\n```"'
end

function M.start(ctx)
  local messages = {
    { role = "system", content = prompts.system(ctx) },
    { role = "user", content = prompts.position(ctx) },
  }
  if ctx.options.grammar then
    return { messages = messages, request = { grammar = legal_move_grammar(ctx) } }
  end
  return messages
end

function M.reply(ctx, text)
  local move, err = parser.parse(text, ctx)
  if move then
    return { move = move.uci, outcome = "move" }
  end
  return { retry = prompts.feedback(ctx, err), outcome = err.kind }
end

return M
