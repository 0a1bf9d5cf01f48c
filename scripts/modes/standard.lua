-- Standard: blitz's contract for reasoning models. The prompt asks for careful reasoning; give the
-- player a large `max_tokens` and, where the API has one, a `reasoning_effort` or `thinking_budget`
-- (those are player settings, passed to the provider). Reasoning the provider returns separately is
-- stored beside the answer; only the answer is parsed.
local blitz = require("modes.blitz")

local M = {}

--- Its words are blitz's (a player's `prompt = "..."` stands in for them).
M.prompt_module = blitz.prompt_module

M.defaults = {}
for key, value in pairs(blitz.defaults) do
  M.defaults[key] = value
end
M.choices = blitz.choices

function M.start(ctx)
  local opening = blitz.start(ctx)
  local messages = opening.messages or opening
  messages[1].content = messages[1].content
    .. "\nTake the time you need: check every candidate move for tactics before you answer."
  if opening.messages then
    return opening
  end
  return messages
end

M.reply = blitz.reply

return M
