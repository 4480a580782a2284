// The gateway's side of the policy worker (guard-worker.js): synchronous calls with a deadline.
//
// OpenClaw runs hook handlers on its one event loop, and a loop guard must answer before the
// tool runs. So a call here blocks the gateway thread on Atomics.wait until the worker answers
// (about 10-50 µs of overhead), but never longer than `callTimeoutMs`: a policy that spins is
// terminated and replaced, a policy that traps is replaced, and either way the call returns
// `{ ok: false }` so the plugin can answer with its fail mode. The replacement starts from the
// freshest state there is: exported from the failed instance if it still answers, else the
// last snapshot this client kept.
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

const STARTING = 0;
const READY = 1;
const FAILED = 2;
/**
 * How long a call spins before it sleeps, and the longest single sleep while it waits. No spin:
 * measured on a 2-vCPU VM, the woken worker runs on the caller's CPU, so spinning only delays it.
 */
const SPIN_MS = 0;
const WAIT_SLICE_MS = 5;
/** After a failed start, the next attempt waits this long (a broken policy is not respawned per call). */
const RESTART_BACKOFF_MS = 30_000;
/** This many traps or timeouts within FAILURE_WINDOW_MS pause the policy for RESTART_BACKOFF_MS. */
const FAILURE_BURST = 3;
const FAILURE_WINDOW_MS = 60_000;

export class GuardClient {
  /**
   * @param {object} o
   * @param {string} o.workerUrl the guard-worker.js file URL
   * @param {string} o.loopguardUrl the `loopguard` package's entry, as a file URL
   * @param {string | null} o.policy a policy .wasm path, or null for the package's own
   * @param {string | null} o.expectDigest
   * @param {string} o.config the policy's config document (JSON)
   * @param {number} o.callTimeoutMs
   * @param {number} o.startTimeoutMs
   * @param {(level: string, msg: string, data?: object) => void} o.log
   */
  constructor(o) {
    this.o = o;
    this.worker = null;
    this.port = null;
    this.signal = null;
    this.nextId = 0;
    this.lastSnapshot = null;
    this.startError = null;
    this.failedAt = 0;
    this.info = null; // {policy, imported, importError} once ready
    this.pendingAsync = new Map();
    this.generation = 0;
    this.failures = { timeouts: 0, traps: 0, errors: 0, restarts: 0 };
    this.recentFailures = [];
    this.pausedUntil = 0;
  }

