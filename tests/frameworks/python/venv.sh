#!/usr/bin/env bash
# One framework's venv, .venv/fw/NAME, from tests/frameworks/python/NAME.lock (exact pins,
# written with `pip freeze`), with pytest. Idempotent: skipped when the venv was made from the
# same lock. The loopguard package itself is installed by the test runner (the built wheel).
#   bash tests/frameworks/python/venv.sh NAME
set -euo pipefail
name="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
lock="$root/tests/frameworks/python/$name.lock"
venv="$root/.venv/fw/$name"
[ -f "$lock" ] || { echo "venv.sh: $lock: no such lock" >&2; exit 2; }
stamp="$(sha256sum "$lock" | cut -c1-16)"
if [ -f "$venv/.lock-stamp" ] && [ "$(cat "$venv/.lock-stamp")" = "$stamp" ]; then exit 0; fi
rm -rf "$venv"
python3.11 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$lock"
echo "$stamp" > "$venv/.lock-stamp"
echo "venv.sh: .venv/fw/$name from $name.lock" >&2
