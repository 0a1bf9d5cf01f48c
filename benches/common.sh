# Shared set-up of the benchmark scripts (sourced, not run): `die`, `query` (one value from a store),
# the release builds of the fake server and of arena, and a temporary folder removed on exit (kept
# with KEEP=1). The sourcing script sets BENCH (its name, for messages) and SERVER_PID when it
# starts the fake server, which the exit trap stops.

die() {
  echo "$BENCH: $*" >&2
  exit 1
}
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (Debian package \`time\`)"
if command -v python3 >/dev/null && python3 -c 'import sqlite3' 2>/dev/null; then
  query() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"; }
elif command -v sqlite3 >/dev/null; then
  query() { sqlite3 "$1" "$2"; }
else
  die "reading the store needs python3 (with sqlite3) or the sqlite3 command"
fi

# The example first: building it unifies dev-dependency features into the library, so the arena
# binary is built after it, on its own, exactly as `cargo build --release` ships it (both builds are
# cached, so the second is a relink at most).
cargo build --release --quiet --example fake_openai
cargo build --release --quiet --bins
ARENA=target/release/arena
FAKE=target/release/examples/fake_openai

TMP=$(mktemp -d "${TMPDIR:-/tmp}/$BENCH.XXXXXX")
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
