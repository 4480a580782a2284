#!/usr/bin/env bash
# The real agent CLIs the hook end-to-end tests run (tests/agent-clis/run.sh), from npm, pinned by
# tests/agent-clis/package-lock.json: @anthropic-ai/claude-code 2.1.332 (a native binary in its
# platform package), @openai/codex 0.171.0 (a native binary) and @google/gemini-cli 0.61.0 (Node).
# About 700 MB; `npm ci` runs only when the lockfile is newer than the install. Needs Node 22
# (scripts/node22.sh). Source it: afterwards AGENT_CLIS_BIN is tests/agent-clis/node_modules/.bin.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=node22.sh
. "$_ROOT/scripts/node22.sh"
_ac="$_ROOT/tests/agent-clis"
if [ -f "$_ac/node_modules/.package-lock.json" ] && ! [ "$_ac/package-lock.json" -nt "$_ac/node_modules/.package-lock.json" ] \
    && "$_ac/node_modules/.bin/claude" --version >/dev/null 2>&1; then
    echo "setup: tests/agent-clis/node_modules is up to date" >&2
else
    echo "setup: npm ci (tests/agent-clis: claude-code 2.1.332, codex 0.171.0, gemini-cli 0.61.0)" >&2
    # --ignore-scripts: node-pty and keytar (Gemini CLI's interactive mode) are not needed for
    # `gemini -p`; Claude Code's own postinstall only links its platform binary, run below.
    (cd "$_ac" && PATH="$NODE22_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    (cd "$_ac" && PATH="$NODE22_BIN:$PATH" node node_modules/@anthropic-ai/claude-code/install.cjs)
fi
AGENT_CLIS_BIN="$_ac/node_modules/.bin"
export AGENT_CLIS_BIN
echo "setup: $("$AGENT_CLIS_BIN/claude" --version), $("$AGENT_CLIS_BIN/codex" --version)" >&2
