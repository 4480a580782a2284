// Transpiles the one policy component into `generated/` (git-ignored) with jco, so that Node runs
// exactly the `.wasm` every other host loads. `loopguard.mjs` loads it synchronously at import
// (the default policy behind `new LoopGuard(config)`).
//
// Why a script and not a bare `jco transpile` in package.json:
// - it is skipped when `generated/` already came from the same `.wasm` with the same jco and
//   options (generated/.stamp.json), which keeps `scripts/test.sh` fast and idempotent;
// - it uses bindgen.mjs, the same code `LoopGuard.load` / `guard.swap` run for a policy file
//   given at run time: jco's instantiation mode (several policies side by side in one process)
//   and the per-call `process.env` read taken out of jco's debug log (see bindgen.mjs).
//
// Usage: node transpile.mjs [--force] [path/to/loopguard_policy.wasm]
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const stampFile = join(outDir, '.stamp.json');

if (!existsSync(wasm)) {
  console.error(
    `transpile: ${wasm}: not found; build it first with\n` +
      '  cargo build -p loopguard-policy --release --target wasm32-wasip2 --target-dir target/policy',
  );
  process.exit(2);
}
if (!existsSync(join(here, 'node_modules', '@bytecodealliance', 'jco'))) {
  console.error('transpile: node_modules/@bytecodealliance/jco missing; run `npm ci` in examples/node-gateway');
  process.exit(2);
}

const { MODE, NAME, jcoVersion, transpilePolicy } = await import('./bindgen.mjs');
const bytes = readFileSync(wasm);
const stamp = { sha256: createHash('sha256').update(bytes).digest('hex'), jco: await jcoVersion(), mode: MODE };
const stampText = `${JSON.stringify(stamp)}\n`;
if (
  !force &&
  existsSync(join(outDir, `${NAME}.js`)) &&
  existsSync(stampFile) &&
  readFileSync(stampFile, 'utf8') === stampText
) {
  console.error(`transpile: generated/ is up to date with ${wasm}`);
  process.exit(0);
}

const { files, fastDebugLog, asciiLength } = await transpilePolicy(bytes);
rmSync(outDir, { recursive: true, force: true });
for (const [name, data] of Object.entries(files)) {
  mkdirSync(dirname(join(outDir, name)), { recursive: true });
  writeFileSync(join(outDir, name), data);
}
if (!fastDebugLog) {
  console.error('transpile: note: jco debug-log check not found; bindings left as generated (slower calls)');
}
if (!asciiLength) {
  console.error('transpile: note: jco string-length loop not found; bindings left as generated (slower calls)');
}
writeFileSync(stampFile, stampText);
console.error(`transpile: ${wasm} -> generated/${NAME}.js (jco ${stamp.jco}, ${MODE})`);
