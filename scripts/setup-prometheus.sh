#!/usr/bin/env bash
# The real scraper of the metrics test (tests/metrics): Debian's `prometheus` (bookworm: 2.42).
# Skipped when a prometheus >= 2 is already on PATH. The package's own service is not used: the
# test starts its server on 127.0.0.1 with a generated config and its own data folder.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1; then
    v="$(prometheus --version 2>&1 | sed -n 's/^prometheus, version \([0-9]*\)\..*/\1/p')"
    if [ "${v:-0}" -ge 2 ]; then
        echo "setup: $(prometheus --version 2>&1 | head -n 1 | cut -d' ' -f1-3): installed" >&2
        exit 0
    fi
fi
echo "setup: apt-get install prometheus (Debian, >= 2.42)" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package starts a system service on 9090; the test never uses it.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    $SUDO systemctl stop prometheus || true
fi
prometheus --version 2>&1 | head -n 1 >&2
