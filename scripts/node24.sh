#!/usr/bin/env bash
# Node 24 (the OpenClaw tests need Node >= 24.16; the packages are tested on it and on Node 22,
# scripts/node22.sh), from the pinned PyPI wheel, in the project venv .venv (scripts/node-wheel.sh).
#
# Source it: afterwards NODE24_BIN is the directory with node, npm and npx (Node 24). It does
# not put them on PATH; callers that want Node 24 prepend "$NODE24_BIN" themselves.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE24_VERSION="24.19.0"
# shellcheck source=node-wheel.sh
. "$_ROOT/scripts/node-wheel.sh"
node_from_wheel "$NODE24_VERSION" "$_ROOT/.venv" "$_ROOT/.venv/node24/bin"
NODE24_BIN="$_ROOT/.venv/node24/bin"
export NODE24_BIN
