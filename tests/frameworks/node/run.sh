#!/usr/bin/env bash
# The Node adapters' tests with the real frameworks (ai, langchain, @openai/agents, @mastra/core,
# pinned in package-lock.json), against the scripted model on 127.0.0.1; network-free once
# installed. Node 22 (ai 7 and Mastra need it).
#   bash tests/frameworks/node/run.sh [FILE.test.mjs ...]     default: every *.test.mjs here
#   bash tests/frameworks/node/run.sh --install               install only (for scripts/setup.sh)
# Needs the built Node package (packages/node: node_modules and generated/, as scripts/dist.sh
# leaves it). Installs with `npm ci`, skipped when node_modules was made from the same lockfile.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
if [ -z "${NODE22_BIN:-}" ]; then
    # shellcheck source=../../../scripts/node22.sh
    . "$root/scripts/node22.sh"
fi
export PATH="$NODE22_BIN:$PATH"

pkg="$root/packages/node"
if [ ! -f "$pkg/generated/loopguard_policy.js" ] || [ ! -d "$pkg/node_modules" ]; then
    echo "run.sh: packages/node is not built (no generated/ or node_modules/): run scripts/dist.sh, or" >&2
    echo "        (cd packages/node && npm ci && npm run build)" >&2
    exit 2
fi

cd "$here"
stamp="$(sha256sum package-lock.json | cut -c1-16)"
if [ -f node_modules/.lock-stamp ] && [ "$(cat node_modules/.lock-stamp)" = "$stamp" ]; then
    echo "run.sh: node_modules made from this package-lock.json" >&2
else
    started=$(date +%s)
    npm ci --no-audit --no-fund --loglevel=error
    echo "$stamp" > node_modules/.lock-stamp
    echo "run.sh: npm ci took $(( $(date +%s) - started )) s" >&2
fi

if [ "${1:-}" = "--install" ]; then exit 0; fi

# --preserve-symlinks: `loopguard` is a link to packages/node (file:); the adapters import their
# framework (an optional peer), which lives here, beside the link, as in a user's node_modules.
if [ "$#" -eq 0 ]; then set -- *.test.mjs; fi
exec node --preserve-symlinks --test --test-timeout=120000 --test-force-exit --test-reporter=spec "$@"
