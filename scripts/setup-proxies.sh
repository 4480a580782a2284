#!/usr/bin/env bash
# The real software of the proxy tests (tests/proxies), pinned, each step skipped when done:
#   - `@modelcontextprotocol/server-everything` 2026.8.31 from tests/proxies/package-lock.json
#     (`npm ci` only when the lockfile is newer than the install; Node 24),
#   - the official MCP Python SDK `mcp==2.3.0` in its own venv .venv/mcp,
#   - `litellm[proxy]==1.108.7` in its own venv .venv/litellm (about 760 MB, ~1.5 minutes; its
#     dependencies must not disturb the project venv). 1.108.7 is the newest release whose
#     `[proxy]` extra resolves from the registry (docs/PROXIES.md).
# The loopguard wheel is installed into .venv/litellm by tests/proxies/run.sh (it is built later).
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=node24.sh
. "$_ROOT/scripts/node24.sh"
_px="$_ROOT/tests/proxies"
if [ -f "$_px/node_modules/.package-lock.json" ] && ! [ "$_px/package-lock.json" -nt "$_px/node_modules/.package-lock.json" ]; then
    echo "setup: tests/proxies/node_modules is up to date" >&2
else
    echo "setup: npm ci (tests/proxies: @modelcontextprotocol/server-everything 2026.8.31)" >&2
    (cd "$_px" && PATH="$NODE24_BIN:$PATH" npm ci --no-audit --no-fund --loglevel=error)
fi
# venv_with DIR REQUIREMENT: a venv at DIR holding exactly REQUIREMENT (stamp file = the requirement).
venv_with() {
    local dir="$1" req="$2"
    if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$req" ]; then
        echo "setup: $req in ${dir#"$_ROOT/"}: installed" >&2
        return
    fi
    echo "setup: pip install '$req' into ${dir#"$_ROOT/"}" >&2
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$req"
    printf '%s' "$req" >"$dir/.installed"
}
venv_with "$_ROOT/.venv/mcp" "mcp==2.3.0"
venv_with "$_ROOT/.venv/litellm" "litellm[proxy]==1.108.7"
