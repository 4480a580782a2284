#!/usr/bin/env bash
# The real OpenClaw releases the tests use, from npm, pinned by tests/openclaw/package-lock.json:
# `openclaw` 2026.9.6 (the gateway of the end-to-end tests, and one oracle) and 2026.7.35 (the
# other oracle, as `openclaw-2026.7.35`). About 900 MB; `npm ci` runs only when the lockfile is
# newer than the install. Needs Node 24 (scripts/node24.sh). Source it: afterwards
# OPENCLAW_DIR is tests/openclaw/node_modules/openclaw and NODE24_BIN is set.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=node24.sh
. "$_ROOT/scripts/node24.sh"
_oc="$_ROOT/tests/openclaw"
if [ -f "$_oc/node_modules/.package-lock.json" ] && ! [ "$_oc/package-lock.json" -nt "$_oc/node_modules/.package-lock.json" ]; then
    echo "setup: tests/openclaw/node_modules is up to date" >&2
else
    echo "setup: npm ci (tests/openclaw: openclaw 2026.9.6 and 2026.7.35, ~1 minute)" >&2
    # --ignore-scripts: openclaw's postinstall only prunes its own dist/ and repairs an addon
    # that ships prebuilt; npm 11 would not run the dependencies' scripts anyway.
    (cd "$_oc" && PATH="$NODE24_BIN:$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
OPENCLAW_DIR="$_oc/node_modules/openclaw"
export OPENCLAW_DIR
echo "setup: openclaw $(PATH="$NODE24_BIN:$PATH" node -p "require('$OPENCLAW_DIR/package.json').version")" >&2
