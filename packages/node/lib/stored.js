// StoredLoopGuard: one replica of a scaled-out gateway, its loop-guard state kept in a store the
// replicas share (Valkey/Redis), so that a pair budget of 20 is 20 across all replicas and a tool
// loop spread over them is seen whole (docs/SCALING.md).
//
// The policy decides, the store keeps. Each decision is the Rust host's loop
// (host/src/store/decide.rs), step for step: the key (the policy's `key-of`; a trace line's
// `state-key`), what this replica last saw of it (none: taken as absent), the policy's
// `decide-call` (`decide-keyed`) on that blob, written back by CAS_SCRIPT at that version; on a
// conflict, decide again on the value it returned.
//
// One round trip in the common case: the last value and version seen of each key are remembered
// (SEEN_CAPACITY keys, each for the TTL); a stale one costs a conflict, whose reply is the current
// value. Versions never repeat (store.js's nextVersion); 1.0's counted ones may: never remembered.
//
// Why a class of its own and not an option of LoopGuard: LoopGuard's calls are synchronous and a
// store answers asynchronously, so every call here returns a Promise of the verdict LoopGuard's
// call of the same name returns. Decisions of one key in this process run one after the other
// in call order (only replicas contend for a key); different keys run concurrently.
//
// When the store fails (down, slow past the deadline, full, a value this policy cannot read) the
// decision is made on this replica's local state (a MemoryStore, the same path), or refused with
// `storeFailClosed`; it is counted in stats(), logged once per episode, and the store is tried
// again at the next decision, then after 5, 20, 80 ms and every 250 ms while it keeps failing.
import * as cv from './convert.js';
import { LoopGuardError, policyCall } from './errors.js';
import { guardMetrics } from './metrics.js';
import { getDefaultPolicy, loadPolicy } from './policy.js';
import { COUNTED_BELOW, MemoryStore, RedisStore, StoreError } from './store.js';
import { storeOptions } from './store-options.js';

/** Set by `load` for the one constructor call it makes (the constructor stays synchronous). */
let policyForNextGuard = null;

const RETRY_AFTER_MS = 250;
const MAX_RETRIES = 1_000;
/** Keys whose last seen value a replica remembers (host/src/store/decide.rs's SEEN_CAPACITY). */
const SEEN_CAPACITY = 10_000;

export class StoredLoopGuard {
  #gateway;
  #policy;
  #store;
  #local = new MemoryStore();
  /** the last value and version seen of each shared key */
  #seen = new MemoryStore(SEEN_CAPACITY);
  #o;
  #episode = null;
  /** state key → the last decision queued on it (decisions of one key run in call order) */
  #chains = new Map();
  #line = 0;
  #stats = { onStore: 0, onLocal: 0, refused: 0, casRetries: 0, storeErrors: 0, unreadable: 0, episodes: 0 };
  /** OpenTelemetry metrics (lib/metrics.js), undefined when not in use; #source: what they read */
  #metrics; #source;

  /**
   * @param {string | object} config the same config as LoopGuard's
   * @param {import('../index.js').StoreOptions} options
   */
  constructor(config, options) {
    const policy = policyForNextGuard ?? getDefaultPolicy();
    policyForNextGuard = null;
    this.#o = storeOptions(options);
    const text = cv.configText(config ?? '{}');
    const metrics = guardMetrics(options?.meterProvider, options?.metricsHost ?? 'node', 'options');
    const gateway = policyCall(() => policy.exports.guard.Gateway.create(text), 'create');
    if (typeof gateway.keyOf !== 'function' || typeof gateway.decideCall !== 'function') {
      gateway[Symbol.dispose]?.();
      throw new LoopGuardError('policy', policy.source, `implements loopguard:policy@${policy.interfaceVersion}; a shared store needs 1.2 or later (key-of, decide-call)`);
    }
    this.#gateway = gateway;
    this.#policy = policy;
    this.#metrics = metrics;
    this.#source = metrics?.watch(() => (this.#gateway === null ? undefined : this.#stats));
    const { store, storePrefix, deadlineMs, redisOptions } = this.#o;
    this.#store = store === 'memory' ? new MemoryStore() : new RedisStore(store, { prefix: storePrefix, deadlineMs, redisOptions });
  }

