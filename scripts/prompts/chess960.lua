-- What the built-in modes tell a model in a Chess960 game, and only there: what the FEN's castling
-- field means and how castling is written. A standard game's prompts never carry these words.
local C = {}

--- The Chess960 note for `notation` ("uci" or "san"), or nil in a standard game.
function C.note(ctx, notation)
  if ctx.variant ~= "chess960" then
    return nil
  end
  local lines = {
    "This is a game of Chess960 (Fischer random chess): the pieces of the back ranks started on "
      .. "shuffled squares. Castling ends as in standard chess, the king on the g-file (king side) "
      .. "or the c-file (queen side) and the rook beside it on the f- or d-file; every square "
      .. "between must be empty but for the two castling pieces, and the king may not be in check "
      .. "or cross an attacked square.",
    "FENs are X-FEN: K, Q, k or q in the castling field stands for the outermost rook on that "
      .. "side, a file letter (such as G or b) for another one.",
  }
  if notation == "san" then
    table.insert(lines, "Write castling as O-O (king side) or O-O-O (queen side).")
  else
    table.insert(lines, "In UCI, castling is written as the king moving onto its own rook: with the king "
      .. "on f1 and the rook on h1, castling king side is f1h1.")
  end
  return table.concat(lines, "\n")
end

--- Appends the note to `lines` in a Chess960 game; leaves them alone otherwise.
function C.add(lines, ctx, notation)
  local note = C.note(ctx, notation)
  if note then
    table.insert(lines, note)
  end
  return lines
end

return C