  /** Spawns a worker (unless one is running), seeded with `snapshot` (or the last one kept). */
  start(snapshot = this.lastSnapshot) {
    if (this.worker) return;
    const gen = ++this.generation;
    const signal = new Int32Array(new SharedArrayBuffer(16));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(new URL(this.o.workerUrl), {
      workerData: {
        loopguardUrl: this.o.loopguardUrl,
        policy: this.o.policy,
        expectDigest: this.o.expectDigest,
        config: this.o.config,
        snapshot,
        signal: signal.buffer,
        port: port2,
      },
      transferList: [port2],
      // not the gateway's own node flags (loaders, --input-type, …): the worker loads plain ESM
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    worker.unref();
    port1.unref?.();
    this.worker = worker;
    this.port = port1;
    this.signal = signal;
    this.info = null;
    this.startError = null;
    if (snapshot) this.lastSnapshot = snapshot;
    this.readyTaken = false;
    worker.on('message', (m) => {
      if (gen !== this.generation) return;
      if (m.control === 'ready') return this.#takeReady();
      if (m.control === 'snapshot') {
        this.lastSnapshot = m.bytes;
        return undefined;
      }
      const p = this.pendingAsync.get(m.id);
      if (p) {
        this.pendingAsync.delete(m.id);
        p(m);
      }
    });
    worker.on('error', (e) => {
      if (gen !== this.generation) return;
      this.o.log('error', `the policy worker failed: ${e?.message ?? e}`);
      this.#drop();
    });
    worker.on('exit', (code) => {
      if (gen !== this.generation) return;
      if (this.worker) this.o.log('warn', `the policy worker exited (code ${code})`);
      this.#drop();
    });
  }

  /** Reads the worker's readiness message (once), from the sync port. */
  #takeReady() {
    if (this.readyTaken || !this.port) return;
    const m = receiveMessageOnPort(this.port)?.message;
    if (!m || m.id !== 0) return;
    this.readyTaken = true;
    if (m.ready) {
      this.info = { policy: m.policy, imported: m.imported, importError: m.importError };
      if (m.importError) this.o.log('warn', `the saved state was not imported: ${m.importError.message}`, { error: m.importError });
      this.o.onReady?.(this.info);
    } else {
      this.startError = m.error;
      this.failedAt = Date.now();
      this.o.log('error', `the policy did not load: ${m.error.message}`, { error: m.error });
      this.o.onStartFailed?.(m.error);
    }
  }

  /** True when a worker is running and its policy is loaded. */
  get ready() {
    return this.signal !== null && Atomics.load(this.signal, 1) === READY;
  }

  /**
   * One synchronous policy call. Returns `{ ok: true, value }`, or `{ ok: false, reason, error? }`
   * with reason `timeout`, `trap`, `error` (the policy refused the input) or `unavailable`.
   */
  call(op, ...args) {
    if (!this.worker) {
      if (this.startError && Date.now() - this.failedAt < RESTART_BACKOFF_MS) return { ok: false, reason: 'unavailable', error: this.startError };
      if (Date.now() < this.pausedUntil) return { ok: false, reason: 'unavailable', error: { kind: 'policy', path: 'worker', message: 'the policy is paused after repeated traps or timeouts' } };
      this.start();
    }
    const signal = this.signal;
    let state = Atomics.load(signal, 1);
    if (state === STARTING) {
      Atomics.wait(signal, 1, STARTING, this.o.startTimeoutMs);
      state = Atomics.load(signal, 1);
      if (state === STARTING) return { ok: false, reason: 'unavailable', error: { kind: 'policy', path: 'worker', message: `the policy did not load within ${this.o.startTimeoutMs} ms` } };
    }
    if (!this.readyTaken) this.#takeReady();
    if (this.signal !== signal) return { ok: false, reason: 'unavailable', error: this.startError ?? { kind: 'policy', path: 'worker', message: 'the policy worker was replaced' } };
    if (state === FAILED) {
      const error = this.startError ?? { kind: 'policy', path: 'worker', message: 'the policy did not load' };
      this.#terminate();
      this.startError = error;
      this.failedAt = Date.now();
      return { ok: false, reason: 'unavailable', error };
    }
    const id = (this.nextId % 0x7ffffff0) + 1;
    this.nextId = id;
    const reply = this.#exchange(id, op, args, this.o.callTimeoutMs);
    if (!reply || reply.id !== id) {
      this.failures.timeouts += 1;
      this.o.log('error', `the policy did not answer ${op} within ${this.o.callTimeoutMs} ms: worker replaced`);
      this.#replace(false);
      return { ok: false, reason: 'timeout', error: { kind: 'policy', path: op, message: `no answer within ${this.o.callTimeoutMs} ms` } };
    }
    if (reply.ok) return { ok: true, value: reply.value };
    if (reply.trap) {
      this.failures.traps += 1;
      this.o.log('error', `the policy trapped in ${op}: ${reply.error.message}; worker replaced`, { error: reply.error });
      this.#replace(true);
      return { ok: false, reason: 'trap', error: reply.error };
    }
    this.failures.errors += 1;
    return { ok: false, reason: 'error', error: reply.error };
  }

  /**
   * Posts one request and waits for its answer until `timeoutMs`: a short spin first (most
   * answers take tens of µs, and a sleeping thread is slow to wake), then futex waits in short
   * slices (a lost wake-up costs a slice, never the whole deadline).
   */
  #exchange(id, op, args, timeoutMs) {
    const signal = this.signal;
    const port = this.port;
    port.postMessage({ id, op, args });
    Atomics.store(signal, 2, id);
    Atomics.notify(signal, 2);
    const start = performance.now();
    const deadline = start + timeoutMs;
    for (let i = 0; i < 10_000_000; i += 1) {
      const seen = Atomics.load(signal, 0);
      if (seen === id) {
        const m = receiveMessageOnPort(port)?.message;
        if (m?.id === id) return m;
        if (m) continue; // (a stale answer: skip it)
      }
      const now = performance.now();
      if (now >= deadline) return null;
      if (now - start < SPIN_MS) continue;
      Atomics.wait(signal, 0, seen, Math.min(WAIT_SLICE_MS, deadline - now));
    }
    return null;
  }

