-- Bullet: the answer must be the fenced move alone. A reply with any other text is "forbidden
-- reasoning": the attempt is spent and counted, and the ply starts over from the original prompt
-- without feedback. Unparseable or illegal answers get feedback as in blitz.
--
-- Two rules decide what counts as reasoning, chosen by the `reasoning_rule` option:
--   "chessarena" (default): ChessArena's `judge_thinking` and its order. The move is read first;
--       a reply with no move gets feedback. Then the reply is judged: delete every UCI-shaped
--       move, split on ``` and call it reasoning if anything but whitespace is left. So SAN,
--       a fence language tag or <move> tags are reasoning, and `e2e4 d2d4` is not. Only then is
--       the move checked: unreadable (`e7e8Q`, SAN python-chess cannot convert) or illegal moves
--       get feedback. With the "chessarena" parser this is their code's behaviour exactly.
--   "arena": arena's own rule. The move is read and checked first (feedback when it fails);
--       then the reply may hold nothing but one move, UCI or SAN, in a fence (a language tag
--       allowed), in <move> tags or bare; a second move, a full stop or any word is reasoning.
-- Either rule sees the answer only: reasoning the provider returned apart, or inline <think>
-- blocks, were split off before the mode is called.
local prompts = require("prompts.bullet")
local parser = require("parsers.move")
local grammar = require("parsers.grammar")

local M = {}

--- The module holding this mode's words: what a player's `prompt = "..."` stands in for.
M.prompt_module = "prompts.bullet"

M.defaults = {
  legal_moves = true,
  history = 10,
  notation = "uci",
  max_attempts = 5,
  parser = "chessarena",
  reasoning_rule = "chessarena", -- "chessarena" or "arena" (see above)
  grammar = false, -- constrain answers to the legal moves (llama.cpp only; see parsers/grammar.lua)
}

--- The values a text option may take (a parser option may also be a table: see parsers/move.lua).
M.choices = {
  notation = { "uci", "san" },
  parser = { "chessarena", "chessarena_any", "tolerant" },
  reasoning_rule = { "chessarena", "arena" },
}

local RULES = { chessarena = true, arena = true }

-- Misspelled option values fail when the script is checked, not in the middle of a game.
local function check(o)
  if not RULES[o.reasoning_rule] then
    error("option `reasoning_rule` cannot be `" .. tostring(o.reasoning_rule)
      .. "` (expected chessarena or arena)")
  end
  if o.reasoning_rule == "chessarena" and o.notation == "san" then
    error("option `notation = \"san\"` needs `reasoning_rule = \"arena\"`: ChessArena's rule "
      .. "counts every SAN answer as reasoning")
  end
end

function M.start(ctx)
  check(ctx.options)
  return grammar.wrap(ctx, {
    { role = "system", content = prompts.system(ctx) },
    { role = "user", content = prompts.position(ctx) },
  })
end

local function reasoned()
  return { retry = true, reset = true, outcome = "forbidden_reasoning" }
end

function M.reply(ctx, text)
  local o = ctx.options
  check(o)
  local move, err = parser.parse(text, ctx)
  if o.reasoning_rule == "chessarena" then
    if not move and err.kind == "no_move_found" then
      return { retry = prompts.feedback(ctx, err), outcome = err.kind }
    end
    if arena.board.forbidden_reasoning(text, "chessarena") then
      return reasoned()
    end
  end
  if not move then
    return { retry = prompts.feedback(ctx, err), outcome = err.kind, candidate = err.candidate }
  end
  if o.reasoning_rule == "arena" and arena.board.forbidden_reasoning(text, "arena") then
    return reasoned()
  end
  return { move = move.uci, outcome = "move" }
end

return M
