// openclaw-loopguard: OpenClaw's loop decisions (tool-call loop detectors, post-compaction guard,
// bot-to-bot budgets) made by loopguard's sandboxed WebAssembly policy, inside the gateway.
//
// What OpenClaw's loader does that shapes this file (observed in openclaw 2026.9.6;
// tests/e2e/plugin-install.test.mjs runs it):
// register() runs several times per process ("full" and "discovery" modes), each time from a
// separate copy of the package, and the live hooks of one gateway come from different
// registrations. So every hook is registered in every mode, and all of them reach the one
// Runtime kept in a process-wide object; a registration with a changed config replaces that
// Runtime (the counts move over). register() stays synchronous and nothing in the import graph
// uses top-level await (OpenClaw loads entries with require()). Nothing starts at registration:
// the policy starts with the gateway (gateway_start) or at the first hook that needs it, so CLI
// processes that only load the plugin spawn nothing and write no state. The policy's supervision
// (isolation, deadlines, restarts, hot swap, the state file) is the `loopguard` package's
// Supervisor; this plugin maps OpenClaw's hooks and its config onto it. With a `store` block the
// replicas of a gateway share their counts in Valkey/Redis instead (store.js): the same hooks,
// answering with Promises.
//
// | OpenClaw hook              | loopguard call                                 | answer to the gateway        |
// |----------------------------|------------------------------------------------|------------------------------|
// | before_tool_call           | beforeToolCall                                 | block + reason, or nothing   |
// | tool-result middleware     | – (the warning note of the last check)         | the result with the note     |
// | after_tool_call            | afterToolOutcomeLater                          | –                            |
// | after_compaction           | afterCompactionRetry                           | –                            |
// | before_dispatch            | onBotMessage (a known bot's message)           | handled: true to drop it     |
// | message_sent               | onBotMessage (ours, to each peer bot)          | –                            |
// | session_end, before_reset  | endSession                                     | –                            |
// | model_call_started         | flushOutcomes, warmUp (priming)                | –                            |
// | gateway_start/gateway_stop | start / save                                   | –                            |
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BoundedMap } from './bounded.js';
import { configKey, policyDocument, resolveSettings } from './config.js';
import { beforeDispatch, messageSent } from './bot-hooks.js';
import { callStored, startStored, stopStored } from './store.js';
import { afterCompaction, afterToolCall, beforeToolCall, toolResult } from './tool-hooks.js';

export const PLUGIN_ID = 'loopguard';
const STATE = Symbol.for('openclaw.loopguard.state');

/** The process-wide object: `current` is the one Runtime of this process. */
export function sharedState() {
  globalThis[STATE] ??= { current: null, registrations: 0, exitHooked: false };
  return globalThis[STATE];
}

/**
 * Where the `loopguard` package is: the plugin's own install (api.rootDir) first. OpenClaw's
 * per-registration copies carry only what was imported, and `loopguard` reads its policy files
 * and starts its worker from its own directory, so it is loaded from there.
 */
export function locate(rootDir) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const roots = [...(rootDir ? [rootDir] : []), path.dirname(here)];
  for (const root of roots) {
    try {
      return { loopguardUrl: pathToFileURL(createRequire(path.join(root, 'package.json')).resolve('loopguard')).href };
    } catch {}
  }
  throw new Error(`the loopguard package is not installed next to ${roots.join(' or ')}`);
}

/** session_end reasons after which the session's history is gone for good. */
const END_REASONS = new Set(['new', 'reset', 'deleted', 'idle', 'daily']);
/**
 * At most one priming call (see `prime`) per this many ms, however many turns run at once: a
 * model call of one turn is tens of ms to seconds apart from the next, and many turns at once
 * cost at most 20 priming calls a second (~0.4 ms each).
 */
const PRIME_EVERY_MS = 50;
const rssMiB = () => Math.round(process.memoryUsage.rss() / 104857.6) / 10;

/**
 * The loop guard of one gateway process: the `loopguard` Supervisor (the policy, its isolation,
 * deadlines, restarts, hot swap and state file) and the bookkeeping the hooks need between calls.
 */
export class Runtime {
  constructor({ settings, raw, loopguardUrl, logger, key }) {
    Object.assign(this, { settings, raw, loopguardUrl, logger, key });
    this.client = null;
    this.stored = null; // the StoredLoopGuard, with a `store` block (store.js)
    this.started = false;
    this.stopped = false;
    this.sessions = new BoundedMap(20_000); // session → {run, agent}
    this.pending = new BoundedMap(20_000); // toolCallId → the call passed to the policy
    this.notes = new BoundedMap(5_000); // toolCallId → warning note still to append
    this.appended = new BoundedMap(5_000); // toolCallId → note appended (stripped again before recording)
    this.ourBlocks = new BoundedMap(20_000); // toolCallIds this plugin blocked
    this.abortedRuns = new BoundedMap(5_000); // runId → the post-compaction abort message
    this.peers = new BoundedMap(50_000); // channel\u0001account\u0001conversation → Map(peer → lastMs)
    this.counters = { decisions: 0, failures: 0, primes: 0 };
    this.lastPrimeAt = -Infinity;
  }

