// A loop guard that must not take its host down: the policy inline or in a worker thread, every
// call answered (a failure is a value the caller maps to its fail mode, never an exception), a
// deadline per call in the worker, restarts from the last snapshot after a trap or a missed
// deadline, hot swap (also of a watched policy file), and the state saved to a file and read back
// at start. Why here and not in each gateway adapter: every adapter needs the same, and two copies
// drift (the OpenClaw plugin had its own).
//
//   const sup = new Supervisor({ config, stateFile: '/var/lib/gw/loopguard.bin', saveEveryMs: 30_000 });
//   const r = sup.call('beforeToolCall', { session, tool, args });
//   if (!r.ok) return failOpen ? undefined : block(r.error.message);  // r.reason says why
//   if (r.value.action === 'block') return block(r.value.message);
import fs from 'node:fs';
import path from 'node:path';
import { LoopGuardError } from './errors.js';
import { InlineHome } from './home-inline.js';
import { guardMetrics } from './metrics.js';
import { WorkerHome } from './home-worker.js';
import { isOp, STATEFUL, toError } from './ops.js';
import { OutcomeQueue, resultNow } from './outcome-queue.js';

/** After a failed start, the next attempt waits this long (a broken policy is not reloaded per call). */
const RESTART_BACKOFF_MS = 30_000;
/** This many traps or timeouts within FAILURE_WINDOW_MS pause the policy for RESTART_BACKOFF_MS. */
const FAILURE_BURST = 3;
const FAILURE_WINDOW_MS = 60_000;
/** How long a trapped worker may take to still hand over its state. */
const EXPORT_AFTER_TRAP_MS = 250;
/** The calls counted on `loopguard.decisions`, and their `kind` (lib/metrics.js). */
const DECISION_KIND = new Map([['beforeToolCall', 'tool_call'], ['afterToolOutcome', 'tool_result'], ['onBotMessage', 'bot_message']]);

export class Supervisor {
  #o;
  #home = null;
  #gen = 0;
  #policy;
  #policyStat = null;
  #lastSnapshot;
  #startError = null;
  #failedAt = 0;
  #recentFailures = [];
  #pausedUntil = 0;
  #stopped = false;
  #started = false;
  #timers = [];
  #swapping = null;
  #outcomes;
  /** What readiness reported: `{ policy, imported, importError, warmMs }`; null while not ready. */
  info = null;
  /** True when a state-changing call succeeded since the state file was last written. */
  dirty = false;
  failures = { timeouts: 0, traps: 0, errors: 0, restarts: 0 };
  /** OpenTelemetry metrics (lib/metrics.js), undefined when not in use; #source: what they read */
  #metrics; #source;
  #swapped = 0;

