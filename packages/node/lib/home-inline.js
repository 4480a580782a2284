// The policy on the caller's own thread (Supervisor with isolation "inline"): the same calls as
// lib/home-worker.js without the thread hop. A call costs what the policy costs (tens of µs) and
// no second V8 isolate is kept, but a policy that spins cannot be stopped, so this is for the
// policy shipped in this package (bounded, fuzzed); a trap is contained all the same (the
// Supervisor rebuilds the instance from the last snapshot).
import { adoptState, defaultGuard, loadGuard, runOp, STATEFUL } from './ops.js';

const SNAPSHOT_EVERY_MS = 1_000;

/**
 * @typedef {object} HomeOptions
 * @property {string | Uint8Array | null} policy a policy path or bytes; null: the package's own
 * @property {string | null} expectDigest
 * @property {string} config the policy's config document (text)
 * @property {Uint8Array | null} snapshot the state to start from
 * @property {boolean} fresh a component instance of its own even for the package's own policy
 * @property {number} callTimeoutMs
 * @property {number} startTimeoutMs
 * @property {(info: object) => void} onReady
 * @property {(error: object) => void} onFailed a plain error
 * @property {(bytes: Uint8Array) => void} onSnapshot a new restart point
 * @property {(why: string) => void} onGone the home died by itself
 */

export class InlineHome {
  /** @param {HomeOptions} o */
  constructor(o) {
    this.o = o;
    this.guard = null;
    this.stopped = false;
    this.snapshotTimer = null;
    if (o.policy === null && !o.fresh) {
      // the package's own policy is ready at once: its bindings ship compiled
      let guard;
      try {
        guard = defaultGuard(o.config, o.expectDigest);
      } catch (e) {
        o.onFailed(e);
        return;
      }
      this.#adopt(guard);
      return;
    }
    // a policy file is transpiled first (LoopGuard.load, about a second); calls answer
    // `unavailable` meanwhile
    loadGuard(o.policy, o.config, o.expectDigest).then(
      (guard) => (this.stopped ? guard[Symbol.dispose]() : this.#adopt(guard)),
      (e) => this.stopped || o.onFailed(e),
    );
  }

  #adopt(guard) {
    const info = adoptState(guard, this.o.snapshot);
    this.guard = guard;
    this.o.onReady(info);
  }

  get ready() {
    return this.guard !== null;
  }

  call(op, args) {
    if (this.guard === null) return { ok: false, reason: 'unavailable', error: { kind: 'policy', path: 'policy', reason: 'the policy is not loaded yet' } };
    const r = runOp(this.guard, op, args);
    if (r.ok) {
      if (STATEFUL.has(op)) this.#snapshotSoon();
      return r;
    }
    return { ok: false, reason: r.trap ? 'trap' : 'error', error: r.error };
  }

  /** A trapped instance cannot export any more; the Supervisor falls back to its last snapshot. */
  tryExport() {
    return null;
  }

  async swap(policy, expectDigest) {
    if (this.guard === null) return { ok: false, error: { kind: 'policy', path: 'policy', reason: 'the policy is not running' } };
    try {
      return { ok: true, value: await this.guard.swap(policy, expectDigest ? { expectDigest } : {}) };
    } catch (e) {
      return { ok: false, error: e };
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

  /** The restart point: taken between calls, at most once a second while calls come. */
  #snapshotSoon() {
    if (this.snapshotTimer !== null) return;
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      try {
        if (this.guard) this.o.onSnapshot(this.guard.exportState());
      } catch {}
    }, SNAPSHOT_EVERY_MS);
    this.snapshotTimer.unref();
  }
}
