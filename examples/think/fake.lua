-- The step-by-step question against examples/fake_openai.rs, where the answer is known: the fake
-- thinks (100 to 300 tokens, drawn per reply) only when the prompt asks for "numbered steps", as
-- prompts/think.lua does, and then plays a mate in one or its best capture; asked nothing, it
-- answers at once with a random legal move. So `think` should play better and cost more.
--
--   cargo run --example fake_openai -- --port 8799 \
--     --think-tokens 200 --think-if "numbered steps" --think-better
--   arena run examples/think/fake.lua
return arena.experiment {
  name = "think-in-steps-fake",
  baseline = arena.llm {
    name = "plain", base_url = "http://127.0.0.1:8799/v1", model = "fake", max_tokens = 512,
  },
  variants = {
    arena.llm {
      name = "think", base_url = "http://127.0.0.1:8799/v1", model = "fake", max_tokens = 512,
      prompt = "prompts/think.lua", -- the one line that differs
    },
  },
  opponents = { arena.random { name = "random" } },
  openings = { book = "2moves_v1" },
  sprt = { elo0 = 0, elo1 = 200, model = "logistic" },
  max_pairs = 60,
  max_plies = 80,
  seed = 1,
}
