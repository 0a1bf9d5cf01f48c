-- The words of the blindfold modes: the model never sees the board, only moves.
local P = {}
local chess960 = require("prompts.chess960")

local function notation_help(ctx)
  if ctx.options.notation == "san" then
    return "Moves are written in standard algebraic notation (SAN), such as Nf3, exd5 or O-O."
  end
  return "Moves are written in UCI notation: from-square then to-square, such as e2e4 or g8f6, "
    .. "with a promotion letter at the end (e7e8q)."
end

function P.system(ctx)
  local side = ctx.side == "white" and "White" or "Black"
  local lines = {
    "You play a game of blindfold chess as " .. side .. ", and you want to win.",
    "You will not be shown the board: follow the game from the moves alone and keep the position in your head.",
    notation_help(ctx),
  }
  chess960.add(lines, ctx, ctx.options.notation)
  table.insert(lines, "Think as much as you like, then end every answer with your move alone in a fenced block:")
  table.insert(lines, "```\n" .. (ctx.options.notation == "san" and "Nf3" or "g1f3") .. "\n```")
  return table.concat(lines, "\n")
end

local function legal_line(ctx)
  local legal = ctx.options.notation == "san" and ctx.legal_san or ctx.legal_uci
  return "Your legal moves: " .. table.concat(legal, " ")
end

--- The user turn of the multi-turn dialog for this ply.
function P.turn(ctx)
  local lines = {}
  local history = ctx.options.notation == "san" and ctx.history_san or ctx.history_uci
  if #history == 0 then
    table.insert(lines, "The game begins. Your move.")
  elseif #ctx.previous_dialog == 0 then
    -- The model's first turn after opening moves it never heard about: tell them all.
    table.insert(lines, "The moves so far: " .. table.concat(history, " ") .. ". Your move.")
  else
    table.insert(lines, "Your opponent played " .. history[#history] .. ". Your move.")
  end
  if ctx.options.legal_moves then
    table.insert(lines, legal_line(ctx))
  end
  return table.concat(lines, "\n")
end

--- The single-turn prompt: the whole move list every time.
function P.move_list(ctx)
  local history = ctx.options.notation == "san" and ctx.history_san or ctx.history_uci
  local lines = {}
  if #history == 0 then
    table.insert(lines, "The game begins. Your move.")
  else
    table.insert(lines, "The moves so far, from the start: " .. table.concat(history, " "))
  end
  if ctx.start_fen ~= "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" then
    table.insert(lines, 1, "The game started from this position (FEN): " .. ctx.start_fen)
  end
  if ctx.options.legal_moves then
    table.insert(lines, legal_line(ctx))
  end
  return table.concat(lines, "\n")
end

--- Removes the legal-move line from an earlier turn: the list is shown once, not accumulated.
function P.strip_legal_moves(text)
  return (text:gsub("\nYour legal moves: [^\n]*", ""))
end

P.feedback = require("prompts.feedback").feedback

return P
