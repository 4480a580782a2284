#!/usr/bin/env bash
# The browser of the report's page tests (tests/report) and of scripts/bench-report.py:
# Debian's `chromium`, driven headless by playwright-core (which downloads no browser of its
# own). Skipped when a chromium is already on PATH. Prints the browser's version.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    echo "setup: $(chromium --version 2>/dev/null | head -1): installed" >&2
    exit 0
fi
echo "setup: apt-get install chromium (Debian)" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
chromium --version >&2
