-- Coach: a worked play mode for the book's page on the hook contract
-- (docs/src/guide/hook-contract.md). The model answers with a move in <move> tags; after a bad
-- answer it is told what was wrong, how many attempts it has left and, if the player's options
-- say so, the legal moves. Every line of the contract is used once.
local M = {}

-- The options a player may set (`options = { ... }`), with their defaults and so their types.
-- arena enforces `max_attempts` itself: failed answers per ply before the game is lost.
M.defaults = {
  max_attempts = 3,
  show_legal = "on_retry", -- when the legal moves are listed: "always", "on_retry" or "never"
}

-- The values a text option may take; `arena check` refuses any other.
M.choices = { show_legal = { "always", "on_retry", "never" } }

-- How the game ends when the attempts of one ply are used up.
M.exhausted = "forfeit"

-- The rule that reads the move: the last <move> tag, in UCI or SAN.
local RULE = { pick = "last", scope = "tagged", notations = { "uci", "san" } }

-- Opens the ply's dialog (and opens it again after a `reset`).
function M.start(ctx)
  local lines = {
    "Position (FEN): " .. ctx.fen,
    "You play " .. ctx.side .. "; this is move " .. ctx.move_number .. ".",
  }
  if ctx.last_move then
    table.insert(lines, "Your opponent just played " .. ctx.last_move .. ".")
  end
  if ctx.options.show_legal == "always" then
    table.insert(lines, "Legal moves: " .. table.concat(ctx.legal_uci, " "))
  end
  table.insert(lines, "Answer with your move inside tags, like <move>e2e4</move>.")
  return {
    { role = "system", content = "You are a strong chess player. Keep your answers short." },
    { role = "user", content = table.concat(lines, "\n") },
  }
end

-- Reads one reply: `text` is the model's answer, also the last message of `ctx.dialog`.
function M.reply(ctx, text)
  local move, err = arena.board.find_move(text, ctx.fen, RULE, ctx.variant)
  if move then
    return { move = move.uci, outcome = "move" }
  end
  local left = ctx.max_attempts - ctx.attempt
  local feedback = err.message .. ". You have " .. left .. " more attempt(s)."
  if ctx.options.show_legal == "on_retry" then
    feedback = feedback .. " Legal moves: " .. table.concat(ctx.legal_uci, " ")
  end
  -- The feedback becomes the next user message; the failure kind is counted as the outcome.
  return { retry = feedback, outcome = err.kind, candidate = err.candidate }
end

return M
