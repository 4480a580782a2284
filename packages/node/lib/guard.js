// The LoopGuard class (index.js re-exports it): one gateway of the policy, in this thread.
import {
  botMessage,
  botVerdict,
  compactionVerdict,
  configText,
  groupReplies,
  groupStart,
  groupStep,
  groupThread,
  optionalString,
  outcomeVerdict,
  policyInfo,
  requireString,
  toolCall,
  toolOutcome,
  toolVerdict,
} from './convert.js';
import { LoopGuardError, policyCall } from './errors.js';
import { guardMetrics } from './metrics.js';
import { getDefaultPolicy, loadPolicy } from './policy.js';
import { describePolicy, disposeQuietly, requireSameMajor, swapError } from './swap.js';
import { WARM_ROUNDS, warmPolicy } from './warm.js';

export { LoopGuardError };

/** The policy, interface and package versions of the default policy. */
export function versions() {
  const p = getDefaultPolicy();
  return { policy: p.version, interface: p.interfaceVersion, blake3: p.blake3 };
}

/**
 * Replays a whole trace (JSON Lines) on a fresh gateway of the default policy; returns the
 * decisions as JSON Lines, byte for byte what `loopguard replay` prints.
 * @param {string | object} config JSON/JSON5 text or an object
 * @param {string} trace
 */
export function replay(config, trace) {
  const p = getDefaultPolicy();
  return policyCall(() => p.exports.replay(configText(config), requireString(trace, 'trace')), 'replay');
}

/** Set by `guardOf` for the one synchronous constructor call it makes. */
let policyForNextGuard = null;

/** A LoopGuard of `policy` (a loaded instance) instead of the default policy. */
function guardOf(policy, config, options) {
  policyForNextGuard = policy;
  try {
    return new LoopGuard(config, options ?? { meterProvider: null });
  } finally {
    policyForNextGuard = null;
  }
}

/** All loop-guard state of one gateway process. Release it with `[Symbol.dispose]()`. */
export class LoopGuard {
  /** @type {any} the jco `Gateway` resource; null once disposed */
  #gateway;
  /** @type {import('./policy.js').Policy} */
  #policy;
  /** @type {string} the config text, for the gateway a swap creates */
  #config;
  /** @type {Promise<unknown>} the last swap (swaps run one after the other) */
  #swaps = Promise.resolve();
  /** @type {import('./metrics.js').GuardMetrics | undefined} undefined: OpenTelemetry not in use */
  #metrics;
  /** policy versions swapped in, for `loopguard.policy.swaps` */
  #swapped = 0;

  /**
   * A gateway of the default policy.
   * @param {string | object} [config] OpenClaw-style config: JSON/JSON5 text, or an object
   *   (serialized with JSON.stringify). `{}` means all defaults.
   * @param {import('../index.js').MetricsOptions} [options] OpenTelemetry metrics
   *   (docs/METRICS.md): `meterProvider` (default: the global one, if the application
   *   registered one; null: none) and `metricsHost` (the `host` attribute, default "node")
   */
  constructor(config = '{}', options = {}) {
    const policy = policyForNextGuard ?? getDefaultPolicy();
    policyForNextGuard = null;
    const text = configText(config);
    const metrics = guardMetrics(options?.meterProvider, options?.metricsHost ?? 'node', 'options');
    this.#gateway = policyCall(() => policy.exports.guard.Gateway.create(text), 'create');
    this.#policy = policy;
    this.#config = text;
    this.#metrics = metrics;
    this.#source = metrics?.watch(() => (this.#gateway === null ? undefined : { swaps: this.#swapped }));
  }

  /** What the metrics read at collection; kept here so that it lives as long as this guard. */
  #source;

  /**
   * A gateway of the policy component in `wasm` (a path, a file URL or the bytes), in a
   * component instance of its own.
   * @param {string | URL | Uint8Array | ArrayBuffer} wasm
   * @param {string | object} [config]
   * @param {{ expectDigest?: string } & import('../index.js').MetricsOptions} [options] refuse the
   *   file unless its blake3 digest matches; the metrics options of the constructor
   * @returns {Promise<LoopGuard>}
   */
  static async load(wasm, config = '{}', options = {}) {
    const text = configText(config);
    const policy = await loadPolicy(wasm, options);
    warmPolicy(guardOf, policy, text);
    return guardOf(policy, text, { meterProvider: options?.meterProvider, metricsHost: options?.metricsHost });
  }

