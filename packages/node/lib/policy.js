// Loading policy components: the default one (transpiled by jco when the package was built and
// shipped in generated/) and any other `.wasm` given at run time to `LoopGuard.load` /
// `guard.swap` (transpiled by jco-transpile in a worker thread, so the gateway keeps answering
// meanwhile). Every policy is its own component instance, with its own linear memory and its own
// `Gateway` class, so two of them live side by side in one process, which a hot swap needs.
//
// Nothing here decides anything: it compiles, instantiates, checks versions and digests, and
// reports what went wrong as a LoopGuardError of kind `policy`. No top-level await anywhere in
// the import graph: hosts such as OpenClaw load plugins with require().
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { blake3 } from '@noble/hashes/blake3.js';
import { instantiate as defaultInstantiate } from '../generated/loopguard_policy.js';
import { LoopGuardError, message } from './errors.js';
import { WASI } from './wasi.js';

/** The WIT interface this package drives; a policy of another major version is refused. */
export const SUPPORTED_INTERFACE = '1';

const generated = new URL('../generated/', import.meta.url);

/**
 * @typedef {{ exports: any, version: string, interfaceVersion: string, blake3: string,
 *   source: string }} Policy
 */

/** @type {Policy | null} */
let defaultPolicy = null;

/**
 * The policy shipped in generated/, instantiated on first use (once per process).
 * @returns {Policy}
 */
export function getDefaultPolicy() {
  if (defaultPolicy === null) {
    defaultPolicy = instantiate(defaultInstantiate, compiledDefault, readManifest().blake3, 'the default policy');
  }
  return defaultPolicy;
}

/**
 * Loads a policy component: reads it, checks its digest if one is pinned, transpiles it with
 * jco-transpile in a worker thread (unless it is the default policy's bytes), compiles its core
 * modules and creates a fresh component instance.
 * @param {string | URL | Uint8Array | ArrayBuffer} source a path, a file URL, or the bytes
 * @param {{ expectDigest?: string }} [options] the blake3 digest (hex) the bytes must have
 * @returns {Promise<Policy>}
 */
export async function loadPolicy(source, options = {}) {
  const { bytes, label } = await readSource(source);
  const digest = hex(blake3(bytes));
  if (options.expectDigest !== undefined) {
    const expected = String(options.expectDigest).trim().toLowerCase();
    if (expected !== digest) {
      throw new LoopGuardError(
        'policy',
        label,
        `has blake3 digest ${digest}, but ${expected} was pinned; refusing to load it ` +
          '(deploy the pinned file, or pin the new digest if the change is intended)',
      );
    }
  }
  checkHeader(bytes, label);
  if (digest === readManifest().blake3) {
    // The default policy's bytes: its shipped bindings and compiled modules, a new instance.
    return instantiate(defaultInstantiate, compiledDefault, digest, label);
  }
  const { instantiate: bindings, modules } = await compile(bytes, label);
  const getCoreModule = (name) => {
    const module = modules.get(name);
    if (!module) throw new LoopGuardError('policy', label, `jco asked for a core module ${name} it did not produce`);
    return module;
  };
  return instantiate(bindings, getCoreModule, digest, label);
}

/**
 * The part of an interface version that must match: the major (for 0.x, `0.minor`).
 * @param {string} version
 */
export function compatibleLine(version) {
  const [major, minor] = String(version).split('.');
  return major === '0' ? `0.${minor}` : major;
}

// ---- internals ----

/** The default policy's compiled core modules, shared by every instance made of its bytes. */
const defaultModules = new Map();
function compiledDefault(name) {
  let module = defaultModules.get(name);
  if (!module) {
    const file = fileURLToPath(new URL(name, generated));
    try {
      module = new WebAssembly.Module(readFileSync(file));
    } catch (e) {
      throw new LoopGuardError('policy', file, brokenInstall(e), { cause: e });
    }
    defaultModules.set(name, module);
  }
  return module;
}

/** generated/policy.json, written by scripts/build.mjs: what the shipped policy is. */
export function readManifest() {
  const file = fileURLToPath(new URL('policy.json', generated));
  try {
    const m = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof m.blake3 !== 'string') throw new Error('no blake3 digest in it');
    return m;
  } catch (e) {
    throw new LoopGuardError('policy', file, brokenInstall(e), { cause: e });
  }
}

function brokenInstall(e) {
  return `the policy shipped in this package cannot be read (${message(e)}); reinstall the loopguard package`;
}

