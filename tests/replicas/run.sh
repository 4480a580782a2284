#!/usr/bin/env bash
# Three loopguard replicas sharing one real redis-server (docs/SCALING.md): parity with one node's
# replay in commit order, the negative control, store faults (SIGSTOP, kill + restart), fail
# closed, unreadable values; then the same replicas on a real Redis Cluster of six redis-servers
# (tests/replicas/cluster.py: parity, slots resharded mid-storm, a primary killed mid-storm). Needs
# redis-server >= 7 (scripts/setup-redis.sh) and the CLI (target/debug/loopguard, built here when
# missing). About 35 seconds.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
command -v redis-server >/dev/null || { echo "replicas: redis-server is missing; run scripts/setup-redis.sh" >&2; exit 1; }
BIN="${LOOPGUARD_BIN:-$ROOT/target/debug/loopguard}"
[ -x "$BIN" ] || cargo build -q -p loopguard-cli
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
"$PY" tests/replicas/storm.py --bin "$BIN" "$@"
if [ -z "${NODE:-}" ]; then
    # shellcheck source=../../scripts/node24.sh
    . scripts/node24.sh
    NODE="$NODE24_BIN/node"
fi
# The Node and Python packages take a turn on the cluster too: packages/node's node_modules and
# the loopguard wheel in .venv (scripts/test.sh's Node and Python stages) are needed.
"$PY" tests/replicas/cluster.py --bin "$BIN" --node "$NODE" --python "$PY"