  /**
   * Makes V8 compile the policy's hot code now instead of during the first tool calls: runs a
   * few hundred made-up decisions on a scratch gateway of the same policy instance and config
   * (the config selects the code paths: the compatibility profile, the detectors that are on).
   * This guard's state is not touched. Without it, the first decision of a process takes
   * ~10 ms (V8 compiles each WebAssembly function when it is first called) and the next ones
   * run unoptimized code; measured in Node 24 with calls 40 ms apart, as a gateway makes them:
   * 10–13 ms then 0.5–0.7 ms per decision cold, 0.3 ms then 0.2 ms after this (which takes
   * 20–90 ms). `LoopGuard.load` and `swap` do it for the policy they load.
   *
   * `rounds` (default 200): made-up tool calls. One round (~0.3 ms) brings back code that went
   * cold while the process did other work (docs/PERFORMANCE.md, "Node and the plugin: the first
   * calls").
   * @param {{ rounds?: number }} [options]
   */
  warmUp(options = {}) {
    const rounds = options?.rounds ?? WARM_ROUNDS;
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10_000) {
      throw new LoopGuardError('input', 'options.rounds', `must be an integer from 1 to 10000, not ${String(rounds)}`);
    }
    this.#live();
    warmPolicy(guardOf, this.#policy, this.#config, rounds);
  }

  /**
   * Hot swap: loads the policy in `wasm`, creates its gateway with this guard's config, refuses
   * it if its interface major differs from the active one's, then moves the state over
   * (`exportState` from the old gateway, `importState` into the new one) and switches. The move
   * and the switch are one synchronous step, so no call lands in between. On any failure the
   * old policy stays active and the promise rejects with a LoopGuardError. Swaps are serialized.
   * @param {string | URL | Uint8Array | ArrayBuffer} wasm
   * @param {{ expectDigest?: string }} [options]
   */
  swap(wasm, options = {}) {
    const run = this.#swaps.then(() => this.#swap(wasm, options));
    this.#swaps = run.catch(() => {});
    return run;
  }