  /** The state as a snapshot (kept as the restart point too), or null if the policy cannot give it. */
  snapshot() {
    const r = this.call('exportState');
    if (!r.ok) return null;
    this.lastSnapshot = r.value;
    return r.value;
  }

  /** Hot swap inside the worker (LoopGuard.swap: the state moves over; on failure the old policy stays). */
  swap(path, expectDigest) {
    if (!this.worker || !this.ready) return Promise.resolve({ ok: false, error: { kind: 'policy', path: 'worker', message: 'the policy is not running' } });
    const id = (this.nextId % 0x7ffffff0) + 1;
    this.nextId = id;
    const worker = this.worker;
    return new Promise((resolve) => {
      this.pendingAsync.set(id, (m) => {
        if (m.ok) this.o.policy = path; // a restart loads what is now active
        if (m.ok && this.info) this.info.policy = m.value.to;
        resolve(m);
      });
      worker.postMessage({ id, op: 'swap', path, expectDigest });
    });
  }

  /** Stops the worker for good. */
  stop() {
    this.#terminate();
  }

  /** Replaces a failed worker: state from the failed instance if it still exports, else the last snapshot. */
  #replace(tryExport) {
    let snapshot = this.lastSnapshot;
    if (tryExport) {
      const worker = this.worker;
      // one bounded attempt: a trapped instance often still has intact state
      const r = this.#rawCall('exportState', Math.min(this.o.callTimeoutMs, 250));
      if (r && worker === this.worker) snapshot = r;
    }
    this.#terminate();
    this.lastSnapshot = snapshot;
    // a policy that keeps failing is not restarted for every call (each restart of a policy
    // other than the shipped one transpiles it again, and the gateway waits for that)
    const now = Date.now();
    this.recentFailures = [...this.recentFailures.filter((t) => now - t < FAILURE_WINDOW_MS), now];
    if (this.recentFailures.length >= FAILURE_BURST) {
      this.recentFailures = [];
      this.pausedUntil = now + RESTART_BACKOFF_MS;
      this.o.log('error', `the policy failed ${FAILURE_BURST} times within ${FAILURE_WINDOW_MS / 1000} s: paused for ${RESTART_BACKOFF_MS / 1000} s (calls are answered by failMode)`);
      return;
    }
    this.failures.restarts += 1;
    this.start(snapshot);
  }

  /** A call without failure handling (used while replacing a worker). */
  #rawCall(op, timeoutMs) {
    if (!this.worker || Atomics.load(this.signal, 1) !== READY) return null;
    const id = (this.nextId % 0x7ffffff0) + 1;
    this.nextId = id;
    const m = this.#exchange(id, op, [], timeoutMs);
    return m?.ok ? m.value : null;
  }

  #terminate() {
    const w = this.worker;
    this.#drop();
    w?.terminate().catch(() => {});
  }

  #drop() {
    this.generation += 1;
    this.worker = null;
    try {
      this.port?.close();
    } catch {}
    this.port = null;
    this.signal = null;
    this.info = null;
    for (const p of this.pendingAsync.values()) p({ ok: false, error: { kind: 'policy', path: 'worker', message: 'the policy worker stopped' } });
    this.pendingAsync.clear();
  }
}
