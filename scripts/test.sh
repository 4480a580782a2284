#!/usr/bin/env bash
# Installs the tools (scripts/setup.sh), then runs every test:
#   1. Rust: the workspace's unit and integration tests (guest, host and CLI, transcripts, the
#      cross-implementation tests in tests/), then the guest's tests again on wasm32-wasip2 under
#      the wasmtime CLI (the component's own code paths);
#   2. the release build (scripts/dist.sh: the policy built twice and compared, the CLI, the npm
#      tarball, the wheel, the plugin, the crates) and the install tests on it, as a user would
#      (tests/install: empty directories, no Rust on the PATH);
#   3. the packages: Node (on Node 22 and 24), Python (the built wheel), the OpenClaw plugin;
#   4. parity: the Rust host, the wasmtime CLI, Node and Python give byte-identical decisions;
#   5. the oracle: loopguard against the published OpenClaw packages on random traces
#      (`openclaw-2026.9` vs 2026.9.6, `documented` vs 2026.7.35);
#   6. end to end in the real OpenClaw 2026.9.6 gateway (tests/e2e);
#   7. a short fuzz run of every target.
# Extra arguments go to `cargo test`. Each stage's runner prints its own summary line.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=setup.sh
. "$ROOT/scripts/setup.sh"
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
stage() { echo "test: $*" >&2; }

stage "cargo test --workspace $*"
cargo test --workspace --exclude loopguard-python "$@"

stage "the Rust quick start (cargo run -p loopguard-host --example quickstart) blocks at call 21"
quickstart="$(cargo run -q -p loopguard-host --example quickstart)"
echo "$quickstart" >&2
grep -q '^call 21: block$' <<<"$quickstart"

stage "cargo test -p loopguard-policy --target wasm32-wasip2 (under wasmtime run)"
# The integration tests read example traces and oracle cases: the checkout is preopened at its own path.
CARGO_TARGET_WASM32_WASIP2_RUNNER="wasmtime run --dir=$ROOT" cargo test -p loopguard-policy --target wasm32-wasip2 --lib --tests

stage "scripts/dist.sh (every release artifact, into dist/)"
bash "$ROOT/scripts/dist.sh"

stage "tests/install/run.sh (the packages in dist/, installed as a user would)"
bash "$ROOT/tests/install/run.sh" "$ROOT/dist"

# The hostile fixture: the Node package's panic test, the plugin's fail-mode and hot-swap tests and
# the e2e stage need it (the e2e stage uses the same build and skips it when present); without it
# those tests would be skipped here.
bash scripts/build-hostile-policy.sh

stage "packages/node: node --test (Node 22, then Node 24)"
# the example gateway imports `loopguard` by name, as a user's would (replay.test.mjs runs it)
# shellcheck source=node22.sh
. scripts/node22.sh
(cd examples/node-gateway && PATH="$NODE22_BIN:$PATH" npm install --no-audit --no-fund --loglevel=error)
(cd packages/node && "$NODE22_BIN/node" --test --test-reporter=spec test/*.test.mjs)
(cd packages/node && "$NODE24_BIN/node" --test test/*.test.mjs)

stage "packages/python: pytest on the built wheel"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps dist/loopguard-*.whl
.venv/bin/python -m pytest -q packages/python/tests

stage "packages/openclaw-plugin: node --test (Node 24; its node_modules come from dist.sh's pack.mjs)"
(cd packages/openclaw-plugin && "$NODE24_BIN/node" --test test/*.test.mjs)

stage "parity (Rust host, wasmtime CLI, Node, Python on every example trace)"
.venv/bin/python -m pytest -q -rA tests/parity

stage "the peers' loop rules of docs/REAL-LOOPS.md (pytest tests/realdata)"
.venv/bin/python -m pytest -q -rA tests/realdata

stage "the OpenClaw oracle (tests/oracle/differential.mjs, short run, the CLI as replayer)"
"$NODE24_BIN/node" tests/oracle/differential.mjs --replayer "$ROOT/target/debug/loopguard replay --config {config} {trace}"

stage "the examples' expected-openclaw-2026.9.jsonl are what the 2026.9.6 package decides (tests/oracle/examples.mjs --check)"
"$NODE24_BIN/node" tests/oracle/examples.mjs --check

stage "the proxies: loopguard mcp (MCP SDK, server-everything) and the LiteLLM guardrail (LiteLLM proxy, 2 workers) (tests/proxies/run.sh)"
bash tests/proxies/run.sh

stage "three replicas sharing a real redis-server (tests/replicas/run.sh)"
bash tests/replicas/run.sh

stage "Claude Code, Codex and Gemini CLI with loopguard's plugins (tests/agent-clis/run.sh)"
bash tests/agent-clis/run.sh

stage "end to end in the real OpenClaw gateway (tests/e2e/run.sh)"
bash tests/e2e/run.sh

# FUZZ_SECONDS=0 skips the fuzz run (e.g. for a quick local run).
FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
if [ "$FUZZ_SECONDS" -gt 0 ]; then
    stage "scripts/fuzz.sh $FUZZ_SECONDS"
    bash "$ROOT/scripts/fuzz.sh" "$FUZZ_SECONDS"
fi
stage "all stages passed"