/** Instantiates compiled bindings and checks that the result is a 1.x loopguard policy. */
function instantiate(bindings, getCoreModule, digest, label) {
  let exports;
  try {
    exports = bindings(getCoreModule, WASI);
  } catch (e) {
    if (e instanceof LoopGuardError) throw e;
    throw new LoopGuardError('policy', label, `cannot be instantiated (${message(e)})`, { cause: e });
  }
  if (
    typeof exports?.guard?.Gateway?.create !== 'function' ||
    typeof exports.version !== 'function' ||
    typeof exports.interfaceVersion !== 'function' ||
    typeof exports.replay !== 'function'
  ) {
    throw new LoopGuardError(
      'policy',
      label,
      'does not export the loopguard:policy world (guard, version, interface-version, replay)',
    );
  }
  let version;
  let interfaceVersion;
  try {
    version = exports.version();
    interfaceVersion = exports.interfaceVersion();
  } catch (e) {
    throw new LoopGuardError('policy', label, `version()/interface-version() failed (${message(e)})`, { cause: e });
  }
  if (compatibleLine(interfaceVersion) !== SUPPORTED_INTERFACE) {
    throw new LoopGuardError(
      'policy',
      label,
      `implements loopguard:policy@${interfaceVersion}, but this package drives loopguard:policy@${SUPPORTED_INTERFACE}.x; ` +
        'use a policy built for that interface, or the loopguard package release that matches it',
    );
  }
  return { exports, version, interfaceVersion, blake3: digest, source: label };
}

async function compile(bytes, label) {
  const files = await transpileInWorker(bytes, label);
  const js = files['loopguard_policy.js'];
  if (!js) throw new LoopGuardError('policy', label, 'jco produced no loopguard_policy.js');
  // jco's instantiation-mode bindings import nothing, so they load from a data: URL.
  const url = `data:text/javascript;base64,${Buffer.from(js).toString('base64')}`;
  const { instantiate: bindings } = await import(url);
  const modules = new Map();
  for (const [name, data] of Object.entries(files)) {
    if (!name.endsWith('.wasm')) continue;
    try {
      modules.set(name, await WebAssembly.compile(data));
    } catch (e) {
      throw new LoopGuardError('policy', label, `core module ${name} does not compile (${message(e)})`, { cause: e });
    }
  }
  return { instantiate: bindings, modules };
}

/** Transpiling is a long synchronous computation: a worker keeps the gateway responsive. */
function transpileInWorker(bytes, label) {
  return new Promise((resolve, reject) => {
    let done = false;
    const worker = new Worker(new URL('./transpile-worker.js', import.meta.url), { workerData: bytes });
    const finish = (fn, value) => {
      if (done) return;
      done = true;
      worker.terminate();
      fn(value);
    };
    worker.once('message', (m) => {
      if (m.ok) finish(resolve, m.files);
      else finish(reject, new LoopGuardError('policy', label, m.reason));
    });
    worker.once('error', (e) =>
      finish(reject, new LoopGuardError('policy', label, `transpiling failed (${message(e)})`, { cause: e })),
    );
    worker.once('exit', (code) =>
      finish(reject, new LoopGuardError('policy', label, `the transpile worker exited (code ${code})`)),
    );
  });
}

async function readSource(source) {
  if (typeof source === 'string' || source instanceof URL) {
    const label = source instanceof URL ? fileURLToPath(source) : source;
    try {
      return { bytes: new Uint8Array(await readFile(source)), label };
    } catch (e) {
      throw new LoopGuardError('policy', label, `cannot be read (${message(e)})`, { cause: e });
    }
  }
  if (source instanceof Uint8Array) return { bytes: source.slice(), label: `<${source.length} bytes>` };
  if (source instanceof ArrayBuffer) return { bytes: new Uint8Array(source.slice(0)), label: `<${source.byteLength} bytes>` };
  throw new LoopGuardError('input', 'policy', 'must be a path, a file URL, a Uint8Array (or Buffer) or an ArrayBuffer');
}

/** A precise first answer for the common mistakes; jco's own error would be less direct. */
function checkHeader(bytes, label) {
  const magic = bytes.length >= 8 && bytes[0] === 0 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;
  if (!magic) {
    throw new LoopGuardError('policy', label, 'not WebAssembly (no \\0asm header); expected a component such as loopguard_policy.wasm');
  }
  if ((bytes[6] | (bytes[7] << 8)) !== 1) {
    throw new LoopGuardError('policy', label, 'a core WebAssembly module, not a component; build the policy for wasm32-wasip2');
  }
}

/** @param {Uint8Array} bytes */
export function hex(bytes) {
  return Buffer.from(bytes).toString('hex');
}
