// What both homes of the policy (inline-client.js on the gateway's thread, guard-worker.js in a
// worker) do with a new LoopGuard before it answers calls: check the pin of the package's own
// policy (LoopGuard.load checks a policy file's itself), import the saved state, and describe
// errors the same way for the gateway's log.

/** An error as the plugin logs and passes it: name, kind, path and a clipped message. */
export function errorOf(e) {
  const message = String(e?.message ?? e);
  return { name: e?.name ?? 'Error', kind: e?.kind ?? 'policy', path: e?.path ?? '', message: message.length > 600 ? `${message.slice(0, 600)}…` : message };
}

/** Throws a `policy` error at `expectDigest` unless the guard's policy has the pinned digest. */
export function checkPin(guard, expectDigest) {
  if (!expectDigest) return;
  const want = String(expectDigest).trim().toLowerCase();
  if (guard.policy.blake3 !== want) {
    throw Object.assign(new Error(`the default policy has blake3 digest ${guard.policy.blake3}, not the pinned ${want}`), { kind: 'policy', path: 'expectDigest' });
  }
}

/**
 * Warms the policy's compiled code (the first tool calls would otherwise pay for V8's compiler:
 * ~10 ms for the first, see LoopGuard.warmUp), then imports `snapshot` (if any) into the guard;
 * a snapshot the policy refuses is not fatal (the guard starts empty). Returns what readiness
 * reports: the policy, whether the state was imported, and why not.
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
      importError = errorOf(e);
    }
  }
  return { policy: guard.policy, imported: snapshot ? importError === null : false, importError, warmMs };
}
