// One way to turn a policy component into JS, shared by scripts/build.mjs (the default policy
// into generated/, when the package is built) and transpile-worker.js (a policy handed to
// `LoopGuard.load` / `guard.swap` at run time), so that both give the same bindings: jco's
// instantiation mode, whose output is one self-contained ES module exporting
// `instantiate(getCoreModule, imports)` with all state inside that call, so one process can hold
// several policies side by side. The bindings are used as jco generates them.
//
// The transpiler is jco's own js-component-bindgen component, the file that
// @bytecodealliance/jco-transpile publishes as its `./component` export, copied into
// generated/jco/ by scripts/build.mjs (with its licence) and called as jco-transpile's
// `transpileBytes(bytes, { instantiation: 'sync' })` calls it
// (test/transpile.test.mjs checks the output is the same, file for file). Why not depend on
// jco-transpile at run time: its manifest also pulls binaryen (93 MB, for options loopguard never
// uses), and OpenClaw's plugin loader reads and hashes every file of a plugin's dependencies when
// the gateway starts: 190 MiB more memory for 13 s (docs/PERFORMANCE.md).

const BINDGEN = '../generated/jco/js-component-bindgen-component.js';

/** @param {Uint8Array} component */
export async function transpilePolicy(component) {
  const { $init, generate } = await import(BINDGEN);
  await $init;
  // What `transpileBytes` sets that differs from the component's defaults (absent = off); the
  // TypeScript declarations it would also write are not used here.
  const generated = generate(component, {
    name: 'loopguard_policy',
    instantiation: { tag: 'sync' },
    noComponentErrorWrapping: true,
    noTypescript: true,
  });
  return { files: Object.fromEntries(generated.files) };
}
