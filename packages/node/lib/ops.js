// What a supervised guard answers, the same in both homes of the policy (lib/home-inline.js on
// the caller's thread, lib/worker.js in a worker thread): the calls by LoopGuard method name, how
// a guard is started (the pin of the package's own policy checked, the saved state imported),
// and how a failure is told apart from a trap.
import { fileURLToPath } from 'node:url';
import { LoopGuardError, message } from './errors.js';
import { LoopGuard } from './guard.js';

/** The LoopGuard methods a Supervisor forwards; each returns plain (cloneable) data. */
const OPS = {
  beforeToolCall: (g, [call]) => g.beforeToolCall(call),
  afterToolOutcome: (g, [call, outcome]) => g.afterToolOutcome(call, outcome),
  afterCompactionRetry: (g, [session, run, agent]) => g.afterCompactionRetry(session, run, agent),
  endSession: (g, [session]) => (g.endSession(session), null),
  onBotMessage: (g, [msg]) => g.onBotMessage(msg),
  startGroupThread: (g, [thread, peer, text]) => g.startGroupThread(thread, peer, text),
  finishGroupRound: (g, [thread, replies]) => g.finishGroupRound(thread, replies),
  cancelGroupThread: (g, [thread]) => g.cancelGroupThread(thread),
  applyEvents: (g, [jsonl, firstLine]) => g.applyEvents(jsonl, firstLine),
  exportState: (g) => g.exportState(),
  importState: (g, [bytes]) => (g.importState(bytes), null),
  stats: (g) => g.stats(),
  policy: (g) => g.policy,
  warmUp: (g, [options]) => (g.warmUp(options), null),
};

/** Calls that change the state: after one, the restart point and the state file are due. */
export const STATEFUL = new Set(['beforeToolCall', 'afterToolOutcome', 'afterCompactionRetry', 'endSession', 'onBotMessage', 'startGroupThread', 'finishGroupRound', 'cancelGroupThread', 'applyEvents', 'importState']);

export const isOp = (op) => Object.hasOwn(OPS, op);

/**
 * Runs one call: `{ ok: true, value }`, or `{ ok: false, trap, error }` where `trap` says the
 * instance is unusable (a WebAssembly trap; jco then refuses every later call).
 */
export function runOp(guard, op, args) {
  if (!isOp(op)) return { ok: false, trap: false, error: plainError(new LoopGuardError('input', 'op', `unknown call ${String(op)}`)) };
  try {
    return { ok: true, value: OPS[op](guard, args) };
  } catch (e) {
    return { ok: false, trap: isTrap(e), error: plainError(e) };
  }
}

function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError || e?.cause instanceof WebAssembly.RuntimeError || /trapped|cannot enter component instance/.test(message(e));
}

/** An error as it crosses a thread: kind, path and reason (a long message clipped). */
export function plainError(e) {
  const reason = String(e?.reason ?? message(e));
  return { kind: e?.kind ?? 'policy', path: e?.path ?? 'policy', reason: reason.length > 600 ? `${reason.slice(0, 600)}…` : reason };
}

/** A plain error back as a LoopGuardError. */
export const toError = (p) => (p instanceof LoopGuardError ? p : new LoopGuardError(p.kind, p.path, p.reason));

/** The package's own policy file (a fresh instance of it reuses the shipped bindings). */
export const DEFAULT_POLICY = fileURLToPath(new URL('../generated/loopguard_policy.wasm', import.meta.url));

/**
 * A guard of the package's own policy, synchronously (its bindings ship compiled), in the
 * shared default instance; refused unless it has the pinned digest.
 */
export function defaultGuard(config, expectDigest) {
  // the Supervisor counts the decisions (as its caller waited for them): this guard does not
  const guard = new LoopGuard(config, { meterProvider: null });
  if (expectDigest && guard.policy.blake3 !== expectDigest) {
    guard[Symbol.dispose]();
    throw new LoopGuardError('policy', 'expectDigest', `the package's own policy has blake3 digest ${guard.policy.blake3}, not the pinned ${expectDigest}`);
  }
  return guard;
}

/** A guard in a component instance of its own: of `policy` (a path or bytes), or of the package's own file. */
export function loadGuard(policy, config, expectDigest) {
  return LoopGuard.load(policy ?? DEFAULT_POLICY, config, expectDigest ? { expectDigest, meterProvider: null } : { meterProvider: null });
}

/**
 * Warms the policy's compiled code (without it the first calls pay for V8's compiler, ~10 ms for
 * the first: LoopGuard#warmUp), then imports `snapshot` if there is one; a snapshot the policy
 * refuses is not fatal (the guard starts empty). Returns what readiness reports.
 */
export function adoptState(guard, snapshot) {
  const t0 = performance.now();
  guard.warmUp();
  const warmMs = performance.now() - t0;
  let importError = null;
  if (snapshot) {
    try {
      guard.importState(snapshot);
    } catch (e) {
      importError = plainError(e);
    }
  }
  return { policy: guard.policy, imported: snapshot ? importError === null : false, importError, warmMs };
}
