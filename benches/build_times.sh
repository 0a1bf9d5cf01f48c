#!/usr/bin/env bash
# How long a developer waits for cargo after touching one kind of file, for one or more checkouts
# side by side (for example the commit before a restructuring and the one after it):
#
#   benches/build_times.sh [--clean-release] DIR [DIR ...]
#
# For each checkout it builds once (warm), then for each touched file (a built-in Lua script, a
# report file, a provider file, a store file) sets the file's time to now and times
# `cargo build` (the binary) and `cargo test --no-run` (every test binary). With
# `--clean-release` it first times `cargo build --release` from an empty target folder of its own.
# Seconds are wall time on this machine: run it on an otherwise idle machine and compare the
# columns of one run, not figures from different days. The table is printed as Markdown.
set -euo pipefail
clean_release=0
if [ "${1:-}" = "--clean-release" ]; then clean_release=1; shift; fi
[ $# -ge 1 ] || { echo "usage: $0 [--clean-release] DIR [DIR ...]" >&2; exit 2; }

# The first of the candidate paths that exists in the checkout (files moved between layouts).
pick() {
  local dir=$1; shift
  for candidate in "$@"; do
    if [ -e "$dir/$candidate" ]; then echo "$candidate"; return; fi
  done
  echo "none of $* in $dir" >&2; exit 1
}

seconds() { # runs "$@" quietly, prints its wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l | xargs printf '%.0f'
}

declare -A cell
rows=()
for dir in "$@"; do
  dir=$(cd "$dir" && pwd)
  (cd "$dir" && cargo build --locked -q && cargo test --locked --no-run -q) >/dev/null 2>&1
  if [ $clean_release -eq 1 ]; then
    t=$(cd "$dir" && CARGO_TARGET_DIR="$dir/target/bench-clean-release" seconds cargo build --locked --release)
    rm -rf "$dir/target/bench-clean-release"
    cell["clean release build|$dir"]=$t
    [[ " ${rows[*]} " == *" clean release build "* ]] || rows+=("clean release build")
  fi
  for kind in lua report provider store; do
    case $kind in
      lua) file=$(pick "$dir" crates/lua/scripts/modes/blitz.lua scripts/modes/blitz.lua) ;;
      report) file=$(pick "$dir" crates/outputs/src/report/html/mod.rs src/report/html/mod.rs) ;;
      provider) file=$(pick "$dir" crates/llm/src/anthropic.rs src/llm/anthropic.rs) ;;
      store) file=$(pick "$dir" crates/store/src/games.rs src/store/games.rs) ;;
    esac
    touch "$dir/$file"
    t=$(cd "$dir" && seconds cargo build --locked)
    cell["touch $kind file: cargo build|$dir"]=$t
    touch "$dir/$file"
    t=$(cd "$dir" && seconds cargo test --locked --no-run)
    cell["touch $kind file: cargo test --no-run|$dir"]=$t
    for row in "touch $kind file: cargo build" "touch $kind file: cargo test --no-run"; do
      [[ " ${rows[*]} " == *" $row "* ]] || rows+=("$row")
    done
  done
done

printf '| seconds |'; for dir in "$@"; do printf ' %s (%s) |' "$(basename "$(cd "$dir" && pwd)")" "$(git -C "$dir" rev-parse --short HEAD)"; done; echo
printf '| --- |'; for _ in "$@"; do printf ' ---: |'; done; echo
for row in "${rows[@]}"; do
  printf '| %s |' "$row"
  for dir in "$@"; do dir=$(cd "$dir" && pwd); printf ' %s |' "${cell["$row|$dir"]:-}"; done
  echo
done
