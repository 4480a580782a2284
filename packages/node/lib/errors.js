// The one error type of the package: every failure a caller can act on is a LoopGuardError with
// a `kind`, the `path` of what was wrong and a `reason` that says what to change. Nothing here
// throws strings or returns null for a failure.

/**
 * Why a call failed.
 * - `config`, `input`, `snapshot`, `too-large`: the policy's own error kinds (bad config,
 *   malformed arguments, an unreadable snapshot, an oversized value);
 * - `policy`: the policy file or instance (missing, corrupt, wrong interface, wrong digest,
 *   trapped, disposed);
 * - `store`: a StoredLoopGuard decision refused because the store failed and
 *   `storeFailClosed` is set.
 */
export class LoopGuardError extends Error {
  /**
   * @param {'config' | 'input' | 'snapshot' | 'too-large' | 'policy' | 'store'} kind
   * @param {string} path
   * @param {string} reason
   * @param {ErrorOptions} [options]
   */
  constructor(kind, path, reason, options) {
    super(`${path}: ${reason}`, options);
    this.name = 'LoopGuardError';
    this.kind = kind;
    this.path = path;
    this.reason = reason;
  }
}

/** @param {unknown} e */
export function message(e) {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Runs a component call: a `policy-error` the component returned becomes a LoopGuardError of its
 * kind; a trap becomes a `policy` error (the instance is unusable afterwards, as jco marks it).
 * @template T
 * @param {() => T} fn
 * @param {string} what the call, for a trap's path
 * @returns {T}
 */
export function policyCall(fn, what) {
  try {
    return fn();
  } catch (e) {
    // jco throws a `result`'s error either wrapped (`ComponentError` with a `payload`) or as the
    // `policy-error` record itself, depending on the call's shape.
    const p = /** @type {any} */ (e)?.payload ?? e;
    if (p && typeof p === 'object' && typeof p.path === 'string' && typeof p.reason === 'string') {
      throw new LoopGuardError(p.kind ?? 'input', p.path, p.reason, { cause: e });
    }
    if (e instanceof WebAssembly.RuntimeError) {
      throw new LoopGuardError('policy', what, `the policy trapped (${e.message}); create a new LoopGuard`, { cause: e });
    }
    throw e;
  }
}
