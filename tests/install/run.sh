#!/usr/bin/env bash
# Install tests, as a user would: the packages in dist/ (scripts/dist.sh) installed into empty
# directories with a PATH that has no cargo or rustc, then used.
#
#   tests/install/run.sh [DIST_DIR]     (default: dist/)
#
# - npm: `npm install dist/loopguard-*.tgz` into an empty project; a script blocks a loop on Node
#   22 and Node 24; `LoopGuard.load` of another policy transpiles it (no jco-transpile or
#   binaryen installed); `require('loopguard')` works (no top-level await in the import graph); a
#   TypeScript consumer passes `tsc --noEmit --strict` against the shipped types; a corrupt
#   `.wasm` inside the installed package is a LoopGuardError naming the file.
# - pip: a fresh venv, `pip install dist/loopguard-*.whl`; the same script in Python; `mypy
#   --strict` on a consumer file; a missing `.wasm` in the installed package is a LoopGuardError
#   naming the file.
# The last line is `install: N passed, M failed`; the exit code is non-zero if any failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/install"
DIST="$(cd "${1:-$ROOT/dist}" && pwd)"
# shellcheck source=../../scripts/node24.sh
. "$ROOT/scripts/node24.sh"
# shellcheck source=../../scripts/node22.sh
. "$ROOT/scripts/node22.sh"
NODE22="$NODE22_BIN/node"
NODE24="$NODE24_BIN/node"
PYTHON="$(python3 -c 'import sys; print(sys.executable)')"
MYPY_VERSION="1.19.0"