  async #swap(wasm, options) {
    this.#live();
    const started = performance.now();
    const old = this.#policy;
    const kept = `the active policy stays (${describePolicy(old)})`;
    let policy;
    let gateway;
    try {
      policy = await loadPolicy(wasm, options);
      requireSameMajor(policy, old);
      gateway = policyCall(() => policy.exports.guard.Gateway.create(this.#config), 'create');
      warmPolicy(guardOf, policy, this.#config);
    } catch (e) {
      disposeQuietly(gateway);
      throw swapError(e, kept);
    }
    if (this.#gateway === null) {
      disposeQuietly(gateway);
      throw new LoopGuardError('policy', 'gateway', 'this LoopGuard was disposed during the swap');
    }
    const prepared = performance.now();
    let snapshot;
    try {
      snapshot = this.#call((g) => g.exportState(), 'export-state');
      policyCall(() => gateway.importState(snapshot), 'import-state');
    } catch (e) {
      disposeQuietly(gateway);
      throw swapError(e, kept);
    }
    const previous = this.#gateway;
    this.#gateway = gateway;
    this.#policy = policy;
    const switched = performance.now();
    this.#swapped += 1;
    // Freeing the old state is not part of the switch: it runs after the calls that waited.
    setImmediate(() => disposeQuietly(previous));
    return {
      from: policyInfo(old),
      to: policyInfo(policy),
      snapshotBytes: snapshot.length,
      prepareMs: prepared - started,
      switchMs: switched - prepared,
    };
  }

  /** The active policy: its versions, the component's blake3 digest and where it came from. */
  get policy() {
    return policyInfo(this.#policy);
  }

  /**
   * Before a tool runs: allow, warn or block. The call is recorded unless blocked or disabled.
   * `call.args` is serialized at the check and kept for the last 32 calls: pass the same object to
   * `afterToolOutcome`, and its outcome is recorded for the arguments as they were checked.
   * @param {import('../index.js').ToolCallInput} call
   */
  beforeToolCall(call) {
    const m = this.#metrics;
    if (m === undefined) return toolVerdict(this.#call((g) => g.checkToolCall(toolCall(call)), 'check-tool-call'));
    const started = m.start('tool_call');
    return m.decided('tool_call', toolVerdict(this.#call((g) => g.checkToolCall(toolCall(call)), 'check-tool-call')), started);
  }

  /**
   * After a tool ran: records its outcome, and may say to abort the run (post-compaction guard).
   * @param {import('../index.js').ToolCallInput} call the same call that was passed to beforeToolCall
   * @param {{ result?: unknown, resultJson?: string, error?: unknown }} outcome
   */
  afterToolOutcome(call, outcome) {
    const m = this.#metrics;
    if (m === undefined) return this.#outcome(call, outcome);
    const started = m.start('tool_result');
    return m.decided('tool_result', this.#outcome(call, outcome), started);
  }

  #outcome(call, outcome) {
    const o = toolOutcome(outcome);
    if (o === undefined) {
      this.#live();
      return { action: 'ignored' };
    }
    return outcomeVerdict(this.#call((g) => g.recordToolOutcome(toolCall(call), o), 'record-tool-outcome'));
  }

  /**
   * A context compaction succeeded and the run is being retried: arms the post-compaction guard.
   * @param {string} session
   * @param {string} [run]
   * @param {string} [agent]
   */
  afterCompactionRetry(session, run, agent) {
    const s = requireString(session, 'session');
    const r = optionalString(run, 'run');
    const a = optionalString(agent, 'agent');
    return compactionVerdict(this.#call((g) => g.compactionRetried(s, r, a), 'compaction-retried'));
  }

  /** Forget a session (closed, or `/new` gave it a new id). @param {string} session */
  endSession(session) {
    const s = requireString(session, 'session');
    this.#call((g) => g.endSession(s), 'end-session');
  }

  /**
   * A bot-authored inbound message the channel already admitted: allow or suppress.
   * @param {import('../index.js').BotMessageInput} msg
   */
  onBotMessage(msg) {
    const metrics = this.#metrics;
    if (metrics === undefined) return this.#bot(msg);
    const started = metrics.start('bot_message');
    return metrics.decided('bot_message', this.#bot(msg), started);
  }

  #bot(msg) {
    const m = botMessage(msg);
    return botVerdict(this.#call((g) => g.checkBotMessage(m), 'check-bot-message'));
  }

  /**
   * An inbound message to a conversation with a broadcast entry: round 1, a legacy pass or none.
   * @param {import('../index.js').GroupThreadInput} thread
   * @param {string} peer the id in the `"<channel>:<peer>"` broadcast key
   * @param {string} text the message text
   */
  startGroupThread(thread, peer, text) {
    const t = groupThread(thread);
    const [p, x] = [requireString(peer, 'peer'), requireString(text, 'text')];
    return groupStart(this.#call((g) => g.startGroupThread(t, p, x), 'start-group-thread'));
  }

  /**
   * The finals of the round just run: the next round or stop.
   * @param {import('../index.js').GroupThreadInput} thread
   * @param {{ agent: string, reply?: string | null }[]} replies reply null/absent = passed or failed
   */
  finishGroupRound(thread, replies) {
    const list = groupReplies(replies);
    const t = groupThread(thread);
    return groupStep(this.#call((g) => g.finishGroupRound(t, list), 'finish-group-round'));
  }

  /** The thread was cancelled: forget it. @param {import('../index.js').GroupThreadInput} thread */
  cancelGroupThread(thread) {
    const t = groupThread(thread);
    return groupStep(this.#call((g) => g.cancelGroupThread(t), 'cancel-group-thread'));
  }

  /**
   * Applies trace events (JSON Lines) and returns their decisions (JSON Lines).
   * @param {string} jsonl
   * @param {number} [firstLine] 1-based trace line number of the first line of `jsonl`
   */
  applyEvents(jsonl, firstLine = 1) {
    if (!Number.isInteger(firstLine) || firstLine < 1 || firstLine > 0xffffffff) {
      throw new LoopGuardError('input', 'firstLine', `must be an integer ≥ 1, not ${String(firstLine)}`);
    }
    const text = requireString(jsonl, 'jsonl');
    return this.#call((g) => g.applyEvents(text, firstLine), 'apply-events');
  }

  /** The whole state as a versioned snapshot (bytes owned by the policy). @returns {Uint8Array} */
  exportState() {
    return this.#call((g) => g.exportState(), 'export-state');
  }

  /**
   * Replaces the state with a snapshot from `exportState` (this or an older policy). On error the
   * current state is kept.
   * @param {Uint8Array} bytes
   */
  importState(bytes) {
    if (!(bytes instanceof Uint8Array)) throw new LoopGuardError('input', 'snapshot', 'must be a Uint8Array (or Buffer)');
    this.#call((g) => g.importState(bytes), 'import-state');
  }

  /** Counters for metrics: sessions, bot pairs, group threads and the policy's memory. */
  stats() {
    const s = this.#call((g) => g.stats(), 'stats');
    return {
      sessions: s.sessions,
      evictedSessions: Number(s.evictedSessions),
      botPairs: s.botPairs,
      evictedPairs: Number(s.evictedPairs),
      groupThreads: s.groupThreads,
      memoryBytes: Number(s.memoryBytes),
    };
  }

  /** True once `[Symbol.dispose]()` ran. */
  get disposed() {
    return this.#gateway === null;
  }

  /** Releases the gateway resource; later calls throw a LoopGuardError. Safe to call twice. */
  [Symbol.dispose]() {
    const gateway = this.#gateway;
    this.#gateway = null;
    gateway?.[Symbol.dispose]();
  }

  #live() {
    if (this.#gateway === null) {
      throw new LoopGuardError('policy', 'gateway', 'this LoopGuard was disposed; create a new one');
    }
    return this.#gateway;
  }

  /** Runs `fn` on the live gateway; a policy error becomes a LoopGuardError of its kind. */
  #call(fn, what) {
    const gateway = this.#live();
    return policyCall(() => fn(gateway), what);
  }
}
