#!/usr/bin/env bash
# Builds the previous release's `loopguard` CLI (0.2.0, interface 0.5.0) from this repository's
# history, for the "not slower than before interface 1.0" rows of scripts/bench-replay.py.
#
#   bash scripts/build-baseline.sh        # then: python3 scripts/bench-replay.py
#
# 0.2.0 is commit 9420460, the last one before the interface 1.0 work began. Its sources are
# exported with `git archive` into target/baseline-0.2.0/src and built there with its own
# Cargo.lock (--locked) and target dir, so nothing of the current tree is touched. Idempotent:
# does nothing when the binary is already at $LOOPGUARD_BASELINE (the path bench-replay.py reads;
# default /work/baseline/loopguard-0.2.0). A clean build takes ~16 minutes on this machine (it
# builds wasmtime); not part of the tests.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
rev=9420460
out=${LOOPGUARD_BASELINE:-/work/baseline/loopguard-0.2.0}
work=$repo/target/baseline-0.2.0

# Whether $out is a 0.2.0 CLI (its `version` prints "loopguard: 0.2.0" first).
is_baseline() { [ -x "$out" ] && "$out" version 2>/dev/null | grep -qx "loopguard: 0.2.0"; }

if is_baseline; then
  echo "baseline: $out is 0.2.0 already"
  exit 0
fi

if ! git -C "$repo" cat-file -e "$rev^{commit}" 2>/dev/null; then
  echo "baseline: commit $rev is not in this clone (a shallow clone? git fetch --unshallow)" >&2
  exit 1
fi

rm -rf "$work/src"
mkdir -p "$work/src"
git -C "$repo" archive "$rev" | tar -x -C "$work/src"
(cd "$work/src" && CARGO_TARGET_DIR="$work/target" cargo build --release --locked -p loopguard-host --bin loopguard)

mkdir -p "$(dirname "$out")"
cp "$work/target/release/loopguard" "$out"
is_baseline || { echo "baseline: $out does not report 0.2.0" >&2; exit 1; }
echo "baseline: $out"
