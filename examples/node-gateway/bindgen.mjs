// One way to turn a policy component into JS, shared by `transpile.mjs` (build time, the default
// policy into generated/) and `transpile-worker.mjs` (run time, a policy handed to
// `LoopGuard.load` / `guard.swap`), so that both produce the same bindings.
//
// - jco's instantiation mode (`instantiation: 'sync'`): the bindings are one self-contained ES
//   module exporting `instantiate(getCoreModule, imports)`, with no imports of their own and
//   all state inside that call. One process can therefore hold several policies (two different
//   `.wasm` files, or two instances of one) side by side, which a hot swap needs.
// - jco 1.35's generated `_debugLog` reads `process.env.JCO_DEBUG` on every call, and in Node
//   each `process.env` read is a getenv() into the C++ side: about 4 µs per component call,
//   more than most of our hooks cost. `fastDebugLog` rewrites that line to read the variable
//   once per instantiation (same behaviour, `JCO_DEBUG=1` still works). If a jco release
//   changes the line, the bindings stay as jco wrote them (correct, only slower).

/** The bindings' file name and the names jco gives the core modules (`<name>.core*.wasm`). */
export const NAME = 'loopguard_policy';
/** Recorded in generated/.stamp.json: a change re-transpiles. */
export const MODE = 'instantiation=sync';

/**
 * Transpiles a component with jco's JS API.
 * @param {Uint8Array} component
 * @returns {Promise<{ files: Record<string, Uint8Array>, fastDebugLog: boolean, jcoVersion: string }>}
 */
export async function transpilePolicy(component) {
  const { transpile } = await import('@bytecodealliance/jco');
  const { files } = await transpile(component, { name: NAME, instantiation: 'sync', quiet: true });
  const glue = `${NAME}.js`;
  const { js, patched } = fastDebugLog(new TextDecoder().decode(files[glue]));
  files[glue] = new TextEncoder().encode(js);
  return { files, fastDebugLog: patched, jcoVersion: await jcoVersion() };
}

/** jco's package version (for the stamp). */
export async function jcoVersion() {
  const { readFile } = await import('node:fs/promises');
  const { createRequire } = await import('node:module');
  const { pathToFileURL } = await import('node:url');
  // jco's `exports` hide package.json; its entry point sits in <pkg>/dist/.
  const entry = pathToFileURL(createRequire(import.meta.url).resolve('@bytecodealliance/jco'));
  return JSON.parse(await readFile(new URL('../package.json', entry), 'utf8')).version;
}

/**
 * @param {string} js jco's bindings
 * @returns {{ js: string, patched: boolean }}
 */
export function fastDebugLog(js) {
  const slow = /^([ \t]*)if \(!globalThis\?\.process\?\.env\?\.JCO_DEBUG\) \{ return; \}$/m;
  const decl = /^([ \t]*)const _debugLog = /m;
  if (!slow.test(js) || !decl.test(js)) return { js, patched: false };
  js = js.replace(slow, '$1if (!JCO_DEBUG_AT_LOAD) { return; }');
  js = js.replace(decl, '$1const JCO_DEBUG_AT_LOAD = Boolean(globalThis?.process?.env?.JCO_DEBUG);\n$1const _debugLog = ');
  return { js, patched: true };
}
