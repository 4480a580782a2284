// Loading policy components for loopguard.mjs: the default one (transpiled at build time into
// generated/, loaded synchronously when this module is imported) and any other `.wasm` given at
// run time to `LoopGuard.load` / `guard.swap` (transpiled by jco in a worker thread, so the
// gateway keeps answering meanwhile). Every policy is its own component instance: its own
// linear memory and its own `Gateway` class, so two of them live side by side in one process.
//
// Nothing here decides anything; it compiles, instantiates and reports what went wrong.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';
import { NAME } from './bindgen.mjs';
import { coreCalls } from './core-calls.mjs';
import { instantiate as defaultInstantiate } from './generated/loopguard_policy.js';

/**
 * A policy error: bad config, malformed input, an unreadable snapshot, or a policy file that
 * cannot be loaded or swapped in. `path` says where (`tools.loopDetection.historySize`,
 * `line 3: args`, `policy`, `interface-version`), `reason` what to fix.
 */
export class LoopGuardError extends Error {
  /**
   * @param {string} path
   * @param {string} reason
   * @param {ErrorOptions} [options]
   */
  constructor(path, reason, options) {
    super(`${path}: ${reason}`, options);
    this.name = 'LoopGuardError';
    this.path = path;
    this.reason = reason;
  }
}

/**
 * The WASI imports a policy gets: the preview2-shim interfaces jco's own ESM output would
 * import for it (cli, io, random) plus clocks. No filesystem, sockets or http: a policy that
 * imports them fails to instantiate, and is refused.
 */
