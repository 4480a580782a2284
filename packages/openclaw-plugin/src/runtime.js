// One loop guard per gateway process: the policy worker, the bookkeeping the hooks need between
// calls, the state file and the policy-file watch. index.js keeps the one Runtime in a
// process-wide object, because OpenClaw registers the plugin several times from separate copies
// (its "full" and "discovery" modes) and the live hooks come from different registrations. The
// hooks themselves are in tool-hooks.js and bot-hooks.js, except the priming and session ones.
import fs from 'node:fs';
import path from 'node:path';
import { BoundedMap } from './bounded.js';
import { policyDocument } from './config.js';
import { GuardClient } from './guard-client.js';
import { InlineClient } from './inline-client.js';
import { OutcomeQueue } from './outcome-queue.js';
import { recordOutcome } from './tool-hooks.js';

export { warningNote } from './tool-hooks.js';

/** session_end reasons after which the session's history is gone for good. */
const END_REASONS = new Set(['new', 'reset', 'deleted', 'idle', 'daily']);
const START_TIMEOUT_MS = 5_000;
/**
 * At most one priming call (see `prime`) per this many ms, however many turns run at once: a
 * model call of one turn is tens of ms to seconds apart from the next, and many turns at once
 * cost at most 20 priming calls a second (~0.4 ms each).
 */
const PRIME_EVERY_MS = 50;

export class Runtime {
  /**
   * @param {object} o
   * @param {ReturnType<import('./config.js').resolveSettings>} o.settings
   * @param {object} o.raw the plugin config as given
   * @param {{ workerUrl: string, loopguardUrl: string }} o.urls
   * @param {{ info: Function, warn: Function, error: Function }} o.logger
   */
  constructor({ settings, raw, urls, logger, key }) {
    this.key = key;
    this.settings = settings;
    this.raw = raw;
    this.urls = urls;
    this.logger = logger;
    this.client = null;
    this.started = false;
    this.stopped = false;
    this.dirty = false;
    this.policyBytes = null;
    this.policyStat = null;
    this.swapping = null;
    this.timers = [];
    this.sessions = new BoundedMap(20_000); // session → {run, agent}
    this.pending = new BoundedMap(20_000); // toolCallId → the call passed to the policy
    this.notes = new BoundedMap(5_000); // toolCallId → warning note still to append
    this.appended = new BoundedMap(5_000); // toolCallId → note appended (stripped again before recording)
    this.ourBlocks = new BoundedMap(20_000); // toolCallIds this plugin blocked
    this.abortedRuns = new BoundedMap(5_000); // runId → the post-compaction abort message
    this.peers = new BoundedMap(50_000); // channel\u0001account\u0001conversation → Map(peer → lastMs)
    this.outcomes = new OutcomeQueue((item, at) => recordOutcome(this, item, at));
    this.counters = { decisions: 0, failures: 0, primes: 0 };
    this.lastPrimeAt = -Infinity;
  }

  // ---- lifecycle ----

