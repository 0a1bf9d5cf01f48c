-- Does asking the model to think in steps before it moves make it play better, and what does it
-- cost? The arm `think` differs from the baseline `plain` in one line: its `prompt`.
--
--   arena prompt examples/think/tournament.lua --player think   -- what it is sent, no call
--   arena run examples/think/tournament.lua                     -- play it (the local model:
--                                                                  scripts/local-llm.sh start)
-- fake.lua asks the same of examples/fake_openai.rs, whose answer is known (the book's
-- experiments page shows both runs).
return arena.experiment {
  name = "think-in-steps",
  baseline = arena.llm {
    name = "plain", base_url = "http://127.0.0.1:8765/v1", model = "smollm2-135m-instruct",
    max_tokens = 256, max_concurrency = 1,
  },
  variants = {
    arena.llm {
      name = "think", base_url = "http://127.0.0.1:8765/v1", model = "smollm2-135m-instruct",
      max_tokens = 256, max_concurrency = 1,
      prompt = "prompts/think.lua", -- the one line that differs
    },
  },
  opponents = { arena.random { name = "random" } },
  max_plies = 40,
  games = 10,
}
