#!/usr/bin/env bash
# Hostile-input fuzzing of the policy crate (fuzz/, a cargo-fuzz project outside the workspace).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]        (default 20)
#
# Installs cargo-fuzz if missing, builds every target (optimized, with debug assertions and
# overflow checks, AddressSanitizer when the toolchain ships its runtime), then runs each target
# for a bounded time on a scratch corpus seeded from fuzz/seeds/<target>/. Exits non-zero if any
# target crashed (panic, sanitizer report, timeout, out-of-memory); the crash input is saved
# under fuzz/artifacts/<target>/. The last line is `fuzz: N passed, M failed`.
#
# cargo-fuzz needs nightly-only flags (-Zsanitizer, sancov passes); this repo pins stable, so the
# script sets RUSTC_BOOTSTRAP=1 for its own cargo-fuzz invocations only.
#
# Environment:
#   FUZZ_TARGETS     space-separated subset of targets (default: all of `cargo fuzz list`)
#   FUZZ_SANITIZER   address | none (default: address if librustc-*_rt.asan.a is in the sysroot)
#   FUZZ_RSS_MB      libFuzzer -rss_limit_mb (default 2048)
#   FUZZ_TIMEOUT     libFuzzer per-input -timeout in seconds (default 10)
#   FUZZ_KEEP_CORPUS=1  keep fuzz/corpus/<target>/ from earlier runs (default: start from seeds)
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ="$ROOT/fuzz"
SECONDS_PER_TARGET="${1:-20}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
TIMEOUT="${FUZZ_TIMEOUT:-10}"
export PATH="$HOME/.cargo/bin:$PATH"

if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_TARGET" -lt 1 ]; then
    echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]  (a positive integer, default 20)" >&2
    exit 2
fi

# Largest input per target: big enough for the seeds that matter, small enough to stay fast.
max_len() {
    case "$1" in
        config_parser) echo 32768 ;;
        trace_parser) echo 32768 ;;
        canonical_fingerprint) echo 8192 ;;
        snapshot_import) echo 8192 ;;
        *) echo 16384 ;;
    esac
}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz (cargo install cargo-fuzz --locked)" >&2
    cargo install cargo-fuzz --locked >&2 || { echo "fuzz: could not install cargo-fuzz" >&2; exit 1; }
fi

if [ -z "${FUZZ_SANITIZER:-}" ]; then
    if ls "$(rustc --print sysroot)"/lib/rustlib/*/lib/librustc-*_rt.asan.a >/dev/null 2>&1; then
        FUZZ_SANITIZER=address
    else
        FUZZ_SANITIZER=none
    fi
fi

cd "$FUZZ"
export RUSTC_BOOTSTRAP=1
# Build once with the exact flags `run` uses, so the runs do not rebuild.
FUZZ_FLAGS=(--sanitizer "$FUZZ_SANITIZER")
echo "fuzz: cargo fuzz build ${FUZZ_FLAGS[*]} (RUSTC_BOOTSTRAP=1)" >&2
if ! cargo fuzz build "${FUZZ_FLAGS[@]}" >&2; then
    echo "fuzz: build failed" >&2
    echo "fuzz: 0 passed, 1 failed"
    exit 1
fi

TARGETS="${FUZZ_TARGETS:-$(cargo fuzz list)}"
LOGS="$FUZZ/target/fuzz-logs"
mkdir -p "$LOGS"
passed=0
failed=0
summary=()
for t in $TARGETS; do
    corpus="$FUZZ/corpus/$t"
    if [ "${FUZZ_KEEP_CORPUS:-0}" != 1 ]; then
        rm -rf "$corpus"
    fi
    mkdir -p "$corpus" "$FUZZ/artifacts/$t"
    if [ -d "$FUZZ/seeds/$t" ]; then
        cp -n "$FUZZ/seeds/$t"/* "$corpus"/ 2>/dev/null || true
    fi
    log="$LOGS/$t.log"
    len="$(max_len "$t")"
    echo "fuzz: $t for ${SECONDS_PER_TARGET}s (max_len $len, rss ${RSS_MB} MB, timeout ${TIMEOUT}s, sanitizer $FUZZ_SANITIZER); log $log" >&2
    cargo fuzz run "${FUZZ_FLAGS[@]}" "$t" "$corpus" -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" \
        -max_len="$len" -timeout="$TIMEOUT" -print_final_stats=1 >"$log" 2>&1
    rc=$?
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)"
    secs="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n1)"
    files="$(find "$corpus" -type f | wc -l)"
    line="$t: ${secs:-?}s, ${execs:-?} execs, ${rate:-?} exec/s, corpus $files files"
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        summary+=("ok    $line")
    else
        failed=$((failed + 1))
        crash="$(grep -oE "(Test unit written to|artifact_prefix='[^']*'; Test unit written to) [^ ]+" "$log" | tail -n1 | sed 's/.*written to //')"
        summary+=("FAIL  $line (exit $rc; input ${crash:-see log}; log $log)")
        grep -E "panicked at|ERROR: (libFuzzer|AddressSanitizer)|SUMMARY:" "$log" | head -n 5 >&2
    fi
    echo "fuzz: ${summary[-1]}" >&2
done

# Saved crash inputs (fuzz/regressions/<target>/*) must keep passing once their bug is fixed;
# FUZZ_REGRESSIONS=0 skips them (e.g. while a newly found crash is not fixed yet).
if [ "${FUZZ_REGRESSIONS:-1}" = 1 ]; then
    for dir in "$FUZZ"/regressions/*/; do
        t="$(basename "$dir")"
        files=("$dir"*)
        [ -e "${files[0]}" ] || continue
        log="$LOGS/regressions-$t.log"
        bad=()
        for f in "${files[@]}"; do
            # One input per run: libFuzzer stops at the first crashing file.
            if ! cargo fuzz run "${FUZZ_FLAGS[@]}" "$t" "$f" -- -rss_limit_mb="$RSS_MB" -timeout="$TIMEOUT" >>"$log" 2>&1; then
                bad+=("$(basename "$f")")
            fi
        done
        if [ "${#bad[@]}" -eq 0 ]; then
            passed=$((passed + 1))
            summary+=("ok    regressions/$t: ${#files[@]} inputs")
        else
            failed=$((failed + 1))
            summary+=("FAIL  regressions/$t: ${#bad[@]} of ${#files[@]} inputs crash: ${bad[*]} (log $log)")
        fi
        echo "fuzz: ${summary[-1]}" >&2
    done
fi

for s in "${summary[@]}"; do
    echo "fuzz: $s"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
