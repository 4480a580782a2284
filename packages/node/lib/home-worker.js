// The caller's side of the policy worker (lib/worker.js): synchronous calls with a deadline.
//
// A gateway runs its hooks on one event loop, and a loop guard must answer before the tool runs.
// So a call blocks the caller on Atomics.wait until the worker answers (about 10-50 µs of
// overhead), but never longer than `callTimeoutMs`: the call then returns `timeout`, and the
// Supervisor replaces the worker. One worker per home; a home is not restarted, the Supervisor
// makes a new one.
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

const STARTING = 0;
const READY = 1;
const FAILED = 2;
/** The longest single sleep while a call waits: a lost wake-up costs a slice, never the deadline. */
const WAIT_SLICE_MS = 5;

export class WorkerHome {
  /** @param {import('./home-inline.js').HomeOptions} o */
  constructor(o) {
    this.o = o;
    this.nextId = 0;
    this.pendingAsync = new Map();
    this.readyTaken = false;
    this.signal = new Int32Array(new SharedArrayBuffer(16));
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: { policy: o.policy, expectDigest: o.expectDigest, config: o.config, snapshot: o.snapshot, signal: this.signal.buffer, port: port2 },
      transferList: [port2],
      // not the host process's node flags (loaders, --input-type, …): the worker loads plain ESM
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    port1.unref?.();
    this.worker.on('message', (m) => {
      if (this.worker === null) return;
      if (m.control === 'ready') return this.#takeReady();
      if (m.control === 'snapshot') return this.o.onSnapshot(m.bytes);
      const p = this.pendingAsync.get(m.id);
      this.pendingAsync.delete(m.id);
      return p?.(m);
    });
    const gone = (why) => {
      if (this.worker === null) return;
      this.stop();
      this.o.onGone(why);
    };
    this.worker.on('error', (e) => gone(`the policy worker failed: ${e?.message ?? e}`));
    this.worker.on('exit', (code) => gone(`the policy worker exited (code ${code})`));
  }

  /** True when the worker's policy is loaded. */
  get ready() {
    return this.worker !== null && Atomics.load(this.signal, 1) === READY;
  }

  /** Reads the worker's readiness message (once), from the sync port. */
  #takeReady() {
    if (this.readyTaken || this.worker === null) return;
    const m = receiveMessageOnPort(this.port)?.message;
    if (!m || m.id !== 0) return;
    this.readyTaken = true;
    if (m.ready) this.o.onReady(m.info);
    else this.o.onFailed(m.error);
  }

  /** One synchronous call: `{ ok, value }` or `{ ok: false, reason, error }` (a plain error). */
  call(op, args) {
    if (this.worker === null) return unavailable('the policy worker stopped');
    let state = Atomics.load(this.signal, 1);
    if (state === STARTING) {
      Atomics.wait(this.signal, 1, STARTING, this.o.startTimeoutMs);
      state = Atomics.load(this.signal, 1);
      if (state === STARTING) return unavailable(`the policy did not load within ${this.o.startTimeoutMs} ms`);
    }
    this.#takeReady();
    if (state === FAILED || this.worker === null) return unavailable('the policy did not load');
    const reply = this.#exchange(op, args, this.o.callTimeoutMs);
    if (!reply) return { ok: false, reason: 'timeout', error: { kind: 'policy', path: op, reason: `no answer within ${this.o.callTimeoutMs} ms` } };
    if (reply.ok) return { ok: true, value: reply.value };
    return { ok: false, reason: reply.trap ? 'trap' : 'error', error: reply.error };
  }

  /** The state of an instance that failed, if it still answers within `timeoutMs`; else null. */
  tryExport(timeoutMs) {
    if (!this.ready) return null;
    const m = this.#exchange('exportState', [], timeoutMs);
    return m?.ok ? m.value : null;
  }

  /**
   * Posts one request and waits for its answer until `timeoutMs`, in futex waits of at most
   * WAIT_SLICE_MS. No spinning: measured on a 2-vCPU VM, the woken worker runs on the caller's
   * CPU, so spinning only delays it.
   */
  #exchange(op, args, timeoutMs) {
    const id = (this.nextId % 0x7ffffff0) + 1;
    this.nextId = id;
    const { signal, port } = this;
    port.postMessage({ id, op, args });
    Atomics.store(signal, 2, id);
    Atomics.notify(signal, 2);
    const deadline = performance.now() + timeoutMs;
    for (let i = 0; i < 10_000_000; i += 1) {
      const seen = Atomics.load(signal, 0);
      if (seen === id) {
        const m = receiveMessageOnPort(port)?.message;
        if (m?.id === id) return m;
        if (m) continue; // a stale answer: skip it
      }
      const now = performance.now();
      if (now >= deadline) return null;
      Atomics.wait(signal, 0, seen, Math.min(WAIT_SLICE_MS, deadline - now));
    }
    return null;
  }

  /** Hot swap inside the worker (LoopGuard#swap): `{ ok, value }` or `{ ok: false, error }`. */
  swap(policy, expectDigest) {
    if (!this.ready) return Promise.resolve({ ok: false, error: { kind: 'policy', path: 'policy', reason: 'the policy is not running' } });
    const id = (this.nextId % 0x7ffffff0) + 1;
    this.nextId = id;
    return new Promise((resolve) => {
      this.pendingAsync.set(id, resolve);
      this.worker.postMessage({ id, op: 'swap', policy, expectDigest });
    });
  }

  /** Terminates the worker (no event follows). */
  stop() {
    const w = this.worker;
    if (w === null) return;
    this.worker = null;
    try {
      this.port.close();
    } catch {}
    for (const p of this.pendingAsync.values()) p({ ok: false, error: { kind: 'policy', path: 'policy', reason: 'the policy worker stopped' } });
    this.pendingAsync.clear();
    w.terminate().catch(() => {});
  }
}

const unavailable = (reason) => ({ ok: false, reason: 'unavailable', error: { kind: 'policy', path: 'policy', reason } });
