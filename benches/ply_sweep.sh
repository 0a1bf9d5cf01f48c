#!/usr/bin/env bash
# The concurrency sweep: how close arena gets to the ideal ply rate when many LLM games wait on a
# slow server at once, and how much memory each running game costs.
#
#   benches/ply_sweep.sh               # SIZES="64 256 1024" LATENCY_MS=200 PLIES=40
#
# Workload per size N: two LLM players in blitz mode (legal moves and the last 10 moves in every
# prompt, as benches/ply_cpu.lua) play N games of at most PLIES plies, all N at once
# (concurrency N, max_concurrency N per player), against examples/fake_openai.rs answering every
# request after LATENCY_MS. A game waits for one reply per ply, so with arena costing nothing a
# game of P plies takes P x latency and the N games together play at N / latency plies per
# second: the ideal rate. Achieved rate = plies stored / play window, the window running from the
# first game's start to the last game's end (the store's timestamps; arena's own start-up,
# before any game, is printed apart). "% ideal" is the ideal window (the longest game's LLM calls
# x latency) over the measured one.
#
# Memory: arena's max RSS (/usr/bin/time), divided by N ("RSS/game"), and with the RSS of a
# one-game run taken off first ("marginal": what one more running game costs; the target is on
# this one). CPU is arena's user + sys over the whole run, per ply.
#
# Settings (environment): SIZES, LATENCY_MS, PLIES, SEED (the fake server's), KEEP=1 keeps the
# temporary folder (stores, logs).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=${SIZES:-64 256 1024}
LATENCY_MS=${LATENCY_MS:-200}
PLIES=${PLIES:-40}
SEED=${SEED:-1}

BENCH=ply_sweep
# shellcheck source=benches/common.sh
source benches/common.sh

# A fresh fake server; sets URL.
start_server() {
  "$FAKE" --port 0 --seed "$SEED" --latency-ms "$LATENCY_MS" >"$TMP/server.out" 2>"$TMP/server.err" &
  SERVER_PID=$!
  URL=
  for _ in $(seq 100); do
    URL=$(sed -n 's/^listening on //p' "$TMP/server.out")
    [[ -n $URL ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "the fake server died: $(cat "$TMP/server.err")"
    sleep 0.05
  done
  [[ -n $URL ]] || die "the fake server did not start listening"
}

stop_server() {
  kill "$SERVER_PID"
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# Writes the tournament of $1 games at once to $TMP/sweep.lua.
write_script() {
  cat >"$TMP/sweep.lua" <<EOF
local arena = require("arena")
local function player(name)
  return arena.llm {
    name = name,
    base_url = "$URL",
    model = "fake-random-mover",
    max_tokens = 64,
    mode = "blitz",
    options = { legal_moves = true, history = 10 },
    max_concurrency = $1,
  }
end
return arena.tournament {
  name = "ply-sweep",
  format = "round_robin",
  games_per_pair = $1,
  max_plies = $PLIES,
  seed = 1,
  concurrency = $1,
  players = { player("fake-a"), player("fake-b") },
}
EOF
}

# Plays $1 games at once; sets PLIES_DONE WINDOW IDEAL USER_SYS RSS_KIB WALL STARTUP.
run_size() {
  start_server
  write_script "$1"
  rm -f "$TMP"/run.db*
  if ! /usr/bin/time -f '%U %S %M %e' -o "$TMP/time" \
    "$ARENA" run "$TMP/sweep.lua" --db "$TMP/run.db" --no-watch >"$TMP/arena.log" 2>&1; then
    tail -20 "$TMP/arena.log" >&2
    die "arena run failed (log above)"
  fi
  stop_server
  local db=$TMP/run.db unfinished
  unfinished=$(query "$db" "SELECT count(*) FROM games WHERE status != 'finished'")
  [[ $unfinished == 0 ]] || die "$unfinished games did not finish; see $TMP/arena.log (KEEP=1)"
  PLIES_DONE=$(query "$db" "SELECT count(*) FROM plies")
  WINDOW=$(query "$db" "SELECT (julianday(max(finished_at)) - julianday(min(started_at))) * 86400 FROM games")
  STARTUP=$(query "$db" "SELECT (julianday(min(g.started_at)) - julianday(t.created_at)) * 86400 FROM games g JOIN tournaments t ON t.id = g.tournament_id")
  IDEAL=$(query "$db" "SELECT max(n) * $LATENCY_MS / 1000.0 FROM (SELECT count(*) AS n FROM llm_calls GROUP BY game_id)")
  read -r user sys RSS_KIB WALL <"$TMP/time"
  USER_SYS=$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')
}

echo "workload: N games at once, 2 LLM players, blitz (legal moves + history 10), max_plies $PLIES"
echo "          against $FAKE (latency ${LATENCY_MS} ms, seed $SEED), fresh per size"
echo "commit $(git describe --always --dirty), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo

run_size 1
BASE_KIB=$RSS_KIB
printf 'one-game run (the RSS baseline): %.1f MiB max RSS, %d plies in %.2f s\n\n' \
  "$(awk -v k="$BASE_KIB" 'BEGIN {print k / 1024}')" "$PLIES_DONE" "$WINDOW"

printf '%5s %6s %9s %9s %10s %10s %7s %9s %9s %10s %9s\n' \
  games plies "ideal s" "window s" "ideal p/s" "achvd p/s" "% ideal" "RSS MiB" "MiB/game" "marg. MiB" "CPU ms/ply"
for n in $SIZES; do
  run_size "$n"
  awk -v n="$n" -v p="$PLIES_DONE" -v i="$IDEAL" -v w="$WINDOW" -v r="$RSS_KIB" -v b="$BASE_KIB" \
    -v c="$USER_SYS" 'BEGIN {
      printf "%5d %6d %9.2f %9.2f %10.0f %10.0f %6.1f%% %9.1f %9.3f %10.3f %9.3f\n",
        n, p, i, w, p / i, p / w, 100 * i / w, r / 1024, r / 1024 / n, (r - b) / 1024 / n, c * 1000 / p }'
  printf '      (arena start-up before the first game: %.2f s; wall %s s)\n' "$STARTUP" "$WALL"
done
echo
echo "targets: >= 95 % of ideal at 1024 games; <= 0.25 MiB marginal RSS per running game"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