  /**
   * A StoredLoopGuard of the policy component in `wasm` instead of the default policy.
   * @param {string | URL | Uint8Array | ArrayBuffer} wasm
   * @param {string | object} config
   * @param {import('../index.js').StoreOptions & { expectDigest?: string }} options
   */
  static async load(wasm, config, options) {
    storeOptions(options);
    const policy = await loadPolicy(wasm, { expectDigest: options?.expectDigest });
    policyForNextGuard = policy;
    try {
      return new StoredLoopGuard(config, options);
    } finally {
      policyForNextGuard = null;
    }
  }

  /**
   * Makes V8 compile the policy's hot code now instead of during the first decisions (the first
   * ones otherwise take ~20 ms, the next ones a fraction of a millisecond): `rounds` made-up tool
   * calls, outcomes and bot messages decided on made-up blobs kept here. Neither the store nor
   * this guard's local state is touched.
   * @param {{ rounds?: number }} [options]
   */
  warmUp(options = {}) {
    const rounds = options?.rounds ?? 200;
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10_000) {
      throw new LoopGuardError('input', 'options.rounds', `must be an integer from 1 to 10000, not ${String(rounds)}`);
    }
    const blobs = new Map();
    const decide = (call) => {
      const key = this.#call((g) => g.keyOf(call), 'key-of');
      blobs.set(key, this.#call((g) => g.decideCall(call, blobs.get(key)), 'decide-call').state);
    };
    for (let i = 0; i < rounds; i++) {
      const c = { session: `warm-${i % 4}`, tool: i % 2 ? 'read' : 'exec', argsJson: `{"n":${i % 3}}`, run: 'warm' };
      decide({ tag: 'check-tool-call', val: c });
      decide({ tag: 'record-tool-outcome', val: [c, { tag: 'returned', val: `{"content":[{"type":"text","text":"${i % 3}"}]}` }] });
      const m = { channel: 'warm', account: 'warm', conversation: 'warm', sender: `b${i % 2}`, receiver: `b${(i + 1) % 2}`, tsMs: BigInt(i * 1000) };
      decide({ tag: 'check-bot-message', val: m });
    }
  }

