#!/usr/bin/env bash
# Installs the tools (scripts/setup.sh), then runs every test of the workspace: unit tests,
# golden traces through the host library, the CLI and the wasmtime CLI, and component checks.
# Extra arguments go to `cargo test`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=setup.sh
. "$ROOT/scripts/setup.sh"
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"

echo "test: cargo test --workspace $*" >&2
cargo test --workspace "$@"
