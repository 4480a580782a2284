#!/usr/bin/env bash
# The agent frameworks the adapters' tests run (tests/frameworks), pinned by lockfiles:
#   - each folder tests/frameworks/*/ with a package-lock.json: `npm ci` (Node 22), skipped when
#     the lockfile is not newer than the install;
#   - each tests/frameworks/python/NAME.lock: a venv .venv/fw/NAME (tests/frameworks/python/venv.sh,
#     skipped when made from the same lock), two at a time.
# The `loopguard` packages themselves come from dist/ when the tests run. scripts/test.sh starts
# this in the background while it builds, and waits for it before the frameworks' stage.
set -euo pipefail
_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=node22.sh
. "$_ROOT/scripts/node22.sh"
started=$SECONDS
for lock in "$_ROOT"/tests/frameworks/*/package-lock.json; do
    [ -f "$lock" ] || continue
    dir="$(dirname "$lock")"
    if [ -f "$dir/node_modules/.package-lock.json" ] && ! [ "$lock" -nt "$dir/node_modules/.package-lock.json" ]; then
        echo "setup-frameworks: ${dir#"$_ROOT"/}/node_modules is up to date" >&2
    else
        echo "setup-frameworks: npm ci (${dir#"$_ROOT"/})" >&2
        (cd "$dir" && PATH="$NODE22_BIN:$PATH" npm ci --no-audit --no-fund --loglevel=error)
    fi
done
locks=("$_ROOT"/tests/frameworks/python/*.lock)
if [ -f "${locks[0]}" ]; then
    printf '%s\n' "${locks[@]}" | xargs -P 2 -I{} sh -c 'bash "$0/tests/frameworks/python/venv.sh" "$(basename "$1" .lock)"' "$_ROOT" {}
fi
echo "setup-frameworks: done in $((SECONDS - started)) s" >&2
