#!/usr/bin/env bash
# arena's own CPU per LLM ply on a fixed workload, to compare commits (before and after a change):
#
#   benches/ply_cpu.sh                 # RUNS=5 for more runs; CALLGRIND=0 skips the instruction count
#
# Workload: benches/ply_cpu.lua, two LLM players in blitz mode (legal moves and history in every
# prompt) playing 12 games of at most 200 plies (about 2100 LLM plies) at concurrency 1 against
# examples/fake_openai.rs, which answers a seeded random legal move at once. Every run gets a fresh
# server, so the games are the same in every run and on every commit that asks the same requests.
#
# Per run it prints the arena process's CPU (user + sys, from /usr/bin/time: the machine is shared,
# so wall time means little) per ply, its max RSS, and the fake server's own CPU (to show it is not
# what is measured), then the median. Instructions per ply come from `perf stat` where hardware
# counters exist, else from one extra run under valgrind's callgrind (about 40 s; repeatable to a
# fraction of a percent, so the number to compare across commits on a noisy machine). Both include
# arena's start-up (Lua, the store), spread over the plies.
#
# Settings (environment): RUNS (3), SEED (1, the fake server's), CALLGRIND (auto: only without
# perf counters; 1: also with them; 0: never), KEEP=1 keeps the temporary folder (stores, logs).
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SEED=${SEED:-1}
CALLGRIND=${CALLGRIND:-auto}
SCRIPT=benches/ply_cpu.lua
SCRIPT_URL=http://127.0.0.1:8799/v1 # the base_url written in $SCRIPT, replaced by the server's

BENCH=ply_cpu
# shellcheck source=benches/common.sh
source benches/common.sh

TICK_MS=$((1000 / $(getconf CLK_TCK)))

# Starts a fresh fake server and writes the script pointing at it to $TMP/ply_cpu.lua.
start_server() {
  "$FAKE" --port 0 --seed "$SEED" >"$TMP/server.out" 2>"$TMP/server.err" &
  SERVER_PID=$!
  local url=
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$TMP/server.out")
    [[ -n $url ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "the fake server died: $(cat "$TMP/server.err")"
    sleep 0.05
  done
  [[ -n $url ]] || die "the fake server did not start listening"
  sed "s#$SCRIPT_URL#$url#" "$SCRIPT" >"$TMP/ply_cpu.lua"
  grep -q "$url" "$TMP/ply_cpu.lua" || die "$SCRIPT no longer holds base_url $SCRIPT_URL"
}

# Stops the server, setting SERVER_MS to its CPU (user + sys, /proc ticks) in ms.
stop_server() {
  local ticks
  ticks=$(sed 's/^.*) //' "/proc/$SERVER_PID/stat" | awk '{print $12 + $13}')
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
  SERVER_MS=$((ticks * TICK_MS))
}

# Runs arena on a fresh store under "$@" (a wrapper command, possibly none); fails loudly.
run_arena() {
  rm -f "$TMP"/run.db*
  if ! "$@" "$ARENA" run "$TMP/ply_cpu.lua" --db "$TMP/run.db" --no-watch >"$TMP/arena.log" 2>&1; then
    tail -20 "$TMP/arena.log" >&2
    die "arena run failed (log above)"
  fi
  local unfinished
  unfinished=$(query "$TMP/run.db" "SELECT count(*) FROM games WHERE status != 'finished'")
  [[ $unfinished == 0 ]] || die "$unfinished games did not finish; see $TMP/arena.log (KEEP=1)"
}

PERF_EVENT=
for event in instructions instructions:u; do
  if perf stat -x, -e "$event" true 2>&1 >/dev/null | grep -q "^[0-9]"; then
    PERF_EVENT=$event
    break
  fi
done 2>/dev/null

echo "workload: $SCRIPT (2 LLM players, blitz, legal moves + history, max_plies 200, concurrency 1)"
echo "          against $FAKE (latency 0, seed $SEED), fresh per run"
echo "commit $(git describe --always --dirty), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-4s %6s %6s %9s %8s %8s %10s %9s %7s %12s\n' \
  run plies calls "user ms" "sys ms" "ms/ply" "RSS MiB" "server ms" "wall s" "instr/ply"
PER_PLY=()
for run in $(seq "$RUNS"); do
  start_server
  wrapper=(/usr/bin/time -f '%U %S %M %e' -o "$TMP/time")
  if [[ -n $PERF_EVENT ]]; then
    wrapper=(perf stat -x, -e "$PERF_EVENT" -o "$TMP/perf" -- "${wrapper[@]}")
  fi
  run_arena "${wrapper[@]}"
  stop_server
  plies=$(query "$TMP/run.db" "SELECT count(*) FROM plies")
  calls=$(query "$TMP/run.db" "SELECT count(*) FROM llm_calls")
  read -r user sys rss wall <"$TMP/time"
  instr=-
  if [[ -n $PERF_EVENT ]]; then
    instr=$(awk -F, -v p="$plies" '/^[0-9]/ {printf "%.3f M", $1 / p / 1e6}' "$TMP/perf")
  fi
  per_ply=$(awk -v u="$user" -v s="$sys" -v p="$plies" 'BEGIN {printf "%.3f", (u + s) * 1000 / p}')
  PER_PLY+=("$per_ply")
  printf '%-4s %6s %6s %9.0f %8.0f %8s %10.1f %9s %7s %12s\n' "$run" "$plies" "$calls" \
    "$(awk -v x="$user" 'BEGIN {print x * 1000}')" "$(awk -v x="$sys" 'BEGIN {print x * 1000}')" \
    "$per_ply" "$(awk -v x="$rss" 'BEGIN {print x / 1024}')" "$SERVER_MS" "$wall" "$instr"
done
median=$(printf '%s\n' "${PER_PLY[@]}" | sort -g |
  awk '{v[NR] = $1} END {printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
echo
echo "median arena CPU per LLM ply: $median ms (user + sys, $RUNS runs)"

if [[ $CALLGRIND == 1 || ($CALLGRIND == auto && -z $PERF_EVENT) ]]; then
  if command -v valgrind >/dev/null; then
    start_server
    run_arena valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$TMP/callgrind.log"
    stop_server
    plies=$(query "$TMP/run.db" "SELECT count(*) FROM plies")
    total=$(sed -n 's/^==[0-9]*== Collected : //p' "$TMP/callgrind.log")
    [[ -n $total ]] || die "no instruction count in $TMP/callgrind.log (KEEP=1)"
    awk -v t="$total" -v p="$plies" 'BEGIN {
      printf "instructions per LLM ply (callgrind, user space, 1 run): %.3f M (%.4f G over %d plies)\n", t / p / 1e6, t / 1e9, p }'
  else
    echo "instructions: no perf counters here and no valgrind (Debian package valgrind)"
  fi
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
