#!/usr/bin/env bash
# How long a developer (and CI) waits for cargo after editing one kind of file, for one or more
# checkouts side by side (for example the commit before a restructuring and the one after it):
#
#   benches/build_times.sh [--clean-release N] DIR [DIR ...]
#
# For each checkout, and for each kind of file (a built-in Lua script, a report file, a provider
# file, a store file), it appends a comment line to the file and times `cargo build` (the
# binary), then appends a second one and times `cargo test --no-run` (every test binary); the
# next kind starts from that warm build, and the files are put back at the end. It does so
# twice: with cargo's incremental caches (a developer's default) and without them
# (`CARGO_INCREMENTAL=0`, as CI builds), each after an untimed warm build in that mode. With `--clean-release N` it also times `cargo build
# --release` from an empty target folder of its own N times and keeps the fastest.
# Seconds are wall time on this machine: run it on an otherwise idle machine and compare the
# columns of one run, not figures from different days. The table is printed as Markdown.
set -euo pipefail
clean_release=0
if [ "${1:-}" = "--clean-release" ]; then clean_release=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--clean-release N] DIR [DIR ...]" >&2; exit 2; }

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

# Appends a comment line (in the file's own syntax) that changes its content.
edit() {
  local file=$1 mark=$2
  case $file in
    *.lua) printf '\n-- build_times: %s\n' "$mark" >>"$file" ;;
    *) printf '\n// build_times: %s\n' "$mark" >>"$file" ;;
  esac
}

declare -A cell
rows=()
add_row() { [[ " ${rows[*]} " == *" $1 "* ]] || rows+=("$1"); }

for dir in "$@"; do
  dir=$(cd "$dir" && pwd)
  if [ "$clean_release" -gt 0 ]; then
    best=""
    for _ in $(seq "$clean_release"); do
      t=$(cd "$dir" && CARGO_TARGET_DIR="$dir/target/bench-clean-release" seconds cargo build --locked --release)
      rm -rf "$dir/target/bench-clean-release"
      if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
    done
    cell["clean release build|$dir"]=$best
    add_row "clean release build"
  fi
  for mode in incremental ci; do
    if [ $mode = ci ]; then export CARGO_INCREMENTAL=0; label=" (no incremental, as CI)"; else unset CARGO_INCREMENTAL; label=""; fi
    (cd "$dir" && cargo build --locked -q && cargo test --locked --no-run -q) >/dev/null 2>&1
    for kind in lua report provider store; do
      case $kind in
        lua) file=$(pick "$dir" scripts/modes/blitz.lua) ;;
        report) file=$(pick "$dir" crates/outputs/src/report/html/mod.rs src/report/html/mod.rs) ;;
        provider) file=$(pick "$dir" crates/providers/src/anthropic.rs crates/llm/src/anthropic.rs src/llm/anthropic.rs) ;;
        store) file=$(pick "$dir" crates/store/src/games.rs src/store/games.rs) ;;
      esac
      edit "$dir/$file" "an edit"
      t=$(cd "$dir" && seconds cargo build --locked)
      cell["edit a $kind file: cargo build$label|$dir"]=$t
      edit "$dir/$file" "another edit"
      t=$(cd "$dir" && seconds cargo test --locked --no-run)
      cell["edit a $kind file: cargo test --no-run$label|$dir"]=$t
      add_row "edit a $kind file: cargo build$label"
      add_row "edit a $kind file: cargo test --no-run$label"
    done
    git -C "$dir" checkout -q -- scripts crates src 2>/dev/null || git -C "$dir" checkout -q -- scripts src
  done
  unset CARGO_INCREMENTAL
done

printf '| seconds |'; for dir in "$@"; do printf ' %s (%s) |' "$(basename "$(cd "$dir" && pwd)")" "$(git -C "$dir" rev-parse --short HEAD)"; done; echo
printf '| --- |'; for _ in "$@"; do printf ' ---: |'; done; echo
for row in "${rows[@]}"; do
  printf '| %s |' "$row"
  for dir in "$@"; do dir=$(cd "$dir" && pwd); printf ' %s |' "${cell["$row|$dir"]:-}"; done
  echo
done
