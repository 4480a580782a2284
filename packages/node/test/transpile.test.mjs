// The package transpiles policies with jco's bindgen component copied into generated/jco/ (not
// with @bytecodealliance/jco-transpile at run time; lib/transpile.js says why). This checks that
// the copy, called with our options, gives what jco-transpile's own `transpileBytes` gives for
// the same component, file for file, and that the bindings the package ships are that output.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { transpilePolicy } from '../lib/transpile.js';

const here = dirname(fileURLToPath(import.meta.url));
const generated = join(here, '../generated');
const WASM = join(generated, 'loopguard_policy.wasm');
const skip = !existsSync(WASM) && `${WASM} not built (node scripts/build.mjs)`;

/** The files a policy load uses: the bindings and the core modules, as text/bytes per name. */
function shipped(files) {
  const names = Object.keys(files).filter((n) => n.endsWith('.js') || n.endsWith('.wasm')).sort();
  return Object.fromEntries(names.map((n) => [n, Buffer.from(files[n]).toString('base64')]));
}

describe('transpiling a policy', { skip }, () => {
  it("gives jco-transpile's own output, file for file", async () => {
    const bytes = readFileSync(WASM);
    const ours = await transpilePolicy(bytes);
    const theirs = await transpileBytes(bytes, { name: 'loopguard_policy', instantiation: 'sync', quiet: true });
    const a = shipped(ours.files);
    assert.deepEqual(Object.keys(a), ['loopguard_policy.core.wasm', 'loopguard_policy.core2.wasm', 'loopguard_policy.core3.wasm', 'loopguard_policy.js']);
    assert.deepEqual(a, shipped(theirs.files));
    // and the package ships exactly that
    for (const name of Object.keys(a)) {
      assert.equal(readFileSync(join(generated, name)).toString('base64'), a[name], name);
    }
  });

  it("refuses a core module (not a component), with jco's reason", async () => {
    await assert.rejects(transpilePolicy(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])), /failed to translate component/);
  });
});
