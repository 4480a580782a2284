#!/usr/bin/env bash
# `loopguard report`'s page in a real headless Chromium (report.test.mjs). Builds nothing: the
# CLI is $LOOPGUARD_BIN (default target/debug/loopguard); Chromium comes from
# scripts/setup-chromium.sh, playwright-core from this folder's lockfile (no browser download).
# Screenshots go to target/report/. Prints one summary line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export LOOPGUARD_BIN="${LOOPGUARD_BIN:-target/debug/loopguard}"
[ -x "$LOOPGUARD_BIN" ] || { echo "tests/report: no CLI at $LOOPGUARD_BIN (cargo build -p loopguard-cli, or set LOOPGUARD_BIN)" >&2; exit 2; }
bash scripts/setup-chromium.sh
# shellcheck source=../../scripts/node22.sh
. scripts/node22.sh
if [ ! -d tests/report/node_modules/playwright-core ] || [ tests/report/package-lock.json -nt tests/report/node_modules ]; then
    (cd tests/report && PATH="$NODE22_BIN:$PATH" PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if "$NODE22_BIN/node" --test --test-reporter=tap tests/report/report.test.mjs >"$log" 2>&1; then status=0; else status=$?; cat "$log"; fi
pass="$(sed -n 's/^# pass //p' "$log")"
fail="$(sed -n 's/^# fail //p' "$log")"
echo "tests/report: ${pass:-0} passed, ${fail:-?} failed (screenshots in target/report/)"
exit "$status"
