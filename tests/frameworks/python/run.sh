#!/usr/bin/env bash
# The Python framework adapters' tests, each with its real framework in its own venv:
#   bash tests/frameworks/python/run.sh [NAME…]
# NAME is a lock's name (tests/frameworks/python/NAME.lock) and its test file is test_NAME.py;
# without NAMEs, every lock that has a test file. For each: venv.sh makes
# .venv/fw/NAME, loopguard goes in (the wheel $LOOPGUARD_WHEEL where set, as CI does; else
# PYTHONPATH, default packages/python/python with its built native module), then pytest runs
# with that venv's python. One line per framework with its time, then the tests' total
# ("frameworks: N passed, N failed"); exit 1 if any framework failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root" || exit 2

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for lock in "$here"/*.lock; do
    name="$(basename "$lock" .lock)"
    [ -f "$here/test_$name.py" ] && names+=("$name")
  done
fi
[ ${#names[@]} -gt 0 ] || { echo "run.sh: no framework to test" >&2; exit 2; }

if [ -z "${LOOPGUARD_WHEEL:-}" ]; then
  export PYTHONPATH="${PYTHONPATH:-$root/packages/python/python}"
fi

failed=()
total_passed=0
total_failed=0
for name in "${names[@]}"; do
  test_file="$here/test_$name.py"
  [ -f "$test_file" ] || { echo "run.sh: $test_file: no such test file" >&2; failed+=("$name"); total_failed=$((total_failed + 1)); continue; }
  log="$(mktemp)"
  start=$SECONDS
  venv="$root/.venv/fw/$name"
  status=0
  bash "$here/venv.sh" "$name" >"$log" 2>&1 || status=$?
  if [ $status -eq 0 ] && [ -n "${LOOPGUARD_WHEEL:-}" ]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
      "$LOOPGUARD_WHEEL" >>"$log" 2>&1 || status=$?
  fi
  setup=$((SECONDS - start))
  if [ $status -eq 0 ]; then
    "$venv/bin/python" -m pytest -q -o faulthandler_timeout=120 -p no:cacheprovider "$test_file" >>"$log" 2>&1 \
      || status=$?
  fi
  summary="$(tail -n 1 "$log")"
  for n in $(grep -oE '[0-9]+ passed' <<<"$summary" | cut -d' ' -f1); do total_passed=$((total_passed + n)); done
  for n in $(grep -oE '[0-9]+ (failed|errors?)' <<<"$summary" | cut -d' ' -f1); do total_failed=$((total_failed + n)); done
  [ $status -eq 0 ] || [ -n "$(grep -oE '[0-9]+ (failed|errors?)' <<<"$summary")" ] || total_failed=$((total_failed + 1))
  if [ $status -eq 0 ]; then
    echo "frameworks/python: $name passed ($(tail -n 1 "$log" | sed 's/=//g; s/^ *//; s/ *$//'); setup ${setup} s, total $((SECONDS - start)) s)"
  else
    cat "$log"
    echo "frameworks/python: $name FAILED (exit $status; setup ${setup} s, total $((SECONDS - start)) s)"
    failed+=("$name")
  fi
  rm -f "$log"
done
echo "frameworks: $total_passed passed, $total_failed failed"
[ ${#failed[@]} -eq 0 ] || { echo "frameworks/python: failed: ${failed[*]}"; exit 1; }
