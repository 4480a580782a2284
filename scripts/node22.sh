#!/usr/bin/env bash
# Node 22, the older of the two Node lines the packages support (engines ">=22"), from the pinned
# PyPI wheel, in a venv of its own, .venv/node22-venv (one venv holds one version of the wheel;
# scripts/node-wheel.sh).
#
# Source it: afterwards NODE22_BIN is the directory with node, npm and npx (Node 22). It does
# not put them on PATH; callers that want Node 22 prepend "$NODE22_BIN" themselves.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE22_VERSION="22.20.0"
# shellcheck source=node-wheel.sh
. "$_ROOT/scripts/node-wheel.sh"
node_from_wheel "$NODE22_VERSION" "$_ROOT/.venv/node22-venv" "$_ROOT/.venv/node22/bin"
NODE22_BIN="$_ROOT/.venv/node22/bin"
export NODE22_BIN