  /** @param {import('../index.js').SupervisorOptions} [options] */
  constructor(options = {}) {
    const o = { ...options };
    if (o.isolation !== undefined && o.isolation !== 'inline' && o.isolation !== 'worker') {
      throw new LoopGuardError('input', 'options.isolation', `must be "inline" or "worker", not ${JSON.stringify(o.isolation)}`);
    }
    for (const k of ['callTimeoutMs', 'startTimeoutMs', 'saveEveryMs', 'watchPolicyMs']) {
      if (o[k] !== undefined && !(Number.isInteger(o[k]) && o[k] >= 0)) throw new LoopGuardError('input', `options.${k}`, `must be a whole number of ms, not ${String(o[k])}`);
    }
    this.#policy = o.policy ?? null;
    this.isolation = o.isolation ?? (this.#policy === null ? 'inline' : 'worker');
    this.#o = {
      config: typeof o.config === 'string' ? o.config : JSON.stringify(o.config ?? {}),
      expectDigest: o.expectDigest ? String(o.expectDigest).trim().toLowerCase() : null,
      callTimeoutMs: o.callTimeoutMs ?? 250,
      startTimeoutMs: o.startTimeoutMs ?? 5_000,
      stateFile: o.stateFile ? path.resolve(o.stateFile) : null,
      saveEveryMs: o.saveEveryMs ?? 0,
      watchPolicyMs: o.watchPolicyMs ?? 0,
      onEvent: o.onEvent ?? (() => {}),
    };
    this.#lastSnapshot = o.snapshot ?? null;
    // counted here, as the caller waited (worker hop included); the policy's own guard does not count
    this.#metrics = guardMetrics(o.meterProvider, o.metricsHost ?? 'node', 'options');
    const f = this.failures;
    this.#source = this.#metrics?.watch(() => (this.#stopped ? undefined : { swaps: this.#swapped, traps: f.traps, timeouts: f.timeouts, recoveries: f.restarts }));
    this.#outcomes = new OutcomeQueue((item, at) => {
      const t0 = performance.now();
      const r = this.#callNow('afterToolOutcome', [item.call, item.outcome]);
      item.done?.(r, at, performance.now() - t0);
    });
  }

  /** True when the policy is loaded and answers. */
  get ready() {
    return this.#home?.ready === true;
  }

  /** The restart point: the last snapshot taken (at most a second old while calls come). */
  get lastSnapshot() {
    return this.#lastSnapshot;
  }

  /** For a health endpoint: readiness, the policy, failure counts, and why it is not running. */
  health() {
    return { ready: this.ready, isolation: this.isolation, policy: this.info?.policy ?? null, failures: { ...this.failures }, paused: Date.now() < this.#pausedUntil, startError: this.#startError };
  }

  /**
   * Starts the policy (once; calls start it too). The state comes from `options.snapshot`, else
   * from `stateFile`. Timers (state saves, the policy watch) start here.
   */
  start() {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    if (!this.#lastSnapshot && this.#o.stateFile) this.#lastSnapshot = this.#readStateFile();
    if (typeof this.#policy === 'string') {
      try {
        // the bytes read now: a restart reloads what ran, even if the file changed since
        const file = this.#policy;
        this.#policyStat = fs.statSync(file);
        this.#policy = new Uint8Array(fs.readFileSync(file));
        if (this.#o.watchPolicyMs > 0) this.#every(this.#o.watchPolicyMs, () => this.#checkPolicyFile(file));
      } catch (e) {
        this.#emit('error', 'policy-unreadable', `cannot read the policy file ${this.#policy}: ${e.message}`);
      }
    }
    if (this.#o.saveEveryMs > 0 && this.#o.stateFile) this.#every(this.#o.saveEveryMs, () => this.save());
    this.#spawn(this.#lastSnapshot, false);
  }

  #spawn(snapshot, fresh) {
    const gen = ++this.#gen;
    const mine = () => gen === this.#gen;
    let failedNow = false;
    const Home = this.isolation === 'worker' ? WorkerHome : InlineHome;
    const home = new Home({
      policy: this.#policy,
      expectDigest: this.#o.expectDigest,
      config: this.#o.config,
      snapshot,
      fresh,
      callTimeoutMs: this.#o.callTimeoutMs,
      startTimeoutMs: this.#o.startTimeoutMs,
      onReady: (info) => mine() && this.#ready(info, snapshot),
      onFailed: (e) => {
        failedNow = true;
        if (mine()) this.#failed(e);
      },
      onSnapshot: (bytes) => {
        if (mine()) this.#lastSnapshot = bytes;
      },
      onGone: (why) => {
        if (!mine()) return;
        this.#home = null;
        this.info = null;
        this.#emit('warn', 'worker-gone', why);
      },
    });
    if (failedNow || !mine()) home.stop();
    else this.#home = home;
  }

  #ready(info, snapshot) {
    this.info = info;
    this.#startError = null;
    if (snapshot) this.#lastSnapshot = snapshot;
    if (info.importError) this.#emit('warn', 'import-failed', `the saved state was not imported: ${info.importError.reason}`, { error: info.importError });
    this.#emit('info', 'ready', `policy ${info.policy.version} ready (${this.isolation})`, { policy: info.policy, imported: info.imported, importError: info.importError?.reason, warmMs: info.warmMs, isolation: this.isolation });
  }

  #failed(e) {
    this.#home?.stop();
    this.#home = null;
    this.#gen += 1;
    this.#startError = toError(e);
    this.#failedAt = Date.now();
    this.#emit('error', 'load-failed', `the policy did not load: ${this.#startError.message}`, { error: this.#startError.message, path: this.#startError.path });
  }

  /**
   * One policy call, by LoopGuard method name (`beforeToolCall`, `afterToolOutcome`,
   * `onBotMessage`, `exportState`, `stats`, `policy`, `warmUp`, …). Never throws: returns
   * `{ ok: true, value }`, or `{ ok: false, reason, error }` with `reason` `error` (the policy
   * refused the input), `trap`, `timeout` (worker only) or `unavailable` (not loaded, paused,
   * stopped), and `error` a LoopGuardError. Queued outcomes are recorded first.
   */
  call(op, ...args) {
    this.#outcomes.flush(op);
    return this.#callNow(op, args);
  }

  #callNow(op, args) {
    const m = this.#metrics;
    if (m === undefined) return this.#answer(op, args);
    const kind = DECISION_KIND.get(op);
    if (kind === undefined) return this.#answer(op, args);
    const started = m.start(kind);
    const r = this.#answer(op, args);
    if (r.ok) m.decided(kind, r.value, started);
    return r;
  }

  #answer(op, args) {
    if (this.#stopped) return unavailable('the supervisor was stopped');
    if (!isOp(op)) return { ok: false, reason: 'error', error: new LoopGuardError('input', 'op', `unknown call ${String(op)}`) };
    if (!this.#started) this.start();
    if (this.#home === null) {
      if (this.#startError && Date.now() - this.#failedAt < RESTART_BACKOFF_MS) return { ok: false, reason: 'unavailable', error: this.#startError };
      if (Date.now() < this.#pausedUntil) return unavailable('the policy is paused after repeated traps or timeouts');
      this.#spawn(this.#lastSnapshot, true);
      if (this.#home === null) return { ok: false, reason: 'unavailable', error: this.#startError ?? toError({ kind: 'policy', path: 'policy', reason: 'the policy did not start' }) };
    }
    const home = this.#home;
    const r = home.call(op, args);
    if (r.ok) {
      if (STATEFUL.has(op)) this.dirty = true;
      return r;
    }
    const error = toError(r.error);
    if (r.reason === 'unavailable') return { ok: false, reason: 'unavailable', error: this.#startError ?? error };
    if (r.reason === 'error') {
      this.failures.errors += 1;
      return { ok: false, reason: 'error', error };
    }
    this.failures[r.reason === 'trap' ? 'traps' : 'timeouts'] += 1;
    this.#emit('error', r.reason, `the policy ${r.reason === 'trap' ? 'trapped in' : 'did not answer'} ${op} (${error.reason}); replaced from the last snapshot`, { op, error: error.message });
    this.#replace(home, r.reason === 'trap');
    return { ok: false, reason: r.reason, error };
  }

  /** Replaces a failed home: state from the failed instance if it still exports, else the last snapshot. */
  #replace(home, tryExport) {
    const exported = tryExport ? home.tryExport(Math.min(this.#o.callTimeoutMs, EXPORT_AFTER_TRAP_MS)) : null;
    if (exported) this.#lastSnapshot = exported;
    home.stop();
    this.#home = null;
    this.info = null;
    this.#gen += 1;
    // a policy that keeps failing is not restarted for every call (each restart of a policy file
    // transpiles it again, and the caller waits for that)
    const now = Date.now();
    this.#recentFailures = [...this.#recentFailures.filter((t) => now - t < FAILURE_WINDOW_MS), now];
    if (this.#recentFailures.length >= FAILURE_BURST) {
      this.#recentFailures = [];
      this.#pausedUntil = now + RESTART_BACKOFF_MS;
      this.#emit('error', 'paused', `the policy failed ${FAILURE_BURST} times within ${FAILURE_WINDOW_MS / 1000} s: paused for ${RESTART_BACKOFF_MS / 1000} s`);
      return;
    }
    this.failures.restarts += 1;
    this.#spawn(this.#lastSnapshot, true);
  }

  /**
   * Records a tool's outcome off the tool call's path (lib/outcome-queue.js says why): the result
   * is serialized now; the outcome is recorded before the next call, at `flushOutcomes`, or
   * within 250 ms, and `done(result, at, ms)` gets what `call('afterToolOutcome', …)` would return
   * (`at`: what recorded it; `ms`: how long the call took).
   */
  afterToolOutcomeLater(call, outcome, done) {
    const o = outcome?.error !== undefined || outcome?.result === undefined ? outcome : resultNow(outcome.result);
    this.#outcomes.push({ call, outcome: o, done });
  }

  /** How many outcomes wait to be recorded. */
  get pendingOutcomes() {
    return this.#outcomes.size;
  }

  /** Records the queued outcomes now (e.g. while the gateway waits for a model); returns how many. */
  flushOutcomes(at = 'flush') {
    return this.#outcomes.flush(at);
  }

  /** The state as a snapshot (kept as the restart point too), or null if the policy cannot give it. */
  snapshot() {
    const r = this.call('exportState');
    if (!r.ok) return null;
    this.#lastSnapshot = r.value;
    return r.value;
  }

  /**
   * Writes the state file (atomically: a temporary file renamed) if the state changed since the
   * last write, or `snapshot` is given. Returns whether it wrote.
   */
  save(snapshot) {
    const file = this.#o.stateFile;
    if (!file || !this.#started || (!this.dirty && !snapshot)) return false;
    if (!snapshot) this.#outcomes.flush('save');
    const bytes = snapshot ?? this.snapshot();
    if (!bytes) return false;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, file);
    this.dirty = false;
    this.#emit('info', 'state-written', `${bytes.length} bytes of state written to ${file}`, { bytes: bytes.length, file });
    return true;
  }

  #readStateFile() {
    const file = this.#o.stateFile;
    try {
      const bytes = new Uint8Array(fs.readFileSync(file));
      this.#emit('info', 'state-read', `${bytes.length} bytes of state read from ${file}`, { bytes: bytes.length, file });
      return bytes;
    } catch (e) {
      if (e.code !== 'ENOENT') this.#emit('warn', 'state-unreadable', `cannot read the state file ${file}: ${e.message}`);
      return null;
    }
  }

  /**
   * Hot swap (LoopGuard#swap, in the policy's home): the state moves over; on failure the active
   * policy stays. Resolves to `{ ok: true, value: SwapReport }` or `{ ok: false, error }`.
   * @param {string | Uint8Array} policy
   */
  async swap(policy, { expectDigest = this.#o.expectDigest } = {}) {
    this.#outcomes.flush('swap');
    const t0 = performance.now();
    const home = this.#home;
    const r = home ? await home.swap(policy, expectDigest) : { ok: false, error: { kind: 'policy', path: 'policy', reason: 'the policy is not running' } };
    const ms = performance.now() - t0;
    if (!r.ok) {
      const error = toError(r.error);
      this.#emit('error', 'swap-refused', `the new policy was refused, the active one stays: ${error.message}`, { error: error.message, ms });
      return { ok: false, error };
    }
    if (home === this.#home) {
      this.#policy = policy; // a restart loads what is now active
      if (this.info) this.info = { ...this.info, policy: r.value.to };
    }
    this.dirty = true;
    this.#swapped += 1;
    const { from, to, snapshotBytes, switchMs } = r.value;
    this.#emit('info', 'swapped', `policy hot-swapped: ${from.version} (${from.blake3.slice(0, 12)}) → ${to.version} (${to.blake3.slice(0, 12)}), ${snapshotBytes} bytes of state carried over`, { from, to, snapshotBytes, switchMs, ms });
    return r;
  }

  #checkPolicyFile(file) {
    if (this.#swapping || !this.ready) return;
    let st;
    try {
      st = fs.statSync(file);
    } catch {
      return; // being replaced; the next check sees the new file
    }
    const prev = this.#policyStat;
    if (prev && st.mtimeMs === prev.mtimeMs && st.size === prev.size && st.ino === prev.ino) return;
    this.#policyStat = st;
    let bytes;
    try {
      bytes = new Uint8Array(fs.readFileSync(file));
    } catch (e) {
      this.#emit('warn', 'policy-unreadable', `cannot read the changed policy file ${file}: ${e.message}`);
      return;
    }
    this.#swapping = this.swap(bytes).finally(() => {
      this.#swapping = null;
    });
  }

  /**
   * Stops timers and the policy; returns the last snapshot (for a supervisor that takes over).
   * With `save` (default) a changed state is written to the state file first.
   */
  stop({ save = true } = {}) {
    if (this.#stopped) return null;
    let snapshot = null;
    if (this.#started) {
      this.#outcomes.flush('stop');
      snapshot = (this.ready ? this.snapshot() : null) ?? this.#lastSnapshot;
      if (save && this.dirty && snapshot) this.save(snapshot);
    }
    this.#stopped = true;
    this.#outcomes.stop();
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    this.#home?.stop();
    this.#home = null;
    this.#gen += 1;
    return snapshot;
  }

  #every(ms, fn) {
    const t = setInterval(() => {
      try {
        fn();
      } catch (e) {
        this.#emit('error', 'internal-error', `internal error: ${e?.stack ?? e}`);
      }
    }, ms);
    t.unref();
    this.#timers.push(t);
  }

  #emit(level, event, message, data = {}) {
    try {
      this.#o.onEvent({ level, event, message, ...data });
    } catch {}
  }
}

const unavailable = (reason) => ({ ok: false, reason: 'unavailable', error: new LoopGuardError('policy', 'policy', reason) });
