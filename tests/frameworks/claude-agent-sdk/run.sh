#!/usr/bin/env bash
# loopguard/claude-agent-sdk against the real Claude Agent SDK 0.3.337 (package-lock.json here),
# network-free, against the scripted model (tests/frameworks/model.py). The SDK drives the Claude
# Code CLI that scripts/setup-agent-clis.sh installs for the agent-CLI tests
# (pathToClaudeCodeExecutable), so the SDK's own ~430 MB platform binary, an optional
# dependency, is not installed (npm ci --omit=optional). Node 22 (scripts/node22.sh).
#   tests/frameworks/claude-agent-sdk/run.sh [node --test args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
HERE="$ROOT/tests/frameworks/claude-agent-sdk"
# shellcheck source=../../../scripts/setup-agent-clis.sh
. "$ROOT/scripts/setup-agent-clis.sh"
if [ -f "$HERE/node_modules/.package-lock.json" ] && ! [ "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]; then
    echo "claude-agent-sdk: node_modules is up to date" >&2
else
    (cd "$HERE" && PATH="$NODE22_BIN:$PATH" npm ci --omit=optional --no-audit --no-fund --loglevel=error)
fi
export CLAUDE_CODE_EXECUTABLE="${CLAUDE_CODE_EXECUTABLE:-$ROOT/tests/agent-clis/node_modules/@anthropic-ai/claude-code/bin/claude.exe}"
cd "$HERE"
PATH="$NODE22_BIN:$PATH" node --test --test-timeout=120000 --test-force-exit "$@" claude-agent-sdk.test.mjs
