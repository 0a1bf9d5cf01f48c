-- One sample against five: the same model and temperature, the variant asking five samples per
-- attempt and playing the move most of them chose (self-consistency voting; see the book's page
-- on play modes). Paired games against a common random opponent, an SPRT on the score.
-- `arena run examples/self_consistency.lua` (start the model first: scripts/local-llm.sh start)
local arena = require("arena")

local function smollm(name, options)
  return arena.llm {
    name = name,
    base_url = "http://127.0.0.1:8765/v1",
    model = "smollm2-135m-instruct",
    temperature = 0.8, -- samples need a temperature above 0: at 0 they would all be alike
    max_tokens = 48,
    max_concurrency = 5,
    options = options,
  }
end

return arena.experiment {
  name = "one-sample-or-five",
  baseline = smollm("one-sample", { legal_moves = true, max_attempts = 2 }),
  variants = { smollm("five-samples", { legal_moves = true, max_attempts = 2, samples = 5 }) },
  opponents = { arena.random { name = "random" } },
  openings = { file = "../books/2moves_v1.epd" },
  max_plies = 40,
  sprt = { elo0 = 0, elo1 = 100, alpha = 0.05, beta = 0.05 },
}
