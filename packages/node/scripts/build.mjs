// Builds generated/: the policy component transpiled by jco (the bindings and core modules the
// package ships), the component itself, policy.json (its versions and digests), and jco/, jco's
// transpiler component copied from @bytecodealliance/jco-transpile (a dev dependency) for
// policies loaded at run time (lib/transpile.js says why it is copied), so that installing the
// package needs no Rust, no cargo and no transpile step.
//
// Usage: node scripts/build.mjs [path/to/loopguard_policy.wasm]
// (default: the workspace's build, target/policy/wasm32-wasip2/release/loopguard_policy.wasm;
// skipped when generated/ already came from the same bytes with the same jco-transpile).
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const jcoDir = join(here, 'node_modules/@bytecodealliance/jco-transpile');
const jco = JSON.parse(readFileSync(join(jcoDir, 'package.json'), 'utf8')).version;
const BINDGEN_FILES = [
  ['vendor/js-component-bindgen-component.js', 'js-component-bindgen-component.js'],
  ['vendor/js-component-bindgen-component.core.wasm', 'js-component-bindgen-component.core.wasm'],
  ['vendor/js-component-bindgen-component.core2.wasm', 'js-component-bindgen-component.core2.wasm'],
  ['LICENSE', 'LICENSE'],
];
const digest = Buffer.from(blake3(bytes)).toString('hex');
// The agent-facing hosts' one default document (host/src/agent-defaults.json, which the Rust
// hosts include): the framework adapters start from it (lib/agent.js).
const agentDefaults = JSON.parse(readFileSync(join(here, '../../host/src/agent-defaults.json'), 'utf8'));
const manifestFile = join(out, 'policy.json');
if (existsSync(manifestFile)) {
  const old = JSON.parse(readFileSync(manifestFile, 'utf8'));
  const complete = ['loopguard_policy.js', ...BINDGEN_FILES.map(([, to]) => `jco/${to}`)].every((f) => existsSync(join(out, f)));
  const sameDefaults = JSON.stringify(old.agentDefaults) === JSON.stringify(agentDefaults);
  if (old.blake3 === digest && old.jcoTranspile === jco && sameDefaults && complete) {
    console.error(`build: generated/ is up to date with ${wasm}`);
    process.exit(0);
  }
}
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'jco'), { recursive: true });
for (const [from, to] of BINDGEN_FILES) copyFileSync(join(jcoDir, from), join(out, 'jco', to));
const { files } = await transpilePolicy(bytes);
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
  agentDefaults,
};
writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
console.error(`build: ${wasm} -> generated/ (blake3 ${digest.slice(0, 16)}…, jco-transpile ${jco})`);
