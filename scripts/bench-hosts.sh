#!/usr/bin/env bash
# The tool-call decision benchmark on every host, printed side by side: the Rust host
# (`cargo bench -p loopguard-host --bench decision`), Node via jco
# (`examples/node-gateway/bench.mjs`) and Python via wasmtime-py
# (`examples/python-gateway/bench.py`), all on the same mix (1 000 sessions, 30-entry histories,
# ~300-byte arguments). Each benchmark's own output goes to stderr as it runs; the table is the
# last thing on stdout.
#
# Needs what `bash scripts/test.sh` sets up (the policy build, node_modules, .venv).
# Usage: bash scripts/bench-hosts.sh [--quick]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
quick="${1:-}"
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"

for need in examples/node-gateway/node_modules .venv/bin/python; do
    if [ ! -e "$need" ]; then
        echo "bench-hosts: $need missing; run \`bash scripts/test.sh\` once first" >&2
        exit 2
    fi
done

summary() { grep '^summary ' | tail -n 1; }
# (building the host also builds the policy into target/policy: host/build.rs)
rust=$(cargo bench -p loopguard-host --bench decision 2>&1 | tee /dev/stderr | summary)
(cd examples/node-gateway && node transpile.mjs >&2)
node=$(cd examples/node-gateway && node bench.mjs $quick | tee /dev/stderr | summary)
python=$(.venv/bin/python examples/python-gateway/bench.py $quick | tee /dev/stderr | summary)

# `summary <host> key=value ...` lines -> one row per host
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
echo
printf '%-26s %22s %22s   %s\n' "host" "single call (µs/dec.)" "batched (µs/event)" "targets"
printf '%-26s %22s %22s   %s\n' "Rust, wasmtime 48" "$(field "$rust" single)" "$(field "$rust" batched)" \
    "single ≤ 2 µs; wasm/native ≤ 2 (native $(field "$rust" native) µs, paired ratio $(field "$rust" ratio)x)"
printf '%-26s %22s %22s   %s\n' "Node $(node --version), jco" "$(field "$node" single)" "$(field "$node" batched)" \
    "single ≤ 5 µs (args and result objects: $(field "$node" objects) µs; a bot message: $(field "$node" bot) µs)"
printf '%-26s %22s %22s   %s\n' "Python, wasmtime-py" "$(field "$python" single)" "$(field "$python" batched)" \
    "batched ≤ 20 µs per event"
