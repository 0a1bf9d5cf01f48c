#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the shared-store tests (and for trying `--db postgres://`):
#   scripts/postgres.sh start   initdb (once) and start a server on 127.0.0.1:${ARENA_PG_PORT:-55432},
#                               data in ${ARENA_PG_DIR:-.postgres}, run as an unprivileged user
#                               (the caller, or Debian's `postgres` user when called as root, since
#                               PostgreSQL refuses to run as root); prints the URL to use
#   scripts/postgres.sh url     prints that URL: postgres://arena@127.0.0.1:PORT/arena
#   scripts/postgres.sh fresh NAME   (re)creates an empty database NAME and prints its URL
#   scripts/postgres.sh stop    stops the server (the data stays until the folder is removed)
# Local connections are trusted (no password): this cluster is for one machine's tests. A shared
# study's server is set up by its administrator; arena only needs its URL.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${ARENA_PG_PORT:-55432}
dir=${ARENA_PG_DIR:-$PWD/.postgres}
url="postgres://arena@127.0.0.1:$port/arena"

bin=""
for candidate in /usr/lib/postgresql/*/bin; do [ -x "$candidate/initdb" ] && bin=$candidate; done
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  url) echo "$url" ;;
  start)
    if [ -z "$bin" ]; then
      echo "PostgreSQL is not installed: apt-get install postgresql" >&2
      exit 1
    fi
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
      chmod 700 "$dir"
      as_owner "$bin/initdb" -D "$dir" -U arena --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if ! as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      # Sockets in the data folder; TCP on loopback only. fsync off: a test cluster need not
      # survive a power cut, and it makes the suite's thousands of commits cheap.
      as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -o \
        "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
        start >/dev/null
    fi
    if ! as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U arena -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'arena'" | grep -q 1; then
      as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U arena arena
    fi
    echo "$url"
    ;;
  fresh)
    name=${2:?usage: scripts/postgres.sh fresh NAME}
    as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U arena -d postgres -qX \
      -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" -c "CREATE DATABASE \"$name\"" >/dev/null
    echo "postgres://arena@127.0.0.1:$port/$name"
    ;;
  stop)
    [ -n "$bin" ] && [ -f "$dir/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null || true
    ;;
  *)
    echo "usage: scripts/postgres.sh start|url|stop" >&2
    exit 2
    ;;
esac
