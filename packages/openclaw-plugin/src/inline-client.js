// The policy on the gateway's own thread: the same interface as GuardClient (guard-client.js),
// without the thread hop. Why both: a call here costs what the policy costs (tens of µs) and no
// second isolate is kept, but a policy that spins cannot be stopped — so this is for the policy
// shipped inside the `loopguard` package (bounded, fuzzed), and a policy file the operator
// brings runs in the worker, behind a deadline (`isolation`, see config.js).
//
// A trap is contained all the same: the component instance is then unusable ("cannot enter
// component instance"), so calls answer `{ ok: false }` (the plugin's fail mode) while a fresh
// instance is built from the last snapshot, which is taken at most once a second while the state
// changes.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { adoptState, checkPin, errorOf } from './policy-start.js';

const SNAPSHOT_EVERY_MS = 1_000;
const STATEFUL = new Set(['check', 'outcome', 'compaction', 'endSession', 'bot', 'importState']);

export class InlineClient {
  /** Same options as GuardClient (`policy`: null for the package's own policy, or the bytes). */
  constructor(o) {
    this.o = o;
    this.guard = null;
    this.lg = null;
    this.info = null;
    this.lastSnapshot = null;
    this.startError = null;
    this.rebuilding = null;
    this.stopped = false;
    this.snapshotTimer = null;
    this.failures = { timeouts: 0, traps: 0, errors: 0, restarts: 0 };
  }

  get ready() {
    return this.guard !== null;
  }

  #module() {
    // require(esm): loopguard has no top-level await, so this is synchronous (Node ≥ 22.12)
    this.lg ??= createRequire(import.meta.url)(fileURLToPath(this.o.loopguardUrl));
    return this.lg;
  }

  /**
   * The package's own policy is ready at once (its bindings ship compiled); a policy file is
   * transpiled first (LoopGuard.load, about a second), and calls answer the fail mode meanwhile.
   */
  start(snapshot = this.lastSnapshot) {
    if (this.guard || this.stopped || this.rebuilding) return;
    if (this.o.policy) {
      this.#loadAsync(snapshot);
      return;
    }
    try {
      const { LoopGuard } = this.#module();
      const guard = new LoopGuard(this.o.config);
      checkPin(guard, this.o.expectDigest);
      this.#adopt(guard, snapshot);
    } catch (e) {
      this.#failed(e);
    }
  }

  #failed(e) {
    this.startError = errorOf(e);
    this.o.log('error', `the policy did not load: ${this.startError.message}`, { error: this.startError });
    this.o.onStartFailed?.(this.startError);
  }

  /** LoopGuard.load of the configured policy (bytes or a path), or of the package's own file. */
  #loadAsync(snapshot) {
    const { LoopGuard } = this.#module();
    const source = this.o.policy ?? fileURLToPath(new URL('./generated/loopguard_policy.wasm', this.o.loopguardUrl));
    const options = this.o.expectDigest ? { expectDigest: this.o.expectDigest } : {};
    this.rebuilding = LoopGuard.load(source, this.o.config, options)
      .then((guard) => {
        if (this.stopped) guard[Symbol.dispose]();
        else this.#adopt(guard, snapshot);
      })
      .catch((e) => this.#failed(e))
      .finally(() => {
        this.rebuilding = null;
      });
  }

  #adopt(guard, snapshot) {
    const info = adoptState(guard, snapshot);
    if (info.importError) this.o.log('warn', `the saved state was not imported: ${info.importError.message}`, { error: info.importError });
    this.guard = guard;
    this.startError = null;
    if (snapshot) this.lastSnapshot = snapshot;
    this.info = info;
    this.o.onReady?.(this.info);
  }

  call(op, ...args) {
    if (!this.guard) {
      if (!this.startError) this.start();
      if (!this.guard) return { ok: false, reason: 'unavailable', error: this.startError ?? { kind: 'policy', path: 'policy', message: 'the policy is not loaded yet (starting, or rebuilt after a trap)' } };
    }
    const g = this.guard;
    try {
      let value;
      switch (op) {
        case 'check': value = g.beforeToolCall(args[0]); break;
        case 'outcome': value = g.afterToolOutcome(args[0], args[1]); break;
        case 'compaction': value = g.afterCompactionRetry(args[0], args[1], args[2]); break;
        case 'endSession': g.endSession(args[0]); value = null; break;
        case 'bot': value = g.onBotMessage(args[0]); break;
        case 'exportState': value = g.exportState(); break;
        case 'importState': g.importState(args[0]); value = null; break;
        case 'stats': value = g.stats(); break;
        case 'policy': value = g.policy; break;
        case 'warm': g.warmUp({ rounds: args[0] }); value = null; break;
        case 'ping': value = 'pong'; break;
        default: return { ok: false, reason: 'error', error: { kind: 'input', path: 'op', message: `unknown op ${op}` } };
      }
      if (STATEFUL.has(op)) this.#snapshotSoon();
      return { ok: true, value };
    } catch (e) {
      const error = errorOf(e);
      if (isTrap(e)) {
        this.failures.traps += 1;
        this.o.log('error', `the policy trapped in ${op}: ${error.message}; rebuilding it from the last snapshot`, { error });
        this.#rebuild();
        return { ok: false, reason: 'trap', error };
      }
      this.failures.errors += 1;
      return { ok: false, reason: 'error', error };
    }
  }

  snapshot() {
    const r = this.call('exportState');
    if (!r.ok) return null;
    this.lastSnapshot = r.value;
    return r.value;
  }

  /** Hot swap (LoopGuard.swap: the state moves over; on failure the active policy stays). */
  async swap(bytes, expectDigest) {
    if (!this.guard) return { ok: false, error: { kind: 'policy', path: 'policy', message: 'the policy is not running' } };
    try {
      return { ok: true, value: await this.guard.swap(bytes, expectDigest ? { expectDigest } : {}) };
    } catch (e) {
      return { ok: false, error: errorOf(e) };
    }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.snapshotTimer);
    try {
      this.guard?.[Symbol.dispose]();
    } catch {}
    this.guard = null;
  }

  #snapshotSoon() {
    if (this.snapshotTimer !== null) return;
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      try {
        if (this.guard) this.lastSnapshot = this.guard.exportState();
      } catch {}
    }, SNAPSHOT_EVERY_MS);
    this.snapshotTimer.unref();
  }

  /** A fresh component instance (the default policy's compiled modules, a new instance) + the last snapshot. */
  #rebuild() {
    const dead = this.guard;
    this.guard = null;
    this.info = null;
    try {
      dead?.[Symbol.dispose]();
    } catch {}
    this.failures.restarts += 1;
    // a new component instance: for the package's own policy its file's digest selects the
    // shipped bindings (no transpile), so the rebuild takes milliseconds
    this.#loadAsync(this.lastSnapshot);
  }
}

function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError || e?.cause instanceof WebAssembly.RuntimeError || /trapped|cannot enter component instance/.test(String(e?.message ?? ''));
}

