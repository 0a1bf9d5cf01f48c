-- The words of the bullet mode: the model must answer with the move and nothing else.
local P = {}
local chess960 = require("prompts.chess960")

function P.system(ctx)
  local side = ctx.side == "white" and "White" or "Black"
  local notation = ctx.options.notation == "san"
      and "standard algebraic notation (SAN), such as Nf3 or O-O"
      or "UCI notation (from-square then to-square, such as e2e4, with a promotion letter like e7e8q)"
  local lines = {
    "You play chess as " .. side .. ", and you want to win.",
    "This is bullet chess: there is no time to think aloud.",
  }
  chess960.add(lines, ctx, ctx.options.notation)
  table.insert(lines, "Answer with your move in " .. notation .. " inside a fenced block, and write nothing else:")
  table.insert(lines, "```\n" .. (ctx.options.notation == "san" and "Nf3" or "g1f3") .. "\n```")
  table.insert(lines, "Any other word in your answer forfeits the attempt.")
  return table.concat(lines, "\n")
end

function P.position(ctx)
  local lines = { "The position (FEN): " .. ctx.fen }
  if ctx.options.legal_moves then
    local legal = ctx.options.notation == "san" and ctx.legal_san or ctx.legal_uci
    table.insert(lines, "Your legal moves: " .. table.concat(legal, " "))
  end
  local n = ctx.options.history
  if n > 0 and #ctx.history_uci > 0 then
    local history = ctx.options.notation == "san" and ctx.history_san or ctx.history_uci
    local first = math.max(1, #history - n + 1)
    table.insert(lines, "The last moves, oldest first: " .. table.concat(history, " ", first, #history))
  end
  return table.concat(lines, "\n")
end

P.feedback = require("prompts.feedback").feedback

return P