  /** Starts the policy worker (once); `seed` is a snapshot to start from instead of the state file. */
  ensure(seed) {
    if (this.started || this.stopped) return;
    this.started = true;
    this.rssAtStart = rssMiB();
    const s = this.settings;
    let snapshot = seed ?? null;
    if (!snapshot) snapshot = this.#readStateFile();
    if (s.policy) {
      try {
        this.policyBytes = new Uint8Array(fs.readFileSync(s.policy));
        this.policyStat = fs.statSync(s.policy);
      } catch (e) {
        this.log('error', `cannot read the policy file ${s.policy}: ${e.message}`);
      }
    }
    this.#newClient(s.compat);
    this.client.start(snapshot);
    const every = (ms, fn) => {
      const t = setInterval(() => this.#safe(fn), ms);
      t.unref();
      this.timers.push(t);
    };
    every(s.stateIntervalMs, () => this.save());
    if (s.policy) every(s.policyWatchMs, () => this.#checkPolicyFile());
    this.log('info', `started (compat ${s.compat}, policy ${s.policy ?? 'the loopguard package default'}, isolation ${s.isolation}, state ${s.stateFile}, failMode ${s.failMode})`);
  }

  #newClient(compat) {
    const s = this.settings;
    this.compat = compat;
    const Client = s.isolation === 'worker' ? GuardClient : InlineClient;
    this.client = new Client({
      workerUrl: this.urls.workerUrl,
      loopguardUrl: this.urls.loopguardUrl,
      // the bytes read at start (a restart reloads what ran, even if the file changed since);
      // the path when they could not be read, so that the worker reports why
      policy: this.policyBytes ?? s.policy,
      expectDigest: s.expectDigest,
      config: JSON.stringify(policyDocument(this.raw, compat)),
      callTimeoutMs: s.callTimeoutMs,
      startTimeoutMs: START_TIMEOUT_MS,
      log: (level, msg, data) => this.log(level, msg, data),
      onReady: (info) =>
        this.event({ event: 'ready', policy: info.policy, imported: info.imported, compat, isolation: s.isolation, importError: info.importError?.message, warmMs: info.warmMs, rssMiB: rssMiB(), rssAtStartMiB: this.rssAtStart }),
      onStartFailed: (error) => {
        this.event({ event: 'load-failed', error: error.message, path: error.path });
        // The default profile follows the gateway's version; a policy that does not know that
        // profile yet still guards, with the documented behaviour.
        if (s.compatAuto && compat !== 'documented' && error.path === 'loopguard.compat') {
          this.log('warn', `the policy has no profile ${compat}; using "documented"`);
          const snapshot = this.client.lastSnapshot;
          this.client.stop();
          this.#newClient('documented');
          this.client.start(snapshot);
        }
      },
    });
  }

  /** Stops timers and the worker; returns the last snapshot (for a runtime that takes over). */
  stop({ save = true } = {}) {
    if (this.stopped) return null;
    let snapshot = null;
    if (this.started && this.client) {
      this.outcomes.flush('stop');
      snapshot = this.client.snapshot() ?? this.client.lastSnapshot;
      // only a runtime that decided something writes (a process that merely loaded the plugin
      // must not overwrite the gateway's file)
      if (save && this.dirty && snapshot) this.save(snapshot);
    }
    this.stopped = true;
    this.outcomes.stop();
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.client?.stop();
    return snapshot;
  }

  /** Carries the bookkeeping of the runtime this one replaces (a config change). */
  adopt(old) {
    for (const k of ['sessions', 'pending', 'notes', 'appended', 'ourBlocks', 'abortedRuns', 'peers']) {
      for (const [a, b] of old[k]) this[k].set(a, b);
    }
  }

  // ---- persistence ----

  #readStateFile() {
    try {
      const bytes = new Uint8Array(fs.readFileSync(this.settings.stateFile));
      this.event({ event: 'state-read', bytes: bytes.length, file: this.settings.stateFile });
      return bytes;
    } catch (e) {
      if (e.code !== 'ENOENT') this.log('warn', `cannot read the state file ${this.settings.stateFile}: ${e.message}`);
      return null;
    }
  }

