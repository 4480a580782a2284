#!/usr/bin/env bash
# The agent-CLI plugins, ready to install, each with the prebuilt `loopguard` binary inside:
#
#   scripts/pack-agent-plugins.sh OUT LOOPGUARD_BINARY
#
#   OUT/claude-code-plugin/   a Claude Code marketplace (`claude plugin marketplace add OUT/claude-code-plugin`)
#   OUT/codex-plugin/         a Codex marketplace (`codex plugin marketplace add OUT/codex-plugin`)
#   OUT/gemini-extension/     a Gemini CLI extension (`gemini extensions install OUT/gemini-extension`)
#   OUT/copilot-hooks/        Copilot CLI command hooks (`bash OUT/copilot-hooks/install.sh`)
#
# Why the binary rides inside: each CLI runs a hook as a fresh process per tool call, so the
# hook's start-up is paid on every call; the native CLI starts and answers in a few milliseconds
# (scripts/bench-hook.py), and the user needs neither Rust nor Python. The hook commands find it
# through the CLI's plugin-root variable. scripts/dist.sh calls this with dist/loopguard; the
# end-to-end tests (tests/agent-clis/run.sh) with the release build.
#
# The copies are stripped of their symbol table (`strip`, where there is one; 24 -> 21 MB): Codex
# 0.171 reads and hashes every file of a plugin before each of its hook calls (its trust check),
# about 1 ms per MB per call, so every byte in the plugin is paid on every tool call (twice).
# A panic's backtrace then shows addresses, not function names.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:?usage: pack-agent-plugins.sh OUT LOOPGUARD_BINARY}"
BIN="${2:?usage: pack-agent-plugins.sh OUT LOOPGUARD_BINARY}"
[ -x "$BIN" ] || { echo "pack-agent-plugins: $BIN is not an executable" >&2; exit 1; }
mkdir -p "$OUT"
for pkg in claude-code-plugin codex-plugin gemini-extension copilot-hooks; do
    rm -rf "${OUT:?}/$pkg"
    cp -R "$ROOT/packages/$pkg" "$OUT/$pkg"
done
for plugin_root in "$OUT/claude-code-plugin/plugin" "$OUT/codex-plugin/plugins/loopguard" "$OUT/gemini-extension" "$OUT/copilot-hooks"; do
    mkdir -p "$plugin_root/bin"
    cp "$BIN" "$plugin_root/bin/loopguard"
    if command -v strip >/dev/null && ! strip "$plugin_root/bin/loopguard" 2>/dev/null; then
        cp "$BIN" "$plugin_root/bin/loopguard"  # not a format this strip knows: keep it whole
    fi
    chmod 755 "$plugin_root/bin/loopguard"
done
