#!/usr/bin/env bash
# The real software the end-to-end suites run, each pinned by its lockfile and skipped when
# installed: the OpenClaw releases (setup-openclaw.sh), the agent CLIs (setup-agent-clis.sh),
# the MCP and LiteLLM proxies (setup-proxies.sh), the agent frameworks (setup-frameworks.sh) and
# Chromium for the report page's tests (setup-chromium.sh).
# Several GB from npm and PyPI, nothing to compile: scripts/test.sh runs this in the background
# while Rust builds, and waits for it before the first suite that needs any of it. Each suite's
# own run.sh installs what it needs too, so one suite runs alone without this.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for part in setup-openclaw setup-agent-clis setup-proxies setup-frameworks setup-chromium; do
    started=$SECONDS
    bash "$ROOT/scripts/$part.sh"
    echo "setup-real-software: $part in $((SECONDS - started)) s" >&2
done
