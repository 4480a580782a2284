// The WASI 0.2 imports a policy component gets in Node: cli (no environment, no arguments, stdio
// on the process's own descriptors), clocks, io streams and polls, random. No filesystem, sockets
// or http: a policy that imports them fails to instantiate.
//
// Why not @bytecodealliance/preview2-shim: its Node build starts a worker thread (a second V8
// isolate) when it is imported, to run blocking stream calls. A policy writes at most a panic
// message and never blocks, yet the thread cost every process that loaded loopguard ~11 MiB of
// RSS (measured with Node 20: importing the shim took RSS from 41.8 to 52.7 MiB and one thread
// more), and OpenClaw's plugin runs the guard in a worker of its own, so the gateway paid for a
// third isolate. The shim's browser build has no worker, but its package exports give Node only
// the Node build. What a policy needs is small and synchronous, so it is written here. The shim
// stays a dependency: jco's own transpiler component (generated/jco/) imports it, in the
// short-lived worker lib/transpile-worker.js starts only to load a policy other than the default.
import { writeSync } from 'node:fs';
import { randomFillSync } from 'node:crypto';

/** A WASI `error` resource (wasi:io/error). */
class IoError {
  #message;
  constructor(message) {
    this.#message = message;
  }
  toDebugString() {
    return this.#message;
  }
}

/** Sleeps the calling thread; a policy's pollables are clocks or always ready. */
function sleepNs(ns) {
  if (ns > 0n) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(ns / 1_000_000n) + 1);
}

/** A pollable that is ready at a monotonic instant (0n: at once). */
class Pollable {
  #readyAt;
  constructor(readyAt = 0n) {
    this.#readyAt = readyAt;
  }
  ready() {
    return process.hrtime.bigint() >= this.#readyAt;
  }
  block() {
    sleepNs(this.#readyAt - process.hrtime.bigint());
  }
  /** @internal the instant it becomes ready */
  readyAt() {
    return this.#readyAt;
  }
}

/** `poll`: blocks until at least one pollable is ready; returns the indices of the ready ones. */
function poll(list) {
  if (list.length === 0) throw new TypeError('poll needs at least one pollable');
  const first = list.reduce((min, p) => (p.readyAt() < min ? p.readyAt() : min), list[0].readyAt());
  sleepNs(first - process.hrtime.bigint());
  return new Uint32Array(list.flatMap((p, i) => (p.ready() ? [i] : [])));
}

/** Stdin: a policy has none, so it reads as closed. */
class InputStream {
  read() {
    throw { tag: 'closed' };
  }
  blockingRead() {
    throw { tag: 'closed' };
  }
  skip() {
    throw { tag: 'closed' };
  }
  blockingSkip() {
    throw { tag: 'closed' };
  }
  subscribe() {
    return new Pollable();
  }
}

/** Stdout or stderr: every write goes straight to the process's descriptor, synchronously. */
class OutputStream {
  #fd;
  constructor(fd) {
    this.#fd = fd;
  }
  checkWrite() {
    return 1_048_576n;
  }
  write(contents) {
    try {
      for (let done = 0; done < contents.length; ) done += writeSync(this.#fd, contents, done);
    } catch (e) {
      throw { tag: 'last-operation-failed', val: new IoError(String(e?.message ?? e)) };
    }
  }
  blockingWriteAndFlush(contents) {
    this.write(contents);
  }
  flush() {}
  blockingFlush() {}
  writeZeroes(len) {
    this.write(new Uint8Array(Number(len)));
  }
  blockingWriteZeroesAndFlush(len) {
    this.writeZeroes(len);
  }
  splice() {
    throw { tag: 'closed' };
  }
  blockingSplice() {
    throw { tag: 'closed' };
  }
  subscribe() {
    return new Pollable();
  }
}

/** What `exit` throws: jco passes it through to the caller, which reports it as a trap. */
class ComponentExit extends Error {
  constructor(code) {
    super(`the policy called exit(${code})`);
    this.exitError = true;
    this.code = code;
  }
}

function randomBytes(len) {
  return randomFillSync(new Uint8Array(Number(len)));
}
function randomU64() {
  return randomFillSync(new BigUint64Array(1))[0];
}

const stdin = new InputStream();
const stdout = new OutputStream(1);
const stderr = new OutputStream(2);
class TerminalInput {}
class TerminalOutput {}

/** The import object jco's generated bindings take, keyed by interface without its version. */
export const WASI = Object.freeze({
  'wasi:cli/environment': { getEnvironment: () => [], getArguments: () => [], initialCwd: () => undefined },
  'wasi:cli/exit': {
    exit: (status) => {
      throw new ComponentExit(status?.tag === 'err' ? 1 : 0);
    },
  },
  'wasi:cli/stdin': { getStdin: () => stdin },
  'wasi:cli/stdout': { getStdout: () => stdout },
  'wasi:cli/stderr': { getStderr: () => stderr },
  'wasi:cli/terminal-input': { TerminalInput },
  'wasi:cli/terminal-output': { TerminalOutput },
  'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
  'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
  'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
  'wasi:clocks/monotonic-clock': {
    now: () => process.hrtime.bigint(),
    resolution: () => 1n,
    subscribeInstant: (instant) => new Pollable(instant),
    subscribeDuration: (duration) => new Pollable(process.hrtime.bigint() + duration),
  },
  'wasi:clocks/wall-clock': {
    now: () => {
      const ms = Date.now();
      return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1_000_000 };
    },
    resolution: () => ({ seconds: 0n, nanoseconds: 1_000_000 }),
  },
  'wasi:io/error': { Error: IoError },
  'wasi:io/poll': { Pollable, poll },
  'wasi:io/streams': { InputStream, OutputStream },
  'wasi:random/random': { getRandomBytes: randomBytes, getRandomU64: randomU64 },
  'wasi:random/insecure': { getInsecureRandomBytes: randomBytes, getInsecureRandomU64: randomU64 },
  'wasi:random/insecure-seed': { insecureSeed: () => [randomU64(), randomU64()] },
});
