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
#
# Each stage has a time limit, about three times its usual length on 2 cores (10 minutes at
# least): a test that hangs fails the run, naming its stage, instead of holding CI until the job's
# own limit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=setup.sh
. "$ROOT/scripts/setup.sh"
echo "test: ($SECONDS s: setup)" >&2
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
# The real software of the end-to-end suites (several GB from npm and PyPI) installs while Rust
# builds; `real_software` waits for it before the first suite that needs it.
REAL_LOG="$ROOT/.venv/setup-real-software.log"
setsid bash "$ROOT/scripts/setup-real-software.sh" > "$REAL_LOG" 2>&1 &
REAL_SETUP=$!
real_software() {
    while kill -0 "$REAL_SETUP" 2>/dev/null; do
        if [ $((SECONDS - STAGE_START)) -ge "$STAGE_LIMIT" ]; then
            kill -- "-$REAL_SETUP" 2>/dev/null || kill "$REAL_SETUP" 2>/dev/null || true
            cat "$REAL_LOG" >&2
            echo "test.sh: stage \"$STAGE\" passed its time limit of $STAGE_LIMIT s" >&2
            exit 1
        fi
        sleep 2
    done
    if ! wait "$REAL_SETUP"; then
        cat "$REAL_LOG" >&2
        echo "test.sh: scripts/setup-real-software.sh failed (its log is above)" >&2
        exit 1
    fi
    grep '^setup-real-software:' "$REAL_LOG" >&2 || true
}
# `stage NAME SECONDS` starts a stage; `run CMD…` runs one of its commands in the time the stage
# has left. `timeout` puts the command in a process group of its own and ends all of it (the
# servers and workers a test started too); that group does not get the terminal's Ctrl-C (nor a
# TERM sent to this script), so `run` passes them on.
stage() {
    stage_took
    STAGE="$1" STAGE_LIMIT="$2" STAGE_START=$SECONDS
    echo "test: $1" >&2
}
# Each stage's time, said when it ends (CONTRIBUTING.md keeps a table of them).
stage_took() {
    if [ -n "${STAGE:-}" ]; then echo "test: ($((SECONDS - STAGE_START)) s: $STAGE)" >&2; fi
}
run() {
    local left=$((STAGE_LIMIT - (SECONDS - STAGE_START))) pid rc=0
    timeout -k 30 "$((left > 0 ? left : 1))" "$@" &
    pid=$!
    trap 'kill -INT -- "-$pid" 2>/dev/null; exit 130' INT
    trap 'kill -TERM -- "-$pid" 2>/dev/null; exit 143' TERM
    wait "$pid" || rc=$?
    trap - INT TERM
    if [ "$rc" -ne 0 ] && [ $((SECONDS - STAGE_START)) -ge "$STAGE_LIMIT" ]; then
        echo "test.sh: stage \"$STAGE\" passed its time limit of $STAGE_LIMIT s" >&2
    fi
    return "$rc"
}
# node --test: a test that hangs fails after 5 minutes (Node 22 applies the limit to each file);
# Node 24 otherwise waits for a file's open handles after its last test, which held a run for 10
# minutes once (the tests close what they open, also when they fail; this is the backstop).
NODE_TEST=(--test --test-timeout=300000 --test-force-exit)
# pytest: a test still running after 5 minutes has every thread's stack printed (the stage's
# limit then ends it), so a hang names its test.
PYTEST=(-m pytest -o faulthandler_timeout=300)

stage "cargo test --workspace $*" 3600
run cargo test --workspace --exclude loopguard-python "$@"

stage "the Rust quick start (cargo run -p loopguard-host --example quickstart) blocks at call 21" 600
quickstart="$(run cargo run -q -p loopguard-host --example quickstart)"
echo "$quickstart" >&2
grep -q '^call 21: block$' <<<"$quickstart"

stage "cargo test -p loopguard-policy --target wasm32-wasip2 (under wasmtime run)" 1200
# The integration tests read example traces and oracle cases: the checkout is preopened at its own path.
CARGO_TARGET_WASM32_WASIP2_RUNNER="wasmtime run --dir=$ROOT" run cargo test -p loopguard-policy --target wasm32-wasip2 --lib --tests

stage "scripts/dist.sh (every release artifact, into dist/)" 3600
run bash "$ROOT/scripts/dist.sh"

stage "tests/install/run.sh (the packages in dist/, installed as a user would)" 900
run bash "$ROOT/tests/install/run.sh" "$ROOT/dist"

