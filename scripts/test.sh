#!/usr/bin/env bash
# The README's second command (and CI's): install what the tests need, then run the whole suite
# against the real parts: Stockfish, the local model over HTTP, the anchors' reference data and a
# PostgreSQL server; then the unit tests a second time with every test store on PostgreSQL, and
# the book under docs/ (mdBook; its examples, links and generated pages are checked by the suite).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh --tests
export LOCAL_LLM_URL=${LOCAL_LLM_URL:-http://127.0.0.1:8765/v1}
if [ -z "${ARENA_REFERENCE_DATA:-}" ] && [ -d ../shared/data ]; then
  export ARENA_REFERENCE_DATA=$(cd ../shared/data && pwd)
fi
# The shared-store tests' server: a throwaway cluster, with a fresh database per run.
scripts/postgres.sh start >/dev/null
export ARENA_TEST_POSTGRES=${ARENA_TEST_POSTGRES:-$(scripts/postgres.sh fresh arena_tests)}
cargo test --locked "$@"
if [ $# -eq 0 ]; then
  echo "the unit tests again, every test store on PostgreSQL ($ARENA_TEST_POSTGRES)"
  ARENA_STORE_TESTS=postgres cargo test --locked --lib
  # `cargo install` puts mdbook in cargo's bin folder, which may not be on PATH.
  PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin" mdbook build docs
fi
