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
// - jco 1.35's `_utf8AllocateAndEncode` measures each string's UTF-8 length with a JS loop over
//   its UTF-16 code units before it allocates guest memory; for the few hundred bytes of a tool
//   call and its result that loop was about a tenth of a decision from Node. `asciiLength` puts
//   a fast path ahead of it: an all-ASCII string (one native regex test) has as many UTF-8 bytes
//   and code points as code units. Other strings take jco's loop unchanged; the same rule as
//   above applies if a jco release changes the loop.

/** The bindings' file name and the names jco gives the core modules (`<name>.core*.wasm`). */
export const NAME = 'loopguard_policy';
/** Recorded in generated/.stamp.json: a change re-transpiles. */
export const MODE = 'instantiation=sync;fast-debug-log;ascii-length';

/**
 * Transpiles a component with jco's JS API.
 * @param {Uint8Array} component
 * @returns {Promise<{ files: Record<string, Uint8Array>, fastDebugLog: boolean, asciiLength: boolean, jcoVersion: string }>}
 */
export async function transpilePolicy(component) {
  const { transpile } = await import('@bytecodealliance/jco');
  const { files } = await transpile(component, { name: NAME, instantiation: 'sync', quiet: true });
  const glue = `${NAME}.js`;
  const debug = fastDebugLog(new TextDecoder().decode(files[glue]));
  const ascii = asciiLength(debug.js);
  files[glue] = new TextEncoder().encode(ascii.js);
  return { files, fastDebugLog: debug.patched, asciiLength: ascii.patched, jcoVersion: await jcoVersion() };
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

/**
 * @param {string} js jco's bindings
 * @returns {{ js: string, patched: boolean }}
 */
export function asciiLength(js) {
  const loop = /^([ \t]*)let codepoints = 0;\n([ \t]*)for \(let i = 0; i < s\.length; i\+\+\) \{$/m;
  const encoder = /^([ \t]*)const TEXT_ENCODER_UTF8 = new TextEncoder\(\);$/m;
  const fn = js.indexOf('function _utf8AllocateAndEncode(s, realloc, memory) {');
  const at = js.search(loop);
  // The loop must be the one in _utf8AllocateAndEncode: the first match after its header.
  if (fn < 0 || at < fn || !encoder.test(js) || js.slice(fn, at).includes('function ', 1)) return { js, patched: false };
  js = js.replace(
    loop,
    '$1let codepoints = 0;\n$1if (ASCII_ONLY.test(s)) { len = s.length; codepoints = s.length; } else\n$2for (let i = 0; i < s.length; i++) {',
  );
  js = js.replace(encoder, '$&\n$1const ASCII_ONLY = /^[\\x00-\\x7f]*$/;');
  return { js, patched: true };
}