  /** Starts the policy (once); `seed` is a snapshot to start from instead of the state file. */
  ensure(seed) {
    if (this.started || this.stopped) return;
    this.started = true;
    this.rssAtStart = rssMiB();
    if (this.settings.store) return startStored(this);
    this.#newClient(this.settings.compat, seed ?? null);
    const s = this.settings;
    this.log('info', `started (compat ${s.compat}, policy ${s.policy ?? 'the loopguard package default'}, isolation ${s.isolation}, state ${s.stateFile}, failMode ${s.failMode})`);
  }

  #newClient(compat, snapshot) {
    const s = this.settings;
    // require(esm): loopguard has no top-level await, so this is synchronous (Node ≥ 22.12)
    const { Supervisor } = createRequire(import.meta.url)(fileURLToPath(this.loopguardUrl));
    this.compat = compat;
    const client = new Supervisor({
      config: policyDocument(this.raw, compat),
      policy: s.policy,
      expectDigest: s.expectDigest,
      isolation: s.isolation,
      callTimeoutMs: s.callTimeoutMs,
      snapshot,
      stateFile: s.stateFile,
      saveEveryMs: s.stateIntervalMs,
      watchPolicyMs: s.policy ? s.policyWatchMs : 0,
      onEvent: (e) => this.#onEvent(client, e),
      // OpenTelemetry metrics when the gateway registered a meter provider (docs/METRICS.md)
      metricsHost: 'openclaw',
    });
    this.client = client;
    client.start();
  }

  #onEvent(client, { level, event, message, ...data }) {
    if (level !== 'info' || event === 'swapped') this.log(level, message);
    if (event === 'ready') Object.assign(data, { rssMiB: rssMiB(), rssAtStartMiB: this.rssAtStart });
    this.event({ event, ...data });
    // The default profile follows the gateway's version; a policy that does not know that
    // profile yet still guards, with the documented behaviour.
    if (event === 'load-failed' && client === this.client && this.settings.compatAuto && this.compat !== 'documented' && data.path === 'loopguard.compat') {
      this.log('warn', `the policy has no profile ${this.compat}; using "documented"`);
      const snapshot = client.stop({ save: false });
      this.#newClient('documented', snapshot);
    }
  }

  /** Stops the policy; returns the last snapshot (for a runtime that takes over). */
  stop({ save = true } = {}) {
    if (this.stopped) return null;
    this.stopped = true;
    stopStored(this);
    // only a runtime that decided something writes (a process that merely loaded the plugin
    // must not overwrite the gateway's file): the Supervisor writes a changed state only
    return this.client?.stop({ save }) ?? null;
  }

  /** Carries the bookkeeping of the runtime this one replaces (a config change). */
  adopt(old) {
    for (const k of ['sessions', 'pending', 'notes', 'appended', 'ourBlocks', 'abortedRuns', 'peers']) {
      for (const [a, b] of old[k]) this[k].set(a, b);
    }
  }

  /** Writes the state file if counts changed since the last write. */
  save() {
    return this.client?.save() ?? false;
  }

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

  /**
   * A policy call (`{ok, value}` or `{ok: false, reason, error}`; a Promise of it with a `store`);
   * a failure is logged, the caller applies failMode.
   */
  call(op, ...args) {
    this.ensure();
    if (this.settings.store) return callStored(this, op, args);
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

  /**
   * model_call_started: the gateway now waits for the model, so the queued outcomes are recorded
   * here, then the policy is primed.
   */
  modelCallStarted() {
    this.client?.flushOutcomes('model_call_started');
    this.prime();
  }

  /**
   * model_call_started → one made-up decision on a scratch gateway of the policy (this guard's
   * state untouched), while the gateway waits for the model. Why: in the gateway the first
   * decision after it had set up a turn took ~3 ms inside the policy's WebAssembly code, and the
   * next ones ~0.2 ms, with no garbage collection and no compile finishing on the thread
   * meanwhile (V8's --trace-gc and --trace-opt); one made-up call just before took those
   * milliseconds instead. Here they are spent while the gateway waits for the model, not inside
   * the tool call: in-gateway p99 per tool call 4.3–6.6 ms → 0.59–0.98 ms (tests/e2e/bench-plugin.mjs;
   * the floor it serves: p99 ≤ 0.5 ms per tool call, docs/PERFORMANCE.md).
   */
  prime() {
    if (!this.settings.enabled || !this.client?.ready) return;
    const now = performance.now();
    if (now - this.lastPrimeAt < PRIME_EVERY_MS) return;
    this.lastPrimeAt = now;
    if (!this.client.call('warmUp', { rounds: 1 }).ok) return;
    this.counters.primes += 1;
    this.event({ event: 'prime', ms: performance.now() - now });
  }

  /** session_end / before_reset: the session's history is freed. */
  endSession(sessionKey, reason) {
    if (!sessionKey || !this.started) return;
    this.call('endSession', sessionKey);
    this.sessions.delete(sessionKey);
    this.event({ event: 'session-freed', session: sessionKey, reason });
  }

  sessionEnd(event, ctx) {
    if (!END_REASONS.has(event?.reason)) return; // shutdown/restart/compaction keep the counts
    this.endSession(event?.sessionKey ?? ctx?.sessionKey, event?.reason);
  }
}

