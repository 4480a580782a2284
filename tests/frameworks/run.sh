#!/usr/bin/env bash
# The framework adapters with the real frameworks (docs/FRAMEWORKS.md), each against the scripted
# model on 127.0.0.1 (model.py): every suite folder's own run.sh (Node: tests/frameworks/node,
# tests/frameworks/claude-agent-sdk; Python: tests/frameworks/python, one venv per framework).
# The frameworks come from scripts/setup-frameworks.sh; the loopguard packages from dist/ when it
# has them (LOOPGUARD_WHEEL, the npm tarball), else from the working tree.
#   tests/frameworks/run.sh [SUITE…]      e.g. node python
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# As users install them: the wheel and the npm tarball that scripts/dist.sh built.
if [ -z "${LOOPGUARD_WHEEL:-}" ]; then
    for wheel in "$ROOT"/dist/loopguard-*.whl; do [ -f "$wheel" ] && export LOOPGUARD_WHEEL="$wheel"; done
fi
if [ -z "${LOOPGUARD_NPM_TGZ:-}" ]; then
    for tgz in "$ROOT"/dist/loopguard-[0-9]*.tgz; do [ -f "$tgz" ] && export LOOPGUARD_NPM_TGZ="$tgz"; done
fi
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
    for script in tests/frameworks/*/run.sh; do suites+=("$(basename "$(dirname "$script")")"); done
fi
failed=()
for suite in "${suites[@]}"; do
    started=$SECONDS
    if bash "tests/frameworks/$suite/run.sh"; then
        echo "frameworks: $suite passed in $((SECONDS - started)) s" >&2
    else
        echo "frameworks: $suite FAILED after $((SECONDS - started)) s" >&2
        failed+=("$suite")
    fi
done
[ ${#failed[@]} -eq 0 ] || { echo "frameworks: failed: ${failed[*]}" >&2; exit 1; }
