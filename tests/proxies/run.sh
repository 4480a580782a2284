#!/usr/bin/env bash
# The proxy tests with the real software (installed by scripts/setup-proxies.sh):
#   1. `loopguard mcp` between the MCP Python SDK 2.3.0 and server-everything 2026.8.31, stdio
#      and streamable HTTP, and over stdio to an SDK-built server on the 2026-07-28 protocol
#      (mcp_scenarios.py);
#   2. the LiteLLM guardrail (`loopguard.litellm`) in LiteLLM proxy 1.108.7 with 2 workers in
#      front of a scripted fake model (litellm_scenarios.py, fake_model.py, agent.py).
# Both run with the agent-facing hosts' default and with an explicit config; what each call must
# get comes from the policy (policy.py: the spec's levels, `loopguard replay`, `loopguard hook`).
# About two to three minutes; everything listens on 127.0.0.1. Usage: tests/proxies/run.sh [mcp|litellm]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/proxies"
cd "$ROOT"
# shellcheck source=../../scripts/setup-proxies.sh
. "$ROOT/scripts/setup-proxies.sh"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/loopguard-proxies.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
what="${1:-all}"
# The proxy under test (mcp) and the policy's own answers (`replay`, `hook`) for both parts.
cargo build -q -p loopguard-cli

if [ "$what" = all ] || [ "$what" = mcp ]; then
    EVERYTHING="$HERE/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    for transport in stdio http modern; do
        echo "proxies: loopguard mcp ($transport) with the MCP SDK and server-everything" >&2
        "$ROOT/.venv/mcp/bin/python" "$HERE/mcp_scenarios.py" "$transport" "$ROOT/target/debug/loopguard" \
            "$NODE24_BIN/node" "$EVERYTHING" "$WORK" \
            || { echo "proxies: mcp $transport failed; logs:" >&2; tail -n 30 "$WORK"/*.log >&2 || true; exit 1; }
    done
fi

if [ "$what" = all ] || [ "$what" = litellm ]; then
    # The loopguard wheel scripts/dist.sh built (or LOOPGUARD_WHEEL), into LiteLLM's venv.
    wheel="${LOOPGUARD_WHEEL:-$(ls "$ROOT"/dist/loopguard-*.whl 2>/dev/null | head -n 1)}"
    [ -n "$wheel" ] || { echo "proxies: no loopguard wheel in dist/ (run scripts/dist.sh)" >&2; exit 1; }
    "$ROOT/.venv/litellm/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
    echo "proxies: the LiteLLM guardrail in LiteLLM proxy 1.108.7 (2 workers) with a scripted model" >&2
    "$ROOT/.venv/litellm/bin/python" "$HERE/litellm_scenarios.py" "$WORK" "$ROOT/target/debug/loopguard"
fi
echo "proxies: all passed" >&2
