#!/usr/bin/env bash
# The README's second command (and CI's): install what the tests need, then run the whole suite
# against the real parts: Stockfish, the local model over HTTP, and the anchors' reference data.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh --tests
export LOCAL_LLM_URL=${LOCAL_LLM_URL:-http://127.0.0.1:8765/v1}
if [ -z "${ARENA_REFERENCE_DATA:-}" ] && [ -d ../shared/data ]; then
  export ARENA_REFERENCE_DATA=$(cd ../shared/data && pwd)
fi
cargo test --locked "$@"
