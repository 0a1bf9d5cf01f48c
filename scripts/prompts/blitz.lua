-- The words of the blitz mode: what the model is told, and what it hears after a bad answer.
-- Edit this file while a tournament runs: games that start after the save use the new text.
local P = {}
local chess960 = require("prompts.chess960")

local function side_name(ctx)
  return ctx.side == "white" and "White" or "Black"
end

--- The system message: role, the answer contract, and the notation.
function P.system(ctx)
  local notation = ctx.options.notation
  local example = notation == "san" and "Nf3" or "g1f3"
  local notation_help = notation == "san"
      and "Write the move in standard algebraic notation (SAN), such as Nf3, exd5, O-O or e8=Q."
      or "Write the move in UCI notation: the from-square then the to-square, such as e2e4 or g1f3, "
        .. "with a promotion piece letter at the end when a pawn promotes (e7e8q). "
        .. "No capture or check signs."
  local lines = {
    "You play chess as " .. side_name(ctx) .. ", and you want to win.",
    "Study the position, weigh a few candidate moves, and reason step by step as long as you like.",
    notation_help,
  }
  chess960.add(lines, ctx, notation)
  table.insert(lines, "End your answer with your chosen move alone inside a fenced block, like this:")
  table.insert(lines, "```\n" .. example .. "\n```")
  table.insert(lines, "Only the last fenced block counts, so do not put other moves in fences.")
  return table.concat(lines, "\n")
end

--- The user message of the first attempt at a ply.
function P.position(ctx)
  local lines = {
    "The position (FEN): " .. ctx.fen,
    "You are " .. side_name(ctx) .. ", to move (move " .. ctx.move_number .. ").",
  }
  local board = ctx.options.board
  if board == "image" then
    table.insert(lines, "The board is in the picture below, your pieces at the bottom"
      .. (ctx.last_move and ", the last move's two squares tinted." or "."))
  elseif board ~= "none" then
    table.insert(lines, "The board:\n" .. arena.board.render(ctx.fen, board))
  end
  local n = ctx.options.history
  if n > 0 and #ctx.history_uci > 0 then
    local history = ctx.options.notation == "san" and ctx.history_san or ctx.history_uci
    local first = math.max(1, #history - n + 1)
    local recent = table.concat(history, " ", first, #history)
    table.insert(lines, "The last moves of the game, oldest first: " .. recent)
  end
  if ctx.options.legal_moves then
    local legal = ctx.options.notation == "san" and ctx.legal_san or ctx.legal_uci
    table.insert(lines, "Your legal moves: " .. table.concat(legal, " "))
  end
  table.insert(lines, "Which move is best here? Think it through, then give it in the fence.")
  return table.concat(lines, "\n")
end

--- The pictures shown with the position: the board as a PNG when `board = "image"`, drawn from
--- the mover's side with the last move marked; nil otherwise.
function P.images(ctx)
  if ctx.options.board ~= "image" then
    return nil
  end
  return { arena.board.image(ctx.fen, { last_move = ctx.last_move }) }
end

--- What the model is told after a failed attempt (shared by the single-request modes).
P.feedback = require("prompts.feedback").feedback

return P