  /** Writes the state file if counts changed since the last write (or `snapshot` is given). */
  save(snapshot) {
    if (!this.started || (!this.dirty && !snapshot)) return false;
    if (!snapshot) this.outcomes.flush('save');
    const bytes = snapshot ?? this.client?.snapshot();
    if (!bytes) return false;
    const file = this.settings.stateFile;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, file);
    this.dirty = false;
    this.event({ event: 'state-written', bytes: bytes.length });
    return true;
  }

  // ---- hot swap ----

  #checkPolicyFile() {
    if (this.swapping || !this.client?.ready) return;
    const file = this.settings.policy;
    let st;
    try {
      st = fs.statSync(file);
    } catch {
      return; // being replaced; the next check sees the new file
    }
    const prev = this.policyStat;
    if (prev && st.mtimeMs === prev.mtimeMs && st.size === prev.size && st.ino === prev.ino) return;
    this.policyStat = st;
    let bytes;
    try {
      bytes = new Uint8Array(fs.readFileSync(file));
    } catch (e) {
      this.log('warn', `cannot read the changed policy file ${file}: ${e.message}`);
      return;
    }
    this.outcomes.flush('swap');
    const t0 = performance.now();
    this.swapping = this.client.swap(bytes, this.settings.expectDigest).then((m) => {
      this.swapping = null;
      const ms = performance.now() - t0;
      if (m.ok) {
        this.policyBytes = bytes;
        this.dirty = true;
        const { from, to, snapshotBytes, switchMs } = m.value;
        this.log('info', `policy hot-swapped: ${from.version} (${from.blake3.slice(0, 12)}) → ${to.version} (${to.blake3.slice(0, 12)}), ${snapshotBytes} bytes of state carried over`);
        this.event({ event: 'swapped', from, to, snapshotBytes, switchMs, ms });
      } else {
        this.log('error', `policy file ${file} refused, the active policy stays: ${m.error.message}`);
        this.event({ event: 'swap-refused', error: m.error.message, ms });
      }
    });
  }

  // ---- logging ----

  log(level, msg, data) {
    try {
      this.logger?.[level]?.(`loopguard: ${msg}`);
    } catch {}
    if (level !== 'info') this.event({ event: 'log', level, msg, ...(data ? { data } : {}) });
  }

  event(rec) {
    const file = this.settings.decisionLog;
    if (!file) return;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.appendFileSync(file, `${JSON.stringify({ ts: Date.now(), pid: process.pid, compat: this.compat, ...rec })}\n`);
    } catch {}
  }

  #safe(fn) {
    try {
      return fn();
    } catch (e) {
      this.log('error', `internal error: ${e?.stack ?? e}`);
    }
  }

  /** A policy call (`{ok, value}` or `{ok: false, reason, error}`); a failure is logged, the caller applies failMode. */
  call(op, ...args) {
    this.ensure();
    // the policy sees every call in the order the hooks came (see outcome-queue.js)
    if (op !== 'outcome') this.outcomes.flush(op);
    const client = this.client;
    let r = client.call(op, ...args);
    // a failed start may have replaced the client (the compat fallback): one more try on it
    if (!r.ok && r.reason === 'unavailable' && this.client !== client) r = this.client.call(op, ...args);
    if (r.ok) return r;
    this.counters.failures += 1;
    this.event({ event: 'policy-failed', op, reason: r.reason, error: r.error?.message, failMode: this.settings.failMode });
    if (r.reason === 'error') this.log('warn', `the policy refused ${op}: ${r.error?.message}`);
    return r;
  }

  // ---- hooks (the tool-call ones are in tool-hooks.js) ----

  /**
   * model_call_started: the gateway now waits for the model, so the queued outcomes are recorded
   * here, then the policy is primed.
   */
  modelCallStarted() {
    this.outcomes.flush('model_call_started');
    this.prime();
  }

  /**
   * model_call_started → one made-up decision on a scratch gateway of the policy (this guard's
   * state untouched), while the gateway waits for the model. Why: in the gateway the first
   * decision after it had set up a turn took ~3 ms inside the policy's WebAssembly code, and the
   * next ones ~0.2 ms, with no garbage collection and no compile finishing on the thread
   * meanwhile (V8's --trace-gc and --trace-opt); one made-up call just before took those
   * milliseconds instead. Here they are spent while the gateway waits for the model, not inside
   * the tool call: in-gateway p99 per tool call 4.3–6.6 ms → 0.59–0.98 ms (tests/e2e/bench-plugin.mjs).
   */
  prime() {
    if (!this.settings.enabled || !this.client?.ready) return;
    const now = performance.now();
    if (now - this.lastPrimeAt < PRIME_EVERY_MS) return;
    this.lastPrimeAt = now;
    if (!this.client.call('warm', 1).ok) return;
    this.counters.primes += 1;
    this.event({ event: 'prime', ms: performance.now() - now });
  }

  /** session_end / before_reset: the session's history is freed. */
  endSession(sessionKey, reason) {
    if (!sessionKey || !this.started) return;
    const r = this.call('endSession', sessionKey);
    this.sessions.delete(sessionKey);
    if (r.ok) this.dirty = true;
    this.event({ event: 'session-freed', session: sessionKey, reason });
  }

  sessionEnd(event, ctx) {
    if (!END_REASONS.has(event?.reason)) return; // shutdown/restart/compaction keep the counts
    this.endSession(event?.sessionKey ?? ctx?.sessionKey, event?.reason);
  }
}

const rssMiB = () => Math.round(process.memoryUsage.rss() / 104857.6) / 10;