  /** The active policy: its versions, digest and source. */
  get policy() {
    return cv.policyInfo(this.#policy);
  }

  /**
   * Decides one trace event (a JSON line of docs/spec/trace-format.md) on its key's state.
   * Rejects only as the policy does (a malformed event): never because of the store.
   * @param {string} event
   * @param {number} [line] the line number the decision carries (default: a counter)
   * @returns {Promise<import('../index.js').StoredDecision>}
   */
  decide(event, line) {
    let text;
    let n;
    let key;
    try {
      text = cv.requireString(event, 'event');
      n = line ?? (this.#line = (this.#line % 0xffffffff) + 1);
      if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) throw new LoopGuardError('input', 'line', `must be an integer from 1 to 4294967295, not ${String(n)}`);
      key = this.#call((g) => g.stateKey(text), 'state-key');
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#queue(key, { event: text, line: n });
  }

  /** @param {import('../index.js').ToolCallInput} call */
  beforeToolCall(call) {
    const decide = async () => cv.toolVerdict(await this.#typed({ tag: 'check-tool-call', val: cv.toolCall(call) }));
    return this.#metrics === undefined ? decide() : this.#metrics.counted('tool_call', decide);
  }

  /** @param {import('../index.js').ToolCallInput} call @param {import('../index.js').ToolOutcomeInput} outcome */
  afterToolOutcome(call, outcome) {
    const decide = async () => {
      const o = cv.toolOutcome(outcome);
      if (o === undefined) return { action: 'ignored' }; // as LoopGuard: an undefined result has no hash
      return cv.outcomeVerdict(await this.#typed({ tag: 'record-tool-outcome', val: [cv.toolCall(call), o] }));
    };
    return this.#metrics === undefined ? decide() : this.#metrics.counted('tool_result', decide);
  }

  /** @param {string} session @param {string} [run] @param {string} [agent] */
  async afterCompactionRetry(session, run, agent) {
    const val = { session: cv.requireString(session, 'session'), run: cv.optionalString(run, 'run'), agent: cv.optionalString(agent, 'agent') };
    return cv.compactionVerdict(await this.#typed({ tag: 'compaction-retried', val }));
  }

  /** Forgets the session's local fallback state; its state in the store expires with the store's
   * TTL (another replica may still be deciding on it). @param {string} session */
  endSession(session) {
    const val = { session: cv.requireString(session, 'session') };
    this.#local.delete(this.#call((g) => g.keyOf({ tag: 'compaction-retried', val }), 'key-of'));
  }

  /** @param {import('../index.js').BotMessageInput} msg */
  onBotMessage(msg) {
    const decide = async () => cv.botVerdict(await this.#typed({ tag: 'check-bot-message', val: cv.botMessage(msg) }));
    return this.#metrics === undefined ? decide() : this.#metrics.counted('bot_message', decide);
  }

  /** @param {import('../index.js').GroupThreadInput} thread @param {string} peer @param {string} text */
  async startGroupThread(thread, peer, text) {
    const val = { thread: cv.groupThread(thread), peer: cv.requireString(peer, 'peer'), text: cv.requireString(text, 'text') };
    return cv.groupStart(await this.#typed({ tag: 'start-group-thread', val }));
  }

  /** @param {import('../index.js').GroupThreadInput} thread @param {{ agent: string, reply?: string | null }[]} replies */
  async finishGroupRound(thread, replies) {
    const list = cv.groupReplies(replies);
    return cv.groupStep(await this.#typed({ tag: 'finish-group-round', val: { thread: cv.groupThread(thread), replies: list } }));
  }

  /** @param {import('../index.js').GroupThreadInput} thread */
  async cancelGroupThread(thread) {
    return cv.groupStep(await this.#typed({ tag: 'cancel-group-thread', val: cv.groupThread(thread) }));
  }

  /**
   * Decides trace events (JSON Lines) one by one in order, each on its key's state; returns the
   * decision lines. Blank lines are skipped but counted in the numbering.
   * @param {string} jsonl
   * @param {number} [firstLine]
   */
  async applyEvents(jsonl, firstLine = 1) {
    const lines = cv.requireString(jsonl, 'jsonl').split('\n');
    let out = '';
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i].replace(/\r$/, '');
      if (text.trim() === '') continue;
      const d = await this.decide(text, firstLine + i);
      if (d.decision === null) throw refusedError(d.key, `line ${firstLine + i}`);
      out += d.decision;
    }
    return out;
  }

  /** Counters for health checks and metrics (the Rust host's StoreStats, camelCase). */
  stats() {
    return { backend: this.#store.describe(), ...this.#stats, degraded: this.#episode !== null, localKeys: this.#local.size };
  }

  /** True once `close()` ran. */
  get closed() {
    return this.#gateway === null;
  }

  /** Waits for the decisions under way, closes the store's connection, frees the gateway. */
  async close() {
    await Promise.all(this.#chains.values());
    const gateway = this.#gateway;
    this.#gateway = null;
    await this.#store.close();
    gateway?.[Symbol.dispose]();
  }

  [Symbol.asyncDispose]() {
    return this.close();
  }

  // ---- the decision loop ----

  /** Runs the decision on `key` after the ones queued on it (decisions of one key in call order). */
  #queue(key, input) {
    const before = this.#chains.get(key);
    const run = before ? before.then(() => this.#decideNow(key, input)) : this.#decideNow(key, input);
    const tail = run.then(
      () => {},
      () => {},
    );
    this.#chains.set(key, tail);
    tail.then(() => {
      if (this.#chains.get(key) === tail) this.#chains.delete(key);
    });
    return run;
  }

  /** A typed call (a WIT `call` value) decided on its key's state: the verdict's value. */
  async #typed(call) {
    const key = this.#call((g) => g.keyOf(call), 'key-of');
    const d = await this.#queue(key, { call });
    if (d.decision === null) throw refusedError(d.key, 'store');
    if (d.decision.tag !== call.tag) throw new LoopGuardError('policy', 'verdict', `the policy answered ${d.decision.tag} to ${call.tag}`);
    return d.decision.val;
  }

  async #decideNow(key, input) {
    const start = performance.now();
    if (this.#episode !== null && start < this.#episode.nextTry) return this.#fallback(key, input);
    let d;
    try {
      d = await this.#onStore(key, input, start);
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      if (e.kind === 'unreadable') {
        this.#stats.unreadable += 1;
        this.#o.log(`loopguard: ${this.#store.describe()} key ${key}: ${e.message}; this decision is made on local state`);
      } else {
        this.#failed(e, start);
      }
      return this.#fallback(key, input);
    }
    this.#recovered();
    this.#stats.onStore += 1;
    return d;
  }

  async #onStore(key, input, start) {
    let current = this.#seen.get(key);
    let retries = 0;
    for (;;) {
      let decision, blob;
      try {
        [decision, blob] = this.#decideOn(input, current);
      } catch (e) {
        this.#seen.delete(key);
        throw e;
      }
      // A failed write may land later: a stale remembered version costs a conflict, no more.
      const r = await this.#store.cas(key, current.version, blob, this.#o.ttlMs);
      this.#remember(key, r.written !== undefined ? { version: r.written, blob } : r.conflict);
      if (r.written !== undefined) return { decision, key, version: r.written, via: 'store', retries };
      retries += 1;
      this.#stats.casRetries += 1;
      const spent = performance.now() - start;
      if (retries > MAX_RETRIES || spent > this.#o.deadlineMs) {
        throw new StoreError('timeout', `${retries} conflicting writes in ${spent.toFixed(1)} ms`);
      }
      current = r.conflict;
      // From the second conflict in a row, a random pause of up to 2 ms: replicas hammering one
      // key otherwise fall into step, and one of them can lose every race.
      if (retries >= 2) await new Promise((r) => setTimeout(r, Math.floor(Math.random() * Math.min(retries - 1, 3))));
    }
  }

  /** Keeps `value` as what this replica last saw of `key`, unless its version was counted. */
  #remember(key, value) {
    if (value.version >= COUNTED_BELOW) this.#seen.remember(key, value, this.#o.ttlMs);
    else this.#seen.delete(key);
  }

  /** The decision on local state (none, failing closed). Synchronous: it cannot interleave. */
  #fallback(key, input) {
    if (this.#episode !== null) this.#episode.localDecisions += 1;
    if (this.#o.failClosed) {
      this.#stats.refused += 1;
      return { decision: null, key, version: 0, via: 'refused', retries: 0 };
    }
    const current = this.#local.get(key);
    let decided;
    try {
      decided = this.#decideOn(input, current);
    } catch (e) {
      if (e instanceof StoreError) throw new LoopGuardError('snapshot', key, e.message);
      throw e;
    }
    const r = this.#local.cas(key, current.version, decided[1], this.#o.ttlMs);
    this.#stats.onLocal += 1;
    return { decision: decided[0], key, version: r.written ?? current.version, via: 'local', retries: 0 };
  }

  /**
   * The policy's answer on `current` (the typed verdict of a call, the decision line of a trace
   * line) and the blob to write (empty: nothing to keep).
   */
  #decideOn(input, current) {
    const state = current.blob.length > 0 ? current.blob : undefined;
    try {
      if (input.call !== undefined) {
        const d = this.#call((g) => g.decideCall(input.call, state), 'decide-call');
        return [d.verdict, d.state ?? new Uint8Array(0)];
      }
      const d = this.#call((g) => g.decideKeyed(input.event, input.line, state), 'decide-keyed');
      return [d.decision, d.state ?? new Uint8Array(0)];
    } catch (e) {
      if (e instanceof LoopGuardError && e.kind === 'snapshot') throw new StoreError('unreadable', e.reason);
      throw e;
    }
  }

  #failed(e, now) {
    this.#stats.storeErrors += 1;
    const ep = this.#episode;
    if (ep !== null) {
      ep.failures += 1;
      ep.nextTry = now + backoff(ep.failures);
      return;
    }
    this.#stats.episodes += 1;
    const mode = this.#o.failClosed ? 'refusing decisions (storeFailClosed)' : 'deciding on local state';
    this.#o.log(`loopguard: ${this.#store.describe()} failed (${e.message}); ${mode} until it answers`);
    this.#episode = { since: now, nextTry: now, failures: 1, localDecisions: 0 };
  }

  #recovered() {
    const ep = this.#episode;
    if (ep === null) return;
    this.#episode = null;
    const s = ((performance.now() - ep.since) / 1000).toFixed(1);
    this.#o.log(`loopguard: ${this.#store.describe()} answers again after ${s} s; ${ep.localDecisions} decisions were made without it`);
    this.#local.clear();
  }

  #call(fn, what) {
    const gateway = this.#gateway;
    if (gateway === null) throw new LoopGuardError('policy', 'gateway', 'this StoredLoopGuard was closed; create a new one');
    return policyCall(() => fn(gateway), what);
  }
}

/** Decisions stay local this long after `failures` failed tries in a row (decide.rs's backoff). */
function backoff(failures) {
  return failures <= 1 ? 0 : Math.min(5 * 4 ** (failures - 2), RETRY_AFTER_MS);
}

function refusedError(key, where) {
  return new LoopGuardError('store', where, `the store failed and storeFailClosed is set: no decision for ${key}`);
}
