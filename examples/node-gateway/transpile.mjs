// Transpiles the one policy component into `generated/` (git-ignored) with jco, so that Node runs
// exactly the `.wasm` every other host loads.
//
// Why a script and not a bare `jco transpile` in package.json:
// - it is skipped when `generated/` already came from the same `.wasm` (a sha256 stamp), which
//   keeps `scripts/test.sh` fast and idempotent;
// - jco 1.35's generated `_debugLog` reads `process.env.JCO_DEBUG` on every call, and in Node
//   each `process.env` read is a getenv() into the C++ side: about 4 µs per component call, more
//   than most of our hooks cost. The script rewrites that one line to read the variable once at
//   load (same behaviour, `JCO_DEBUG=1` still works). If a jco release changes the line, the
//   script says so and leaves the output as jco wrote it (correct, only slower).
//
// Usage: node transpile.mjs [--force] [path/to/loopguard_policy.wasm]
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const force = args.includes('--force');
const wasm = resolve(
  args.find((a) => !a.startsWith('--')) ??
    join(here, '../../target/policy/wasm32-wasip2/release/loopguard_policy.wasm'),
);
const outDir = join(here, 'generated');
const stampFile = join(outDir, '.source-sha256');
const bindings = join(outDir, 'loopguard_policy.js');

if (!existsSync(wasm)) {
  console.error(
    `transpile: ${wasm}: not found; build it first with\n` +
      '  cargo build -p loopguard-policy --release --target wasm32-wasip2 --target-dir target/policy',
  );
  process.exit(2);
}

const digest = createHash('sha256').update(readFileSync(wasm)).digest('hex');
if (!force && existsSync(bindings) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === digest) {
  console.error(`transpile: generated/ is up to date with ${wasm}`);
  process.exit(0);
}

const jco = join(here, 'node_modules', '.bin', 'jco');
if (!existsSync(jco)) {
  console.error('transpile: node_modules/.bin/jco missing; run `npm ci` in examples/node-gateway');
  process.exit(2);
}
execFileSync(jco, ['transpile', wasm, '--name', 'loopguard_policy', '--out-dir', outDir, '--quiet'], {
  stdio: 'inherit',
});

const SLOW = '  if (!globalThis?.process?.env?.JCO_DEBUG) { return; }';
const FAST = '  if (!JCO_DEBUG_AT_LOAD) { return; }';
let js = readFileSync(bindings, 'utf8');
if (js.includes(SLOW)) {
  js = js.replace(SLOW, FAST);
  js = js.replace(
    'const _debugLog = ',
    'const JCO_DEBUG_AT_LOAD = Boolean(globalThis?.process?.env?.JCO_DEBUG);\nconst _debugLog = ',
  );
  writeFileSync(bindings, js);
} else {
  console.error('transpile: note: jco debug-log check not found; bindings left as generated (slower calls)');
}
writeFileSync(stampFile, digest);
console.error(`transpile: ${wasm} -> generated/loopguard_policy.js`);
