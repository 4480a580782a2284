#!/usr/bin/env bash
# The real store of the multi-replica tests (tests/replicas) and scripts/bench-store.py:
# Debian's `redis-server` (bookworm: 7.0.15, with Lua scripting and Functions; Valkey is not
# packaged for bookworm). Skipped when a redis-server >= 7 is already on PATH. The package's own
# service is not used: the tests start their server on 127.0.0.1 with persistence off.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
    v="$(redis-server --version | sed -n 's/.* v=\([0-9]*\)\..*/\1/p')"
    if [ "${v:-0}" -ge 7 ]; then
        echo "setup: $(redis-server --version | cut -d' ' -f1-3): installed" >&2
        exit 0
    fi
fi
echo "setup: apt-get install redis-server (Debian, >= 7.0)" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
# The package starts a system service on 6379; the tests never use it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then
    $SUDO systemctl stop redis-server || true
fi
redis-server --version >&2
