#!/usr/bin/env bash
# The Node adapters' tests with the real frameworks (ai, langchain, @openai/agents, @mastra/core,
# pinned in package-lock.json), against the scripted model on 127.0.0.1; network-free once
# installed. Node 22 (ai 7 and Mastra need it).
#   bash tests/frameworks/node/run.sh [FILE.test.mjs ...]     default: every *.test.mjs here
#   bash tests/frameworks/node/run.sh --install               install only (for scripts/setup.sh)
# `loopguard` is packages/node (a file: link; it needs node_modules and generated/, as
# scripts/dist.sh leaves it), or the npm tarball LOOPGUARD_NPM_TGZ (dist/loopguard-*.tgz: what
# ships, its dependencies taken from packages/node/node_modules). Installs with `npm ci`, skipped
# when node_modules is not older than package-lock.json (the rule of scripts/setup-frameworks.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
if [ -z "${NODE22_BIN:-}" ]; then
    # shellcheck source=../../../scripts/node22.sh
    . "$root/scripts/node22.sh"
fi
export PATH="$NODE22_BIN:$PATH"

pkg="$root/packages/node"
if [ ! -d "$pkg/node_modules" ] || { [ -z "${LOOPGUARD_NPM_TGZ:-}" ] && [ ! -f "$pkg/generated/loopguard_policy.js" ]; }; then
    echo "run.sh: packages/node is not built (no generated/ or node_modules/): run scripts/dist.sh, or" >&2
    echo "        (cd packages/node && npm ci && npm run build)" >&2
    exit 2
fi

cd "$here"
if [ -f node_modules/.package-lock.json ] && ! [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "run.sh: node_modules is up to date" >&2
else
    started=$(date +%s)
    npm ci --no-audit --no-fund --loglevel=error
    echo "run.sh: npm ci took $(( $(date +%s) - started )) s" >&2
fi
if [ "${1:-}" = "--install" ]; then exit 0; fi

# --preserve-symlinks: `loopguard` is a link to packages/node (file:); the adapters import their
# framework (an optional peer), which lives here, beside the link, as in a user's node_modules.
if [ -n "${LOOPGUARD_NPM_TGZ:-}" ]; then
    unpacked="$(mktemp -d)"
    trap 'ln -sfn ../../../../packages/node node_modules/loopguard; rm -rf "$unpacked"' EXIT
    tar xzf "$LOOPGUARD_NPM_TGZ" -C "$unpacked"
    ln -s "$pkg/node_modules" "$unpacked/package/node_modules"
    ln -sfn "$unpacked/package" node_modules/loopguard
    echo "run.sh: loopguard from $LOOPGUARD_NPM_TGZ" >&2
fi
if [ "$#" -eq 0 ]; then set -- *.test.mjs; fi
node --preserve-symlinks --test --test-timeout=120000 --test-force-exit --test-reporter=spec "$@"
