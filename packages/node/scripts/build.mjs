// Builds generated/: the policy component transpiled by jco (the bindings and core modules the
// package ships), the component itself, and policy.json (its versions and digests), so that
// installing the package needs no Rust, no cargo and no transpile step.
//
// Usage: node scripts/build.mjs [path/to/loopguard_policy.wasm]
// (default: the workspace's build, target/policy/wasm32-wasip2/release/loopguard_policy.wasm;
// skipped when generated/ already came from the same bytes with the same jco-transpile).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blake3 } from '@noble/hashes/blake3.js';
import { transpilePolicy } from '../lib/transpile.js';

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const wasm = resolve(process.argv[2] ?? join(here, '../../target/policy/wasm32-wasip2/release/loopguard_policy.wasm'));
const out = join(here, 'generated');
if (!existsSync(wasm)) {
  console.error(`build: ${wasm}: not found; build the policy first (cargo build -p loopguard-host builds it)`);
  process.exit(2);
}
const bytes = readFileSync(wasm);
const jco = JSON.parse(readFileSync(join(here, 'node_modules/@bytecodealliance/jco-transpile/package.json'), 'utf8')).version;
const digest = Buffer.from(blake3(bytes)).toString('hex');
const manifestFile = join(out, 'policy.json');
if (existsSync(manifestFile)) {
  const old = JSON.parse(readFileSync(manifestFile, 'utf8'));
  if (old.blake3 === digest && old.jcoTranspile === jco && existsSync(join(out, 'loopguard_policy.js'))) {
    console.error(`build: generated/ is up to date with ${wasm}`);
    process.exit(0);
  }
}
const { files } = await transpilePolicy(bytes);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const [name, data] of Object.entries(files)) {
  if (name === 'loopguard_policy.js' || /^loopguard_policy\.core\d*\.wasm$/.test(name)) {
    writeFileSync(join(out, name), data);
  }
}
writeFileSync(join(out, 'loopguard_policy.wasm'), bytes);
// The policy's versions are read from the component at run time; this records what was built.
const manifest = {
  blake3: digest,
  sha256: createHash('sha256').update(bytes).digest('hex'),
  bytes: bytes.length,
  jcoTranspile: jco,
};
writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
console.error(`build: ${wasm} -> generated/ (blake3 ${digest.slice(0, 16)}…, jco-transpile ${jco})`);