TGZ="$(ls "$DIST"/loopguard-*.tgz 2>/dev/null | head -1)"
WHEEL="$(ls "$DIST"/loopguard-*.whl 2>/dev/null | head -1)"
[ -f "$TGZ" ] || { echo "install: no loopguard-*.tgz in $DIST (run scripts/dist.sh)" >&2; exit 2; }
[ -f "$WHEEL" ] || { echo "install: no loopguard-*.whl in $DIST (run scripts/dist.sh)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/loopguard-install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
# A PATH with node, npm and python only: nothing here may need Rust.
mkdir -p "$WORK/bin"
ln -s "$NODE24" "$WORK/bin/node"
ln -s "$NODE24_BIN/npm" "$WORK/bin/npm"
ln -s "$PYTHON" "$WORK/bin/python3"
CLEAN_PATH="$WORK/bin:/usr/bin:/bin"
if PATH="$CLEAN_PATH" command -v cargo >/dev/null || PATH="$CLEAN_PATH" command -v rustc >/dev/null; then
    echo "install: the clean PATH still has cargo or rustc" >&2
    exit 2
fi
# The machine's network settings (a proxy and its CA, a registry mirror) are the user's too: they
# pass through the otherwise empty environment.
PASS_ENV=()
for v in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT PIP_INDEX_URL \
    PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_DEFAULT_TIMEOUT npm_config_registry npm_config_cafile \
    HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
    if [ -n "${!v:-}" ]; then PASS_ENV+=("$v=${!v}"); fi
done
run() { env -i "${PASS_ENV[@]}" HOME="$WORK/home" PATH="$CLEAN_PATH" TMPDIR="$WORK" "$@"; }
mkdir -p "$WORK/home"
# The machine's registry settings (a proxy's CA) are the user's, not ours: pass them through.
[ -f "$HOME/.npmrc" ] && cp "$HOME/.npmrc" "$WORK/home/.npmrc"
[ -d "$HOME/.config/pip" ] && mkdir -p "$WORK/home/.config" && cp -r "$HOME/.config/pip" "$WORK/home/.config/"
[ -f "$HOME/.pip/pip.conf" ] && mkdir -p "$WORK/home/.pip" && cp "$HOME/.pip/pip.conf" "$WORK/home/.pip/"
[ -f /etc/pip.conf ] || true

pass=0
fail=0
check() {
    local name="$1"
    shift
    local out
    if out="$("$@" 2>&1)"; then
        echo "ok - $name"
        pass=$((pass + 1))
    else
        echo "not ok - $name"
        printf '%s\n' "$out" | tail -20 | sed 's/^/    /'
        fail=$((fail + 1))
    fi
}
expect_output() { # expect_output WANT CMD...: the command succeeds and prints WANT
    local want="$1"
    shift
    local out
    out="$("$@" 2>&1)" || { printf '%s\n' "$out"; return 1; }
    [ "$out" = "$want" ] || { printf 'want: %s\ngot:  %s\n' "$want" "$out"; return 1; }
}
expect_error() { # expect_error PATTERN CMD...: the command fails and its output matches PATTERN
    local pattern="$1"
    shift
    local out
    if out="$("$@" 2>&1)"; then
        printf 'expected a failure, got: %s\n' "$out"
        return 1
    fi
    printf '%s\n' "$out" | grep -Eq "$pattern" || { printf 'want /%s/ in:\n%s\n' "$pattern" "$out"; return 1; }
}

# ---- npm ----
NPM_PROJECT="$WORK/npm-project"
mkdir -p "$NPM_PROJECT"
echo '{"name":"consumer","private":true,"type":"module"}' > "$NPM_PROJECT/package.json"
cp "$HERE/blocks-a-loop.mjs" "$HERE/loads-another-policy.mjs" "$HERE/consumer.ts" "$NPM_PROJECT/"
check "npm install the tarball (no Rust on PATH)" \
    run bash -c "cd '$NPM_PROJECT' && npm install --no-audit --no-fund --loglevel=error '$TGZ'"
check "a script blocks a loop (Node 24)" \
    expect_output "block generic_repeat 20" run bash -c "cd '$NPM_PROJECT' && node blocks-a-loop.mjs"
check "a script blocks a loop (Node 22)" \
    expect_output "block generic_repeat 20" run bash -c "cd '$NPM_PROJECT' && '$NODE22' blocks-a-loop.mjs"
check "require('loopguard') works: no top-level await (Node 24)" \
    expect_output "function" run bash -c "cd '$NPM_PROJECT' && node -e \"console.log(typeof require('loopguard').LoopGuard)\""
check "the tarball holds the policy .wasm and the transpiled glue" \
    bash -c "tar tzf '$TGZ' | grep -q 'package/generated/loopguard_policy.wasm' && tar tzf '$TGZ' | grep -q 'package/generated/loopguard_policy.js'"
if [ -x "$HERE/node_modules/.bin/tsc" ] || (cd "$HERE" && PATH="$NODE24_BIN:$PATH" npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    ln -sfn "$HERE/node_modules/@types" "$NPM_PROJECT/node_modules/@types"
    check "a TypeScript consumer passes tsc --noEmit --strict" \
        run bash -c "cd '$NPM_PROJECT' && node '$HERE/node_modules/typescript/bin/tsc' --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --lib es2022,esnext.disposable --types node consumer.ts"
else
    echo "not ok - tests/install: npm ci (typescript) failed"
    fail=$((fail + 1))
fi
check "LoopGuard.load of another policy transpiles it with the package's own transpiler (Node 24)" \
    expect_output "block generic_repeat 20 another policy" run bash -c "cd '$NPM_PROJECT' && node loads-another-policy.mjs"
check "installing pulls no transpiler toolchain (no jco-transpile, no binaryen)" \
    bash -c "cd '$NPM_PROJECT' && [ ! -e node_modules/binaryen ] && [ ! -e node_modules/@bytecodealliance/jco-transpile ]"
CORE="$NPM_PROJECT/node_modules/loopguard/generated/loopguard_policy.core.wasm"
check "a corrupt .wasm in the installed package is a LoopGuardError naming the file" \
    expect_error "LoopGuardError policy .*loopguard_policy\.core\.wasm: the policy shipped in this package cannot be read" \
    run bash -c "cd '$NPM_PROJECT' && printf 'garbage' > '$CORE' && node -e \"import('loopguard').then(({LoopGuard}) => { try { new LoopGuard() } catch (e) { console.log(e.name, e.kind, e.message); process.exit(1) } })\""

# ---- pip ----
VENV="$WORK/venv"
check "pip install the wheel into a fresh venv (no Rust on PATH)" \
    run bash -c "python3 -m venv '$VENV' && '$VENV/bin/pip' install --quiet --disable-pip-version-check '$WHEEL' 'mypy==$MYPY_VERSION'"
cp "$HERE/blocks_a_loop.py" "$HERE/consumer.py" "$WORK/"
check "a script blocks a loop (Python)" \
    expect_output "block generic_repeat 20" run "$VENV/bin/python" "$WORK/blocks_a_loop.py"
check "a Python consumer passes mypy --strict" \
    run bash -c "cd '$WORK' && '$VENV/bin/python' -m mypy --strict --no-incremental consumer.py"
check "the wheel holds the policy .wasm and the typing markers" \
    bash -c "unzip -l '$WHEEL' | grep -q 'loopguard/loopguard_policy.wasm' && unzip -l '$WHEEL' | grep -q 'loopguard/py.typed' && unzip -l '$WHEEL' | grep -q 'loopguard/_native.pyi'"
WASM="$("$VENV/bin/python" -c 'import loopguard; print(loopguard.DEFAULT_POLICY)')"
check "a missing .wasm in the installed package is a LoopGuardError naming the file" \
    expect_error "LoopGuardError.*loopguard_policy\.wasm: the policy shipped in this package is missing" \
    run bash -c "rm '$WASM' && '$VENV/bin/python' -c 'import loopguard
try:
    loopguard.LoopGuard()
except loopguard.LoopGuardError as e:
    print(type(e).__name__, e.kind, e); raise SystemExit(1)'"

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
