#!/usr/bin/env bash
# Builds the hostile test policy (tests/hostile-policy, feature session-suffix: it traps, spins or
# swaps on cue) into target/hostile-gateway. The plugin's unit tests (fail modes, hot swap) and
# the end-to-end tests load it; both call this script, so the build is written down once.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec cargo build --release --target wasm32-wasip2 --manifest-path "$ROOT/tests/hostile-policy/Cargo.toml" \
    --target-dir "$ROOT/target/hostile-gateway" --features session-suffix
