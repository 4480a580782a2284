#!/usr/bin/env bash
# The metrics with a real scraper: Debian's Prometheus 2.42 (scripts/setup-prometheus.sh) on
# 127.0.0.1 with a 1 s scrape interval scrapes `loopguard mcp --listen`'s /metrics while the MCP
# Python SDK's client loops through the proxy in front of server-everything (the pieces of
# tests/proxies, installed by scripts/setup-proxies.sh); a PromQL query must return the blocks
# the client saw (scrape.py). About half a minute. Usage: tests/metrics/run.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
bash "$ROOT/scripts/setup-prometheus.sh"
# shellcheck source=../../scripts/node24.sh
. "$ROOT/scripts/node24.sh"
EVERYTHING="$ROOT/tests/proxies/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
for need in "$ROOT/.venv/mcp/bin/python" "$EVERYTHING"; do
    [ -e "$need" ] || { echo "metrics: $need is missing; run scripts/setup-proxies.sh" >&2; exit 1; }
done
WORK="$(mktemp -d "${TMPDIR:-/tmp}/loopguard-metrics.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cargo build -q -p loopguard-cli
"$ROOT/.venv/mcp/bin/python" "$ROOT/tests/metrics/scrape.py" "$ROOT/target/debug/loopguard" "$(command -v prometheus)" \
    "$NODE24_BIN/node" "$EVERYTHING" "$WORK" \
    || { echo "metrics: failed; logs:" >&2; tail -n 20 "$WORK"/*.log >&2 || true; exit 1; }
