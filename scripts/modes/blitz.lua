-- Blitz: the model may reason freely, then ends its answer with the move in a fenced block.
-- One request per attempt; after a failed attempt the model is told what was wrong and tries
-- again, up to `max_attempts`, then forfeits. (ChessArena's blitz, in our own words.)
local prompts = require("prompts.blitz")
local parser = require("parsers.move")
local grammar = require("parsers.grammar")

local M = {}

--- The module holding this mode's words: what a player's `prompt = "..."` stands in for.
M.prompt_module = "prompts.blitz"

--- Options a player may set with `options = {...}`.
M.defaults = {
  legal_moves = true, -- list the legal moves in the prompt
  history = 10, -- show the last N moves (0: none)
  notation = "uci", -- "uci" or "san": how moves are shown and expected
  board = "none", -- "none", "ascii", "unicode" or "image" (a PNG picture, for vision models): a diagram beside the FEN
  max_attempts = 5, -- failed answers allowed per move before forfeit
  parser = "chessarena", -- see parsers/move.lua
  grammar = false, -- constrain answers to the legal moves (llama.cpp only; see parsers/grammar.lua)
  on_cut_off = "feedback", -- a reply cut at max_tokens before a move: "feedback" (as any reply without a move) or "retry_shorter" (ask for a much shorter answer)
}

--- The values a text option may take (a parser option may also be a table: see parsers/move.lua).
M.choices = {
  notation = { "uci", "san" },
  board = { "none", "ascii", "unicode", "image" },
  parser = { "chessarena", "chessarena_any", "tolerant" },
  on_cut_off = { "feedback", "retry_shorter" },
}

function M.start(ctx)
  local messages = {
    { role = "system", content = prompts.system(ctx) },
    { role = "user", content = prompts.position(ctx), images = prompts.images(ctx) },
  }
  return grammar.wrap(ctx, messages)
end

M.reply = parser.decide

return M
