-- Words for one arm of an experiment: blitz's prompt, plus a plan for thinking before the move.
-- A player takes them with `prompt = "prompts/think.lua"`; the rest (the position, the legal
-- moves, the feedback after a bad answer) stays blitz's own.
-- Inside this file, `require("prompts.blitz")` is the built-in module it stands in for.
local blitz = require("prompts.blitz")

local P = {}
for key, value in pairs(blitz) do
  P[key] = value
end

--- The system message: blitz's, then three steps to write down before the answer.
function P.system(ctx)
  return blitz.system(ctx) .. "\n" .. table.concat({
    "Before the fenced move, think in three numbered steps and write each one down:",
    "1. What does your opponent threaten now?",
    "2. Which two or three of your moves meet that threat or improve your position?",
    "3. Which one of them is best, and why?",
  }, "\n")
end

return P
