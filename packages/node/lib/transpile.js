// One way to turn a policy component into JS, shared by scripts/build.mjs (the default policy
// into generated/, when the package is built) and transpile-worker.js (a policy handed to
// `LoopGuard.load` / `guard.swap` at run time), so that both give the same bindings: jco's
// instantiation mode, whose output is one self-contained ES module exporting
// `instantiate(getCoreModule, imports)` with all state inside that call, so one process can hold
// several policies side by side. The bindings are used as jco generates them.

/** @param {Uint8Array} component */
export async function transpilePolicy(component) {
  const { transpileBytes } = await import('@bytecodealliance/jco-transpile');
  return transpileBytes(component, { name: 'loopguard_policy', instantiation: 'sync', quiet: true });
}
