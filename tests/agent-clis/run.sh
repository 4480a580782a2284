#!/usr/bin/env bash
# loopguard in the real coding CLIs (docs/AGENT-CLIS.md): Claude Code 2.1.332, Codex 0.171.0, Gemini
# CLI 0.61.0, GitHub Copilot CLI 1.0.102 and Qwen Code 0.24.4 (hook processes), OpenCode 1.18.33
# and Cline 3.0.65 (in-process plugins on the npm package, which must be built: scripts/dist.sh),
# each installed the way its users install plugins, each with its own HOME against a scripted
# fake model on 127.0.0.1 (fake-model.mjs): loops, and healthy work that must never be denied
# (work.py); plus `loopguard hook` alone (concurrent processes, bounds, fail modes, deadline).
# About 10 minutes on the 2-core VM (more while it builds).
#
#   tests/agent-clis/run.sh [pytest args]
#
# The binary inside the plugins: $LOOPGUARD_BIN, else dist/loopguard (scripts/dist.sh), else the
# release build (built here when missing). The CLIs come from scripts/setup-agent-clis.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# shellcheck source=../../scripts/setup-agent-clis.sh
. "$ROOT/scripts/setup-agent-clis.sh"
if [ -z "${LOOPGUARD_BIN:-}" ]; then
    if [ -x "$ROOT/dist/loopguard" ]; then
        LOOPGUARD_BIN="$ROOT/dist/loopguard"
    else
        [ -x "$ROOT/target/release/loopguard" ] || cargo build -q --release -p loopguard-cli
        LOOPGUARD_BIN="$ROOT/target/release/loopguard"
    fi
fi
export LOOPGUARD_BIN NODE22_BIN
PY="$ROOT/.venv/bin/python"
"$PY" -m pytest -q -p no:cacheprovider tests/agent-clis "$@"
