-- The fixed workload of benches/ply_cpu.sh and of the one-game part of `cargo bench --bench
-- llm_harness`: arena's own CPU per LLM ply. Two LLM players in the
-- blitz mode (legal moves and the last 10 moves in every prompt) play each other against the fake
-- server of examples/fake_openai.rs, which answers a random legal move at once, so nearly all the
-- CPU spent is arena's: prompts, the HTTP client, reply parsing, the board and the store.
-- 12 games of at most 200 plies: about 2000 LLM plies; one game at a time, no analysis.
--
-- Scripts cannot read the environment, so the runner points the players at its server by
-- rewriting BASE_URL below in a copy of this file (the bench also rewrites games_per_pair for its
-- quick run, so keep both literals as they are).
-- By hand: cargo run --release --example fake_openai -- --port 8799 &
--          target/release/arena run benches/ply_cpu.lua --db /tmp/ply_cpu.db --no-watch
local arena = require("arena")

local BASE_URL = "http://127.0.0.1:8799/v1"

local function player(name)
  return arena.llm {
    name = name,
    base_url = BASE_URL,
    model = "fake-random-mover",
    max_tokens = 64,
    mode = "blitz",
    options = { legal_moves = true, history = 10 },
  }
end

return arena.tournament {
  name = "ply-cpu",
  format = "round_robin",
  games_per_pair = 12,
  max_plies = 200,
  seed = 1,
  concurrency = 1,
  players = { player("fake-a"), player("fake-b") },
}
