-- A custom parser: the answer is a JSON object such as {"move": "e2e4", "why": "..."}.
-- Returns the move table of arena.board.find_move, or nil and an error table.
local P = {}

function P.parse(text, ctx)
  local json = text:match("%b{}")
  if not json then
    return nil, { kind = "no_move_found", message = "no JSON object in the answer" }
  end
  local value, err = arena.json.decode(json)
  if not value then
    return nil, { kind = "unparseable", message = "the JSON does not parse: " .. err, candidate = json }
  end
  if type(value.move) ~= "string" then
    return nil, { kind = "unparseable", message = "the JSON has no string field `move`", candidate = json }
  end
  -- Reuse arena's checks (legality, SAN or UCI) on the extracted move alone.
  return arena.board.find_move(value.move, ctx.fen, { scope = "anywhere" })
end

return P
