#!/usr/bin/env bash
# The README's first command: install what is missing, build arena, run tournaments/quickstart.lua.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh
cargo build --release --locked
exec target/release/arena run tournaments/quickstart.lua "$@"
