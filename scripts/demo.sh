#!/usr/bin/env bash
# Builds loopguard and replays one example trace, then says where the guard fired.
# Usage: scripts/demo.sh [example-name]    (default: $EXAMPLE or exec-poll-no-progress; PROFILE=release
#        for an optimized build)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
EXAMPLE="${1:-${EXAMPLE:-exec-poll-no-progress}}"
DIR="examples/traces/$EXAMPLE"
CONFIG="$DIR/config.json5"
[ -f "$CONFIG" ] || CONFIG="$DIR/config.json"
TRACE="$DIR/trace.jsonl"
[ -f "$TRACE" ] || { echo "demo: no trace at $TRACE; examples: $(ls examples/traces | tr '\n' ' ')" >&2; exit 2; }

# Building the default policy needs the wasm32-wasip2 target (nothing else: no wasmtime CLI).
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    echo "demo: rustup target add wasm32-wasip2" >&2
    rustup target add wasm32-wasip2
fi

# The debug build is the one the tests already made (a release build of wasmtime takes many
# minutes on a small machine); compiled policies are cached, so replay is fast either way.
PROFILE="${PROFILE:-debug}"
if [ "$PROFILE" = release ]; then
    echo "demo: cargo build --release -p loopguard-cli" >&2
    cargo build --release -q -p loopguard-cli
else
    echo "demo: cargo build -p loopguard-cli" >&2
    cargo build -q -p loopguard-cli
fi
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
echo "demo: loopguard replay --config $CONFIG $TRACE" >&2
"target/$PROFILE/loopguard" replay --config "$CONFIG" "$TRACE" > "$OUT"

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
rows = sys.stdin.read().splitlines()
for raw in rows[:25]:
    d = json.loads(raw)
    why = d.get("detector") or d.get("budget") or d.get("reason") or ""
    count = " x%s" % d["count"] if "count" in d else ""
    if "cooldown_until_ms" in d:
        count = " until %s ms" % d["cooldown_until_ms"]
    msg = d.get("message", "")
    msg = ": " + msg[:100] + ("..." if len(msg) > 100 else "") if msg else ""
    print("  line %5s  %-13s %-8s %s%s%s" % (d["line"], d["kind"], d["action"], why, count, msg))
if len(rows) > 25:
    print("  ... and %d more" % (len(rows) - 25))
'
fi
