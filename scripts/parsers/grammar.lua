-- Constrained decoding for servers that take a GBNF `grammar` in the request (llama.cpp): the only
-- answers the model can produce are the legal moves, fenced. Modes offer it as the `grammar`
-- option, for demonstrations and tests with tiny models: a constrained answer measures nothing
-- about the model's knowledge of the rules.
local G = {}

--- A GBNF grammar whose only sentences are the legal moves of `ctx`, each alone in a fence.
function G.fenced_legal_moves(ctx)
  local moves = ctx.options.notation == "san" and ctx.legal_san or ctx.legal_uci
  local alternatives = {}
  for i, move in ipairs(moves) do
    alternatives[i] = '"' .. move .. '"'
  end
  return 'root ::= "```\\n" (' .. table.concat(alternatives, " | ") .. ') "\\n```"'
end

--- `messages`, with the grammar attached when the player's `grammar` option is on.
function G.wrap(ctx, messages)
  if ctx.options.grammar then
    return { messages = messages, request = { grammar = G.fenced_legal_moves(ctx) } }
  end
  return messages
end

return G