# The hostile fixture: the Node package's panic test, the plugin's fail-mode and hot-swap tests and
# the e2e stage need it (the e2e stage uses the same build and skips it when present); without it
# those tests would be skipped here.
stage "the hostile test policy (scripts/build-hostile-policy.sh)" 900
run bash scripts/build-hostile-policy.sh

stage "the real software of the end-to-end suites (scripts/setup-real-software.sh, started after setup)" 1800
real_software

stage "packages/node: node --test (Node 22, then Node 24)" 900
# the example gateway imports `loopguard` by name, as a user's would (replay.test.mjs runs it)
# shellcheck source=node22.sh
. scripts/node22.sh
(cd examples/node-gateway && PATH="$NODE22_BIN:$PATH" run npm install --no-audit --no-fund --loglevel=error)
(cd packages/node && run "$NODE22_BIN/node" "${NODE_TEST[@]}" --test-reporter=spec test/*.test.mjs)
(cd packages/node && run "$NODE24_BIN/node" "${NODE_TEST[@]}" test/*.test.mjs)

stage "packages/python: pytest on the built wheel" 600
run .venv/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps dist/loopguard-*.whl
run .venv/bin/python "${PYTEST[@]}" -q packages/python/tests

stage "packages/openclaw-plugin: node --test (Node 24; its node_modules come from dist.sh's pack.mjs)" 600
(cd packages/openclaw-plugin && run "$NODE24_BIN/node" "${NODE_TEST[@]}" test/*.test.mjs)

stage "parity (Rust host, wasmtime CLI, Node, Python on every example trace)" 900
run .venv/bin/python "${PYTEST[@]}" -q -rA tests/parity

stage "the peers' loop rules of docs/REAL-LOOPS.md (pytest tests/realdata)" 600
run .venv/bin/python "${PYTEST[@]}" -q -rA tests/realdata

stage "the OpenClaw oracle (tests/oracle/differential.mjs, short run, the CLI as replayer)" 900
run "$NODE24_BIN/node" tests/oracle/differential.mjs --replayer "$ROOT/target/debug/loopguard replay --config {config} {trace}"

stage "the examples' expected-openclaw-2026.9.jsonl are what the 2026.9.6 package decides (tests/oracle/examples.mjs --check)" 600
run "$NODE24_BIN/node" tests/oracle/examples.mjs --check

stage "the proxies: loopguard mcp (MCP SDK, server-everything) and the LiteLLM guardrail (LiteLLM proxy, 2 workers) (tests/proxies/run.sh)" 1200
run bash tests/proxies/run.sh

stage "metrics: a real Prometheus 2.42 scrapes loopguard mcp --listen while the MCP SDK loops through it (tests/metrics/run.sh)" 600
run bash tests/metrics/run.sh

stage "three replicas sharing a real redis-server, then a real Redis Cluster (tests/replicas/run.sh)" 600
run bash tests/replicas/run.sh

stage "store faults through the Rust, Node and Python store loops, the same decisions and counters (tests/store-conformance/run.sh)" 600
NODE="$NODE24_BIN/node" run bash tests/store-conformance/run.sh

stage "the coding CLIs with loopguard's plugins: Claude Code, Codex, Gemini CLI, Copilot CLI, Qwen Code, OpenCode, Cline (tests/agent-clis/run.sh)" 2700
run bash tests/agent-clis/run.sh -o faulthandler_timeout=300

stage "loopguard report's page in headless Chromium: the overview is transcripts --json, a session opens at its first block, --compare, markup stays text, no request (tests/report/run.sh)" 600
run bash tests/report/run.sh

stage "the framework adapters with the real frameworks (tests/frameworks/run.sh)" 900
run bash tests/frameworks/run.sh

stage "end to end in the real OpenClaw gateway (tests/e2e/run.sh)" 1800
run bash tests/e2e/run.sh

# FUZZ_SECONDS=0 skips the fuzz run (e.g. for a quick local run).
FUZZ_SECONDS="${FUZZ_SECONDS:-10}"
if [ "$FUZZ_SECONDS" -gt 0 ]; then
    # the build, then each of the few targets for FUZZ_SECONDS
    stage "scripts/fuzz.sh $FUZZ_SECONDS" $((1800 + 20 * FUZZ_SECONDS))
    run bash "$ROOT/scripts/fuzz.sh" "$FUZZ_SECONDS"
fi
stage_took
echo "test: all stages passed in $SECONDS s" >&2
