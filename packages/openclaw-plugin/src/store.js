// The shared-store mode (config `store`): the gateway replicas behind a load balancer (Slack's
// HTTP mode, Telegram webhooks) keep one set of counts in Valkey/Redis, through the `loopguard`
// package's StoredLoopGuard (read the key's state, the policy decides, compare-and-set; the
// store's failures answered by `store.failMode`). The hooks are the same; a decision answers with
// a Promise instead of a value, which OpenClaw awaits for before_tool_call (a 15 s budget, closed
// on a throw) and before_dispatch (a claiming hook); every decision is answered within
// `store.deadlineMs` per store command. No state file, no worker, no hot swap in this mode: the state is the
// store's.
//
// | Runtime call       | in-process (index.js)         | shared store (here)                        |
// |--------------------|-------------------------------|--------------------------------------------|
// | start              | new Supervisor                | new StoredLoopGuard (connects lazily)      |
// | call(op, …)        | `{ok, value}` now             | Promise of `{ok, value}` (never rejects)   |
// | after_tool_call    | the Supervisor's outcome queue| afterToolOutcome, queued behind the session|
// | stop               | save the state file           | close the store's connection               |
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { policyDocument } from './config.js';

/** `fn(r)` now for a value, after it settles for a Promise: the hooks serve both modes. */
export function settle(r, fn) {
  return r instanceof Promise ? r.then(fn) : fn(r);
}

/** Creates the runtime's StoredLoopGuard; a config the policy refuses is logged, calls then fail. */
export function startStored(rt) {
  const { StoredLoopGuard } = createRequire(import.meta.url)(fileURLToPath(rt.loopguardUrl));
  const s = rt.settings.store;
  const make = (compat) =>
    new StoredLoopGuard(policyDocument(rt.raw, compat), {
      store: s.url,
      storePrefix: s.prefix,
      storeTtlS: s.ttlSeconds,
      storeDeadlineMs: s.deadlineMs,
      storeFailClosed: s.failClosed,
      storeCa: s.ca,
      storeCert: s.cert,
      storeKey: s.key,
      metricsHost: 'openclaw', // OpenTelemetry metrics, when the gateway set them up
      log: (m) => {
        rt.log('warn', m.replace(/^loopguard: /, ''));
        rt.event({ event: 'store', message: m });
      },
    });
  rt.compat = rt.settings.compat;
  for (;;) {
    try {
      rt.stored = make(rt.compat);
      break;
    } catch (e) {
      // as in-process: the default profile follows the gateway's version, and a policy that does
      // not know it yet guards with the documented behaviour
      if (rt.settings.compatAuto && rt.compat !== 'documented' && e?.path === 'loopguard.compat') {
        rt.log('warn', `the policy has no profile ${rt.compat}; using "documented"`);
        rt.compat = 'documented';
        continue;
      }
      rt.startError = e;
      rt.log('error', `the loop guard did not start: ${e?.message ?? e}`);
      return;
    }
  }
  // the first decisions would otherwise compile the policy's code (~20 ms) inside a tool call
  try {
    rt.stored.warmUp();
  } catch {}
  rt.log('info', `started with the shared store ${rt.stored.stats().backend} (compat ${rt.compat}, prefix ${s.prefix}, store failMode ${s.failClosed ? 'closed' : 'open'})`);
}

/**
 * One decision: a Promise of `{ok: true, value}` or `{ok: false, reason, error}`, never a
 * rejection. `reason` is `store` when the store failed and `store.failMode` is closed (the hooks
 * then block or drop), `error` for the policy refusing the input, `unavailable` when the guard did
 * not start.
 */
export function callStored(rt, op, args) {
  const g = rt.stored;
  if (!g) return Promise.resolve(failure(rt, op, 'unavailable', rt.startError ?? new Error('the loop guard did not start')));
  if (op === 'endSession') {
    g.endSession(...args);
    return Promise.resolve({ ok: true, value: undefined });
  }
  return g[op](...args).then(
    (value) => ({ ok: true, value }),
    (e) => failure(rt, op, e?.kind === 'store' ? 'store' : 'error', e),
  );
}

function failure(rt, op, reason, error) {
  rt.counters.failures += 1;
  rt.event({ event: 'policy-failed', op, reason, error: error?.message, failMode: reason === 'store' ? 'closed' : rt.settings.failMode });
  if (reason === 'error') rt.log('warn', `the policy refused ${op}: ${error?.message}`);
  return { ok: false, reason, error };
}

/**
 * after_tool_call in store mode: recorded now, queued behind the session's earlier decisions in
 * this process, and the session's next decision here behind it. The Promise is returned for a
 * caller that waits (OpenClaw 2026.9.6's built-in runtime does not wait for this hook).
 */
export function recordStored(rt, call, outcome, done) {
  const t0 = performance.now();
  return callStored(rt, 'afterToolOutcome', [call, outcome])
    .then((r) => done(r, 'after_tool_call', performance.now() - t0))
    .catch((e) => rt.log('error', `after_tool_call failed: ${e?.stack ?? e}`));
}

/** Closes the store's connection (the decisions under way finish first). */
export function stopStored(rt) {
  const g = rt.stored;
  rt.stored = null;
  g?.close().catch(() => {});
}
