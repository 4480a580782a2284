#!/usr/bin/env bash
# One release build: every artifact a user installs, into dist/.
#
#   scripts/dist.sh
#
#   dist/loopguard_policy.wasm          the policy component (reproducible: built twice, compared)
#   dist/loopguard_policy.wasm.blake3   its digest, `<hex>  loopguard_policy.wasm` (b3sum format)
#   dist/loopguard                      the CLI (this machine's platform)
#   dist/loopguard-<v>.tgz              npm `loopguard` (the policy prebuilt and transpiled inside)
#   dist/loopguard-<v>-*.whl, .tar.gz   PyPI `loopguard` wheel (manylinux, abi3) and sdist
#   dist/openclaw-loopguard-<v>.tgz     the OpenClaw plugin (npm `loopguard` bundled inside)
#   dist/agent-plugins/                 Claude Code, Codex, Gemini CLI plugins and Copilot CLI hooks (dist/loopguard inside)
#   dist/loopguard-{policy,transcripts,host,cli}-<v>.crate   the Rust crates (library, CLI)
#
# Installs what it needs first (scripts/setup.sh). Native artifacts use the `dist` profile.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=setup.sh
. "$ROOT/scripts/setup.sh"
# shellcheck source=node24.sh
. "$ROOT/scripts/node24.sh"
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
say() { echo "dist: $*" >&2; }

DIST="$ROOT/dist"
rm -rf "$DIST"
mkdir -p "$DIST"

say "the policy component (scripts/build-policy.sh)"
bash scripts/build-policy.sh "$ROOT/target/policy" >&2
WASM="$ROOT/target/policy/wasm32-wasip2/release/loopguard_policy.wasm"
cp "$WASM" "$DIST/loopguard_policy.wasm"

say "reproducibility: a second clean build in target/policy-repro must give the same bytes"
rm -rf "$ROOT/target/policy-repro"
bash scripts/build-policy.sh "$ROOT/target/policy-repro" >&2
if ! cmp -s "$WASM" "$ROOT/target/policy-repro/wasm32-wasip2/release/loopguard_policy.wasm"; then
    say "FAILED: two clean builds of the policy differ"
    exit 1
fi
rm -rf "$ROOT/target/policy-repro"

say "the CLI (cargo build --profile dist)"
cargo build --locked --profile dist -p loopguard-cli >&2
cp "$ROOT/target/dist/loopguard" "$DIST/loopguard"
DIGEST="$("$DIST/loopguard" inspect "$DIST/loopguard_policy.wasm" | sed -n 's/^digest: //p')"
printf '%s  loopguard_policy.wasm\n' "$DIGEST" > "$DIST/loopguard_policy.wasm.blake3"

say "the agent-CLI plugins (scripts/pack-agent-plugins.sh)"
bash scripts/pack-agent-plugins.sh "$DIST/agent-plugins" "$DIST/loopguard"

say "npm loopguard (packages/node: npm ci, transpile, npm pack)"
(
    cd packages/node
    PATH="$NODE24_BIN:$PATH" npm ci --no-audit --no-fund --loglevel=error >&2
    PATH="$NODE24_BIN:$PATH" node scripts/build.mjs "$DIST/loopguard_policy.wasm" >&2
    PATH="$NODE24_BIN:$PATH" npm pack --silent --pack-destination "$DIST" >/dev/null
)

say "PyPI loopguard (packages/python: maturin wheel and sdist)"
cp "$DIST/loopguard_policy.wasm" packages/python/python/loopguard/loopguard_policy.wasm
(
    cd packages/python
    maturin build --locked --profile dist --out "$DIST" >&2
    maturin sdist --out "$DIST" >&2
)

say "the OpenClaw plugin (packages/openclaw-plugin: scripts/pack.mjs installs and bundles loopguard)"
(cd packages/openclaw-plugin && PATH="$NODE24_BIN:$PATH" node scripts/pack.mjs --out "$DIST" >/dev/null)

say "the Rust crates (cargo package: self-contained, the policy shipped inside)"
mkdir -p host/policy
cp "$DIST/loopguard_policy.wasm" host/policy/loopguard_policy.wasm
# The policy crate too: the transcripts crate uses its tool-name rule (one source for both).
# cargo verifies each crate against the others through a temporary local registry, and it
# unpacks those into $CARGO_HOME/registry/src/-<hash>/ once per name and version: a later run
# with the same version would build against the sources of the first. Drop them first.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/loopguard-*
# The verification builds each packaged crate as a workspace of its own, where the workspace's
# profiles do not apply: without debug info it takes minutes less (it only has to compile).
CARGO_PROFILE_DEV_DEBUG=0 cargo package --locked --allow-dirty -p loopguard-policy -p loopguard-transcripts -p loopguard-host -p loopguard-cli >&2
for crate in policy transcripts host cli; do cp target/package/loopguard-$crate-*.crate "$DIST/"; done

say "done:"
(cd "$DIST" && ls -l | awk 'NR > 1 { printf "  %10d  %s\n", $5, $9 }') >&2
