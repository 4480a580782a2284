#!/usr/bin/env bash
# The store conformance suite: the store faults of scenarios.json (down, slow, a conflict storm,
# an unreadable value, TLS failures) through the Rust (`loopguard replay --store`), Node
# (StoredLoopGuard) and Python (LoopGuard(store=…)) store loops, each expected to give the
# table's decisions and counters. Needs redis-server >= 7 (scripts/setup-redis.sh), the CLI
# (target/debug/loopguard, built here when missing), Node 24 (scripts/node24.sh, or NODE=…) with
# the Node package built (scripts/dist.sh or `node scripts/build.mjs WASM`) and the loopguard
# Python package in .venv. About a minute. Extra arguments go to run.py (--only NAME, --hosts …).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
command -v redis-server >/dev/null || { echo "store-conformance: redis-server is missing; run scripts/setup-redis.sh" >&2; exit 1; }
BIN="${LOOPGUARD_BIN:-$ROOT/target/debug/loopguard}"
[ -x "$BIN" ] || cargo build -q -p loopguard-cli
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
if [ -z "${NODE:-}" ]; then
    # shellcheck source=../../scripts/node24.sh
    . scripts/node24.sh
    NODE="$NODE24_BIN/node"
fi
"$PY" tests/store-conformance/run.py --bin "$BIN" --node "$NODE" --python "$PY" "$@"
