#!/usr/bin/env bash
# Installs the tools (scripts/setup.sh), then runs every test of the workspace: unit tests,
# golden traces through the host library, the CLI and the wasmtime CLI, and component checks.
# Extra arguments go to `cargo test`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=setup.sh
. "$ROOT/scripts/setup.sh"
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"

echo "test: cargo test --workspace $*" >&2
cargo test --workspace "$@"

# The guest's unit tests once more on the target the gateways run: wasm32-wasip2 with SIMD,
# under the wasmtime CLI. The component has code of its own there (vector string scans, SIMD
# blake3, fixed-size copies), which the native run above does not execute.
echo "test: cargo test -p loopguard-policy --lib --target wasm32-wasip2 (under wasmtime run)" >&2
CARGO_TARGET_WASM32_WASIP2_RUNNER="wasmtime run" cargo test -p loopguard-policy --lib --target wasm32-wasip2

# Non-Rust gateways (examples/node-gateway, examples/python-gateway) load the .wasm that
# cargo just built (host/build.rs -> target/policy/…/loopguard_policy.wasm); then the parity
# test holds the Rust host, the wasmtime CLI, Node and Python to byte-identical decisions.
NODE_GW="$ROOT/examples/node-gateway"
if [ -f "$NODE_GW/node_modules/.package-lock.json" ] &&
    ! [ "$NODE_GW/package-lock.json" -nt "$NODE_GW/node_modules/.package-lock.json" ]; then
    echo "test: examples/node-gateway/node_modules is up to date" >&2
else
    echo "test: npm ci (examples/node-gateway)" >&2
    (cd "$NODE_GW" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "test: jco transpile (skipped when generated/ matches the .wasm)" >&2
(cd "$NODE_GW" && node transpile.mjs)
echo "test: node --test (examples/node-gateway)" >&2
(cd "$NODE_GW" && node --test --test-reporter=spec test/)
echo "test: pytest examples/python-gateway" >&2
"$ROOT/.venv/bin/python" -m pytest -q "$ROOT/examples/python-gateway/tests"
echo "test: parity (Rust host, wasmtime CLI, Node, Python on every example trace)" >&2
"$ROOT/.venv/bin/python" -m pytest -q -rA "$ROOT/tests/parity"
# A short fuzz run of every target (scripts/fuzz.sh: build once, then N seconds per target);
# FUZZ_SECONDS=0 skips it (e.g. for a quick local run).
FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
if [ "$FUZZ_SECONDS" -gt 0 ]; then
    echo "test: scripts/fuzz.sh $FUZZ_SECONDS" >&2
    bash "$ROOT/scripts/fuzz.sh" "$FUZZ_SECONDS"
fi
