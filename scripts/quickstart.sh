#!/usr/bin/env bash
# The README's first command: install what is missing, build arena, run tournaments/quickstart.lua,
# then print where its HTML report is (open it in any browser: it needs no network).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/prerequisites.sh
cargo build --release --locked
status=0
target/release/arena run tournaments/quickstart.lua "$@" || status=$?
# `arena run` writes the report beside the store: quickstart.db, unless --db says otherwise.
db=quickstart.db
args=("$@")
for i in "${!args[@]}"; do
  if [ "${args[$i]}" = "--db" ]; then db=${args[$((i + 1))]:-$db}; fi
done
report="${db%.*}.html"
if [ -f "$report" ]; then
  echo
  echo "The HTML report of this tournament: $(cd "$(dirname "$report")" && pwd)/$(basename "$report")"
fi
exit "$status"