const WASI = Object.freeze(
  Object.fromEntries(
    Object.entries({ cli, clocks, io, random }).flatMap(([pkg, mod]) =>
      Object.entries(mod)
        .filter(([name, iface]) => !name.startsWith('_') && iface !== null && typeof iface === 'object')
        .map(([name, iface]) => [`wasi:${pkg}/${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, iface]),
    ),
  ),
);

/**
 * `LOOPGUARD_NODE_GLUE=jco` makes every tool call go through jco's generated glue instead of
 * the direct calls of core-calls.mjs (same decisions, slower): for tests, and as a way out.
 */
const JCO_GLUE_ONLY = process.env.LOOPGUARD_NODE_GLUE === 'jco';

/**
 * Compiled policies (jco's `instantiate` + compiled core modules) by the component's sha256, so
 * that loading the same bytes again compiles nothing. Besides the default policy, the
 * `KEEP_COMPILED` most recently used are kept.
 * @type {Map<string, Promise<Compiled>>}
 */
const compiledBySha = new Map();
const KEEP_COMPILED = 4;
/** jco bindings by the sha256 of their text: equal text means one parsed ES module. */
const bindingsBySha = new Map();

const generated = new URL('./generated/', import.meta.url);
const defaultCompiled = {
  instantiate: defaultInstantiate,
  modules: new Map(), // filled on demand below, synchronously
  getCoreModule(name) {
    let module = this.modules.get(name);
    if (!module) {
      module = new WebAssembly.Module(readFileSync(new URL(name, generated)));
      this.modules.set(name, module);
    }
    return module;
  },
};
const defaultSha = readStampSha();
bindingsBySha.set(sha256(readFileSync(new URL(`${NAME}.js`, generated))), defaultInstantiate);

/**
 * The policy transpiled into generated/, instantiated once per process: every
 * `new LoopGuard(config)` creates its gateway in it, and the module-level `replay` runs in it.
 * @type {Policy}
 */
export const defaultPolicy = describe(
  instantiateCompiled(defaultCompiled, 'generated/'),
  defaultSha,
  `generated/ (${defaultSha ? `sha256 ${defaultSha.slice(0, 12)}` : 'no stamp'})`,
);

/**
 * Loads a policy component: reads it, transpiles it with jco in a worker thread (unless the same
 * bytes were loaded before: the default policy's or a recent one), compiles its core modules
 * and creates a fresh component instance.
 * @param {string | URL | Uint8Array | ArrayBuffer} source a path, a file URL, or the bytes
 * @returns {Promise<Policy>}
 */
export async function loadPolicy(source) {
  const { bytes, label } = await readSource(source);
  checkHeader(bytes, label);
  const sha = sha256(bytes);
  let compiled;
  if (sha === defaultSha) {
    compiled = defaultCompiled;
  } else {
    let pending = compiledBySha.get(sha);
    if (pending) {
      compiledBySha.delete(sha); // re-inserted below as the most recently used
    } else {
      pending = compile(bytes, label);
    }
    compiledBySha.set(sha, pending);
    while (compiledBySha.size > KEEP_COMPILED) compiledBySha.delete(compiledBySha.keys().next().value);
    try {
      compiled = await pending;
    } catch (e) {
      if (compiledBySha.get(sha) === pending) compiledBySha.delete(sha);
      throw e;
    }
  }
  return describe(instantiateCompiled(compiled, label), sha, label);
}

/**
 * The part of an interface version that must not change across a swap: the major, or for 0.x
 * the `0.minor` (the same rule the Rust host applies).
 * @param {string} version
 */
export function compatibleLine(version) {
  const [major, minor] = String(version).split('.');
  return major === '0' ? `0.${minor}` : major;
}

// ---- internals ----

/**
 * @typedef {{ exports: any, core: import('./core-calls.mjs').CoreCalls | null, version: string,
 *   interfaceVersion: string, sha256: string | null, source: string }} Policy
 *   `core`: the direct tool calls (core-calls.mjs), or null where jco's glue is used
 * @typedef {{ instantiate: Function, getCoreModule: (name: string) => WebAssembly.Module }} Compiled
 */

function describe({ exports, core }, sha, source) {
  let version;
  let interfaceVersion;
  try {
    version = exports.version();
    interfaceVersion = exports.interfaceVersion();
  } catch (e) {
    throw new LoopGuardError('policy', `${source}: version()/interface-version() failed (${message(e)})`, { cause: e });
  }
  return { exports, core, version, interfaceVersion, sha256: sha, source };
}

/** Instantiates a compiled policy; also returns the direct tool calls on its core instances. */
function instantiateCompiled(compiled, label) {
  let exports;
  const instances = [];
  const instantiateCore = (module, imports) => {
    const instance = new WebAssembly.Instance(module, imports);
    instances.push(instance);
    return instance;
  };
  try {
    exports = compiled.instantiate((name) => compiled.getCoreModule(name), WASI, instantiateCore);
  } catch (e) {
    throw new LoopGuardError('policy', `${label}: cannot be instantiated (${message(e)})`, { cause: e });
  }
  if (
    typeof exports?.guard?.Gateway?.create !== 'function' ||
    typeof exports.version !== 'function' ||
    typeof exports.interfaceVersion !== 'function' ||
    typeof exports.replay !== 'function'
  ) {
    throw new LoopGuardError(
      'policy',
      `${label}: does not export the loopguard:policy world (guard, version, interface-version, replay)`,
    );
  }
  return { exports, core: JCO_GLUE_ONLY ? null : coreCalls(instances) };
}

async function compile(bytes, label) {
  const files = await transpileInWorker(bytes, label);
  const js = files[`${NAME}.js`];
  if (!js) throw new LoopGuardError('policy', `${label}: jco produced no ${NAME}.js`);
  const jsSha = sha256(js);
  let instantiate = bindingsBySha.get(jsSha);
  if (!instantiate) {
    // jco's instantiation-mode bindings import nothing, so they load fine from a data: URL.
    const url = `data:text/javascript;base64,${Buffer.from(js).toString('base64')}`;
    instantiate = (await import(url)).instantiate;
    bindingsBySha.set(jsSha, instantiate);
  }
  const names = Object.keys(files).filter((n) => n.endsWith('.wasm'));
  const compiled = await Promise.all(
    names.map(async (n) => {
      try {
        return [n, await WebAssembly.compile(files[n])];
      } catch (e) {
        throw new LoopGuardError('policy', `${label}: core module ${n} does not compile (${message(e)})`, { cause: e });
      }
    }),
  );
  const modules = new Map(compiled);
  return {
    instantiate,
    getCoreModule(name) {
      const module = modules.get(name);
      if (!module) throw new Error(`jco asked for a core module ${name} it did not produce`);
      return module;
    },
  };
}

/** jco's transpile is a long synchronous computation: a worker keeps the gateway responsive. */
function transpileInWorker(bytes, label) {
  return new Promise((resolve, reject) => {
    let done = false;
    const worker = new Worker(new URL('./transpile-worker.mjs', import.meta.url), { workerData: bytes });
    const finish = (fn, value) => {
      if (done) return;
      done = true;
      worker.terminate();
      fn(value);
    };
    worker.once('message', (m) => {
      if (m.ok) finish(resolve, m.files);
      else finish(reject, new LoopGuardError('policy', `${label}: ${m.reason}`));
    });
    worker.once('error', (e) =>
      finish(reject, new LoopGuardError('policy', `${label}: transpiling failed (${message(e)})`, { cause: e })),
    );
    worker.once('exit', (code) =>
      finish(reject, new LoopGuardError('policy', `${label}: the transpile worker exited (code ${code})`)),
    );
  });
}

async function readSource(source) {
  if (typeof source === 'string' || source instanceof URL) {
    const label = source instanceof URL ? fileURLToPath(source) : source;
    try {
      return { bytes: new Uint8Array(await readFile(source)), label };
    } catch (e) {
      throw new LoopGuardError('policy', `${label}: cannot be read (${message(e)})`, { cause: e });
    }
  }
  if (source instanceof Uint8Array) return { bytes: source.slice(), label: `<${source.length} bytes>` };
  if (source instanceof ArrayBuffer) return { bytes: new Uint8Array(source.slice(0)), label: `<${source.byteLength} bytes>` };
  throw new LoopGuardError('policy', 'must be a path, a file URL, a Uint8Array (or Buffer) or an ArrayBuffer');
}

/** A precise first answer for the common mistakes; jco's own error would be less direct. */
function checkHeader(bytes, label) {
  const magic = bytes.length >= 8 && bytes[0] === 0 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;
  if (!magic) {
    throw new LoopGuardError('policy', `${label}: not WebAssembly (no \\0asm header); expected a component such as loopguard_policy.wasm`);
  }
  const layer = bytes[6] | (bytes[7] << 8);
  if (layer !== 1) {
    throw new LoopGuardError(
      'policy',
      `${label}: a core WebAssembly module, not a component; build the policy for wasm32-wasip2 (loopguard_policy.wasm)`,
    );
  }
}

function readStampSha() {
  try {
    const stamp = JSON.parse(readFileSync(new URL('.stamp.json', generated), 'utf8'));
    return typeof stamp.sha256 === 'string' ? stamp.sha256 : null;
  } catch {
    return null;
  }
}

function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

function message(e) {
  return e instanceof Error ? e.message : String(e);
}