/** Where this copy of the plugin runs from, and whether `loopguard` resolves from there (diagnostics). */
function whereFrom() {
  const module = import.meta.url;
  try {
    return { module, loopguardFromCopy: createRequire(module).resolve('loopguard') };
  } catch (e) {
    return { module, loopguardFromCopy: null, loopguardFromCopyError: String(e?.message ?? e).split('\n')[0] };
  }
}

/** The Runtime for this registration's config: the current one, or a new one that takes over. */
export function runtimeFor(api) {
  const shared = sharedState();
  const raw = api.pluginConfig ?? {};
  let stateDir;
  try {
    stateDir = api.runtime?.state?.resolveStateDir?.();
  } catch {}
  stateDir ??= process.env.OPENCLAW_STATE_DIR ?? path.join(process.env.HOME ?? '.', '.openclaw');
  const openclawVersion = api.runtime?.version;
  const key = configKey(raw, { stateDir, openclawVersion });
  const old = shared.current;
  if (old && old.key === key && !old.stopped) {
    // the newest registration's logger: OpenClaw retires older plugin instances, and calls into
    // a retired instance's api are its calls still
    if (api.logger) old.logger = api.logger;
    return old;
  }
  const settings = resolveSettings(raw, { stateDir, openclawVersion });
  const rt = new Runtime({ settings, raw, loopguardUrl: locate(api.rootDir).loopguardUrl, logger: api.logger, key });
  if (old) {
    rt.adopt(old);
    const wasStarted = old.started;
    const snapshot = old.stop();
    if (wasStarted) rt.ensure(snapshot ?? undefined);
    rt.log('info', 'config changed: the loop guard was rebuilt with the counts carried over');
  }
  shared.current = rt;
  if (!shared.exitHooked) {
    shared.exitHooked = true;
    // a last write if the process exits without gateway_stop (only a runtime that decided something writes)
    process.once('exit', () => {
      try {
        sharedState().current?.save();
      } catch {}
    });
  }
  return rt;
}

/** Runs a hook on the current Runtime; nothing a hook does may take the gateway down. */
function guarded(name, fn, fallback) {
  return (event, ctx) => {
    const rt = sharedState().current;
    if (!rt) return fallback?.(null, new Error('not registered'));
    const failed = (e) => {
      try {
        rt.log('error', `${name} failed: ${e?.stack ?? e}`);
      } catch {}
      return fallback?.(rt, e);
    };
    try {
      const out = fn(rt, event, ctx);
      return out instanceof Promise ? out.catch(failed) : out;
    } catch (e) {
      return failed(e);
    }
  };
}

/** What a failing before_tool_call answers: failMode decides. */
function toolFallback(rt, e) {
  if (rt?.settings?.failMode === 'closed') {
    return { block: true, blockReason: `loopguard: the loop guard failed (${e?.message ?? e}); this call is blocked because failMode is "closed".` };
  }
  return undefined;
}

export function register(api) {
  const shared = sharedState();
  shared.registrations += 1;
  const rt = runtimeFor(api);
  rt.event({ event: 'registered', mode: api.registrationMode, source: api.source, rootDir: api.rootDir, openclaw: api.runtime?.version, ...whereFrom() });
  const on = (hook, handler) => api.on(hook, handler);
  on('gateway_start', guarded('gateway_start', (rt) => rt.ensure()));
  on('before_tool_call', guarded('before_tool_call', (rt, e, c) => beforeToolCall(rt, e, c), toolFallback));
  on('after_tool_call', guarded('after_tool_call', (rt, e, c) => afterToolCall(rt, e, c)));
  on('model_call_started', guarded('model_call_started', (rt) => rt.modelCallStarted()));
  on('after_compaction', guarded('after_compaction', (rt, e, c) => afterCompaction(rt, e, c)));
  on('before_dispatch', guarded('before_dispatch', (rt, e, c) => beforeDispatch(rt, e, c), (rt) => (rt?.settings?.failMode === 'closed' ? { handled: true } : undefined)));
  on('message_sent', guarded('message_sent', (rt, e, c) => messageSent(rt, e, c)));
  on('session_end', guarded('session_end', (rt, e, c) => rt.sessionEnd(e, c)));
  on('before_reset', guarded('before_reset', (rt, e, c) => rt.endSession(c?.sessionKey, 'reset')));
  on('gateway_stop', guarded('gateway_stop', (rt) => rt.save()));
  if (typeof api.registerAgentToolResultMiddleware === 'function') {
    api.registerAgentToolResultMiddleware(
      guarded('tool_result', (rt, e) => toolResult(rt, e)),
      { runtimes: ['openclaw'] },
    );
  }
}

export default {
  id: PLUGIN_ID,
  name: 'loopguard',
  description: "OpenClaw's loop decisions (tool-call loops, post-compaction loops, bot-to-bot loops) by loopguard's sandboxed WebAssembly policy.",
  register,
};
