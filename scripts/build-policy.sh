#!/usr/bin/env bash
# Builds the policy component, reproducibly: the same commit gives the same bytes (and blake3
# digest) in any checkout directory and any target directory.
#
#   scripts/build-policy.sh [TARGET_DIR]     (default: target/policy)
#   -> TARGET_DIR/wasm32-wasip2/release/loopguard_policy.wasm
#
# Why the flags: rustc embeds source paths (panic locations, debug info) in the binary. The
# workspace path and cargo's registry path are remapped to fixed names, so two clean builds
# agree byte for byte. host/build.rs runs this script for the embedded policy.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET_DIR="${1:-$ROOT/target/policy}"
CARGO_HOME_DIR="${CARGO_HOME:-$HOME/.cargo}"
CARGO_BIN="${CARGO:-cargo}"
SEP=$'\x1f'
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=${ROOT}=/loopguard${SEP}--remap-path-prefix=${CARGO_HOME_DIR}=/cargo"
unset RUSTFLAGS
cd "$ROOT"
"$CARGO_BIN" build --locked -p loopguard-policy --release --target wasm32-wasip2 --target-dir "$TARGET_DIR"
