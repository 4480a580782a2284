#!/usr/bin/env bash
# The OpenClaw end-to-end suite: the real gateway (openclaw 2026.9.6 from tests/openclaw) with the
# fake model / fake Telegram of this folder, one gateway at a time. Needs Node 24 (scripts/node24.sh)
# and, for the npm-pack install test, the npm registry. About 4-6 minutes on 2 cores.
#   tests/e2e/run.sh                      everything
#   tests/e2e/run.sh tests/e2e/core-guard.test.mjs    one file
# Env: E2E_KEEP=1 keeps the temp dirs; E2E_NPM_CACHE=<dir> shares an npm cache between runs
# (faster npm-pack installs); E2E_TMP=<dir> puts the temp dirs elsewhere.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../../scripts/setup-openclaw.sh
. "$ROOT/scripts/setup-openclaw.sh"
cd "$ROOT"
if [ "$#" -eq 0 ]; then set -- tests/e2e/*.test.mjs; fi
start=$(date +%s)
status=0
# --test-force-exit: Node 24 otherwise waits for a file's open handles after its last test, with no
# output; a failing test's leftover must not hold the suite (the limit per test is 10 minutes).
"$NODE24_BIN/node" --test --test-concurrency=1 --test-timeout=600000 --test-force-exit "$@" || status=$?
echo "e2e: wall time $(( $(date +%s) - start )) s (exit $status)" >&2
exit "$status"
