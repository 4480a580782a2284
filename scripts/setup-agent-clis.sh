#!/usr/bin/env bash
# The real agent CLIs the hook end-to-end tests run (tests/agent-clis/run.sh), from npm, pinned by
# tests/agent-clis/package-lock.json: @anthropic-ai/claude-code 2.1.332 (a native binary in its
# platform package), @openai/codex 0.171.0 (a native binary), @google/gemini-cli 0.61.0 (Node),
# opencode-ai 1.18.33 (+ @opencode-ai/plugin), cline 3.0.65 and @github/copilot 1.0.102 (native
# binaries in platform packages) and @qwen-code/qwen-code 0.24.4 (Node). About 2.7 GB; `npm ci`
# runs only when the lockfile is newer than the install. Needs Node 22 (scripts/node22.sh).
# Source it: afterwards AGENT_CLIS_BIN is tests/agent-clis/node_modules/.bin.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=node22.sh
. "$_ROOT/scripts/node22.sh"
_ac="$_ROOT/tests/agent-clis"
if [ -f "$_ac/node_modules/.package-lock.json" ] && ! [ "$_ac/package-lock.json" -nt "$_ac/node_modules/.package-lock.json" ] \
    && "$_ac/node_modules/.bin/claude" --version >/dev/null 2>&1 \
    && "$_ac/node_modules/.bin/opencode" --version >/dev/null 2>&1; then
    echo "setup: tests/agent-clis/node_modules is up to date" >&2
else
    echo "setup: npm ci (tests/agent-clis: claude-code, codex, gemini-cli, opencode, cline, copilot, qwen-code)" >&2
    # --ignore-scripts: node-pty and keytar (Gemini CLI's interactive mode) are not needed for
    # `gemini -p`; Claude Code's and OpenCode's own postinstalls only link or copy the binary of
    # their (already installed) platform package into place, run below; OpenCode's bin is a stub
    # that fails until it has run. Cline's postinstall only caches a hard link (its launcher finds
    # the platform binary without it) and touches ~/.cline, so it is not run. Copilot CLI has none
    # (its runtime self-extracts into ~/.cache/copilot at first start).
    (cd "$_ac" && PATH="$NODE22_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    (cd "$_ac" && PATH="$NODE22_BIN:$PATH" node node_modules/@anthropic-ai/claude-code/install.cjs)
    (cd "$_ac/node_modules/opencode-ai" && PATH="$NODE22_BIN:$PATH" node postinstall.mjs)
fi
AGENT_CLIS_BIN="$_ac/node_modules/.bin"
export AGENT_CLIS_BIN
echo "setup: $("$AGENT_CLIS_BIN/claude" --version), $("$AGENT_CLIS_BIN/codex" --version)," \
    "opencode $("$AGENT_CLIS_BIN/opencode" --version), cline $("$AGENT_CLIS_BIN/cline" --version)" >&2
