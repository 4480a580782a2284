#!/usr/bin/env bash
# Builds loopguard and replays one example trace, then says where the guard fired.
# Usage: scripts/demo.sh [example-name]    (default: $EXAMPLE or quickstart)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
EXAMPLE="${1:-${EXAMPLE:-quickstart}}"
DIR="examples/traces/$EXAMPLE"
CONFIG="$DIR/config.json5"
[ -f "$CONFIG" ] || CONFIG="$DIR/config.json"
TRACE="$DIR/trace.jsonl"
[ -f "$TRACE" ] || { echo "demo: no trace at $TRACE; examples: $(ls examples/traces | tr '\n' ' ')" >&2; exit 2; }

echo "demo: cargo build --release -p loopguard-host" >&2
cargo build --release -q -p loopguard-host
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
echo "demo: loopguard replay --config $CONFIG $TRACE" >&2
target/release/loopguard replay --config "$CONFIG" "$TRACE" > "$OUT"

total=$(wc -l < "$OUT")
echo
echo "== $EXAMPLE: $total decisions =="
grep -o '"action":"[a-z_]*"' "$OUT" | sort | uniq -c | sed 's/"action":"\(.*\)"/\1/' | awk '{printf "  %-10s %s\n", $2, $1}'
fired=$(grep -E '"action":"(warn|block|abort|suppress|stop)"' "$OUT" || true)
echo
if [ -z "$fired" ]; then
    echo "The guard did not fire: nothing in this trace loops."
else
    echo "Where the guard fired (trace line: kind, action, detector/reason, count):"
    printf '%s\n' "$fired" | python3 -c '
import json, sys
for raw in sys.stdin:
    d = json.loads(raw)
    why = d.get("detector") or d.get("budget") or d.get("reason") or ""
    count = " x%s" % d["count"] if "count" in d else ""
    msg = d.get("message", "")
    msg = ": " + msg[:100] + ("..." if len(msg) > 100 else "") if msg else ""
    print("  line %5s  %-12s %-8s %s%s%s" % (d["line"], d["kind"], d["action"], why, count, msg))
'
fi
