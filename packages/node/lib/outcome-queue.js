// Tool outcomes recorded off the tool call's path (Supervisor#afterToolOutcomeLater).
//
// Why (the floor it serves: the OpenClaw plugin's p99 <= 0.5 ms per tool call in the real
// gateway, docs/PERFORMANCE.md): in the gateway, recording an outcome (`afterToolOutcome`: the result's JSON
// read, hashed and kept) cost more than the decision itself — p50 0.18 / p99 0.40 ms of a tool
// call's 0.33 / 0.63 ms (tests/e2e/bench-plugin.mjs, 2026-12-03) — and OpenClaw runs
// `after_tool_call` synchronously right after the tool. Nothing needs the outcome until the
// policy's next call, so it is only queued (the result serialized at once, so that later changes
// to the gateway's object cannot change what is recorded), and the queue is recorded, in order,
// before any other policy call, at `flushOutcomes` (the plugin calls it when a model call starts:
// the gateway then waits for the model), or after `MAX_DELAY_MS` at the latest. The policy sees
// the same calls in the same order as without the queue, so every decision is the same.

/** At most this many outcomes wait; the next one records them at once (memory stays bounded). */
const CAP = 1_000;
/** An outcome waits at most this long when no model call and no other policy call comes. */
const MAX_DELAY_MS = 250;

export class OutcomeQueue {
  /** @param {(item: object, at: string) => void} record records one item; `at` says when (for the log) */
  constructor(record) {
    this.record = record;
    this.items = [];
    this.timer = null;
  }

  get size() {
    return this.items.length;
  }

  push(item) {
    if (this.items.length >= CAP) this.flush('cap');
    this.items.push(item);
    if (this.timer === null) {
      this.timer = setTimeout(() => this.flush('timer'), MAX_DELAY_MS);
      this.timer.unref?.();
    }
  }

  /** Records every waiting outcome in arrival order; returns how many. */
  flush(at) {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.items.length === 0) return 0;
    const items = this.items;
    this.items = [];
    for (const item of items) this.record(item, at);
    return items.length;
  }

  /** Forgets the timer (the items stay: `flush` still records them). */
  stop() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * A result as the policy takes it, fixed now: `{resultJson}` (its JSON text, as the loopguard
 * package would serialize it); a result JSON cannot carry (a cycle, a BigInt) stays `{result}`,
 * and the package reports it when it is recorded.
 */
export function resultNow(result) {
  try {
    return { resultJson: JSON.stringify(result) ?? 'null' };
  } catch {
    return { result };
  }
}
