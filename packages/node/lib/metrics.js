// Metrics through the OpenTelemetry API: the instruments of docs/METRICS.md, the same names and
// attributes as the CLI's Prometheus text and the Python package, so one dashboard reads every host.
//
// Why optional and why looked up this way: most gateways have no OpenTelemetry, and a loop guard
// must not make them load it or pay for it. A guard records only when it is given a
// `meterProvider`, or when the application has registered a global meter provider with the API
// (`metrics.setGlobalMeterProvider`, which the SDK's `NodeSDK.start()` does) before making the
// guard. The API keeps its globals on `globalThis[Symbol.for('opentelemetry.js.api.1')]` (its
// internal/global-utils: the key carries the API's major version), so the provider is read from
// there and nothing is imported: this package never loads `@opentelemetry/api`, with or without
// metrics. Otherwise the decision path makes one `=== undefined` test.
//
// What is counted where: each decision is counted in the policy's words (action, detector) in
// Maps kept here and reported at collection by the observable counter `loopguard.decisions` (the
// SDK's synchronous `add()` with attributes costs about what a histogram record does, below);
// one decision in DURATION_SAMPLE is timed on the histogram `loopguard.decision.duration`. The policy and store
// counters are not counted here at all: they are the guards' own counters (the Supervisor's
// failures, StoredLoopGuard#stats) read when the SDK collects. Attribute values come from fixed
// lists (anything else is `other`), so the number of series has a ceiling whatever the traffic.

import { createRequire } from 'node:module';
import { LoopGuardError } from './errors.js';

/** The API's global registry (`@opentelemetry/api` 1.x, internal/global-utils). */
const API_KEY = Symbol.for('opentelemetry.js.api.1');
/** The policy's detector names (wit/policy.wit), as in the CLI's cli/src/metrics. */
export const DETECTORS = new Set(['generic_repeat', 'known_poll_no_progress', 'ping_pong', 'unknown_tool_repeat', 'global_circuit_breaker', 'argument_churn', 'same_error', 'same_result', 'cycle', 'growing_args', 'ladder', 'compaction_loop_persisted']);
export const ACTIONS = new Set(['allow', 'warn', 'block', 'recorded', 'ignored', 'abort', 'suppress']);
export const KINDS = new Set(['tool_call', 'tool_result', 'bot_message', 'group_message', 'compaction']);
/** Seconds; an in-process decision takes tens of microseconds, a stored one a round trip. */
export const BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1];
/**
 * One decision in this many is timed on the histogram (a power of two: the test is a mask).
 * Why: the SDK's `Histogram.record` with attributes costs 0.6–2 µs in Node 24 (attribute
 * hashing, the bucket search), twenty times the count; one in 256 keeps it out of the figure
 * (docs/PERFORMANCE.md), as in the Python package, and the quantiles unbiased. The histogram's
 * count is therefore not a decision count: `loopguard.decisions` is.
 */
export const DURATION_SAMPLE = 256;
/** Distinct raw keys a host keeps before new ones are folded into their bounded form. */
export const MAX_KEYS = 4096;
/** Distinct `host` values (`other` included); past them a new host is counted as `other`. */
export const MAX_HOSTS = 64;

/** The policy and store counters: instrument, the counters() key, unit, description. */
const OBSERVED = [
  ['loopguard.policy.swaps', 'swaps', '{event}', 'Policy versions swapped in'],
  ['loopguard.policy.traps', 'traps', '{event}', 'Policy calls that trapped or ran out of memory'],
  ['loopguard.policy.timeouts', 'timeouts', '{event}', 'Policy calls stopped at their deadline'],
  ['loopguard.policy.recoveries', 'recoveries', '{event}', 'Broken policy instances replaced'],
  ['loopguard.store.cas_retries', 'casRetries', '{retry}', 'Compare-and-set conflicts retried'],
  ['loopguard.store.fallback_episodes', 'episodes', '{episode}', 'Store failure episodes begun'],
];
const STORE_ON = [
  ['store', 'onStore'],
  ['local', 'onLocal'],
  ['refused', 'refused'],
];

const bounded = (value, list) => (list.has(value) ? value : 'other');

/**
 * The decisions of one host in the policy's words: kind → action → detector ('' for none) →
 * count. Nested Maps and not one Map of joined keys: the words are the same few strings again
 * and again, whose hashes V8 keeps, while a joined key is a new string to build and hash at
 * every decision (measured: 47 ns against 380 ns a decision, in Node 24).
 */
class Tally {
  kinds = new Map();
  /** leaves (distinct raw keys) */
  size = 0;

  add(kind, action, detector) {
    const detectors = this.kinds.get(kind)?.get(action);
    const n = detectors?.get(detector);
    if (n !== undefined) {
      detectors.set(detector, n + 1);
      return;
    }
    if (this.size >= MAX_KEYS) {
      // past the words any policy says, every new key is folded into its bounded form
      const [k, a, d] = [bounded(kind, KINDS), bounded(action, ACTIONS), detector === '' ? '' : bounded(detector, DETECTORS)];
      if (k !== kind || a !== action || d !== detector) return this.add(k, a, d);
    }
    let actions = this.kinds.get(kind);
    if (actions === undefined) this.kinds.set(kind, (actions = new Map()));
    let leaves = actions.get(action);
    if (leaves === undefined) actions.set(action, (leaves = new Map()));
    leaves.set(detector, 1);
    this.size += 1;
  }

  /** The counts by bounded attributes: [{ kind, action, detector }, n]. */
  *bounded() {
    const merged = new Map();
    for (const [kind, actions] of this.kinds) {
      for (const [action, detectors] of actions) {
        for (const [detector, n] of detectors) {
          const a = { kind: bounded(kind, KINDS), action: bounded(action, ACTIONS), detector: detector === '' ? 'none' : bounded(detector, DETECTORS) };
          const k = `${a.kind}/${a.action}/${a.detector}`;
          const m = merged.get(k);
          if (m === undefined) merged.set(k, [a, n]);
          else m[1] += n;
        }
      }
    }
    yield* merged.values();
  }
}

/** The instruments of one meter provider, shared by every guard that records on it. */
class Recorder {
  /** host → its Tally */
  #hosts = new Map();
  /** WeakRefs to the `{ host, counters() }` sources read at collection: as many as live guards. */
  #sources = new Set();
  /** drops a source's WeakRef once the source (its guard) was collected */
  #gone = new FinalizationRegistry((ref) => this.#sources.delete(ref));

  constructor(meter) {
    this.duration = meter.createHistogram('loopguard.decision.duration', { unit: 's', description: 'Time to a decision, as the host waited for it', advice: { explicitBucketBoundaries: BUCKETS } });
    meter
      .createObservableCounter('loopguard.decisions', { unit: '{decision}', description: 'Decisions by host, kind, action and detector' })
      .addCallback((result) => this.#observeDecisions(result));
    for (const [name, key, unit, description] of OBSERVED) {
      meter.createObservableCounter(name, { unit, description }).addCallback((result) => {
        for (const [host, c] of this.#totals()) if (c[key] !== undefined) result.observe(c[key], { host });
      });
    }
    meter.createObservableCounter('loopguard.store.decisions', { unit: '{decision}', description: 'Stored decisions by where they were made: store, local, refused' }).addCallback((result) => {
      for (const [host, c] of this.#totals()) for (const [on, key] of STORE_ON) if (c[key] !== undefined) result.observe(c[key], { host, on });
    });
  }

  /** The Tally of `host` (one per host, so that the hot path looks no host up). */
  counts(host) {
    let counts = this.#hosts.get(host);
    if (counts === undefined) {
      // the last place is kept for `other`, where every host past the others is counted
      if (this.#hosts.size >= MAX_HOSTS - 1 && host !== 'other') return this.counts('other');
      counts = new Tally();
      this.#hosts.set(host, counts);
    }
    return counts;
  }

  /** Reads `source.counters()` at each collection while `source` lives. */
  watch(source) {
    const ref = new WeakRef(source);
    this.#sources.add(ref);
    this.#gone.register(source, ref);
  }

  #observeDecisions(result) {
    for (const [host, tally] of this.#hosts) for (const [a, n] of tally.bounded()) result.observe(n, { host, ...a });
  }

  /** Each host's counters, summed over its live sources. */
  #totals() {
    const byHost = new Map();
    for (const ref of this.#sources) {
      const source = ref.deref();
      let c;
      try {
        c = source?.counters();
      } catch {
        c = undefined; // a source closed meanwhile has no counters any more
      }
      if (c === undefined) {
        this.#sources.delete(ref);
        continue;
      }
      const total = byHost.get(source.host) ?? {};
      for (const [k, v] of Object.entries(c)) if (typeof v === 'number') total[k] = (total[k] ?? 0) + v;
      byHost.set(source.host, total);
    }
    return byHost;
  }
}

/** What one guard records on: its host's counts and the shared instruments. */
export class GuardMetrics {
  #recorder;
  #counts;
  /** the histogram's attributes of each kind, made once */
  #attributes;
  /** Decisions of each kind since the last timed one: a counter per kind, so that a caller that
   * alternates kinds (a check, then an outcome) still has each kind timed. */
  #ticks = { tool_call: 0, tool_result: 0, bot_message: 0 };

  constructor(recorder, host) {
    this.#recorder = recorder;
    this.#counts = recorder.counts(host);
    this.host = host;
    this.#attributes = new Map([...KINDS].map((kind) => [kind, { host, kind }]));
  }

  /** Raw keys kept for this guard's host (bounded: MAX_KEYS, then the folded forms). */
  get keys() {
    return this.#counts.size;
  }

  /** The start time of a decision of `kind` to time (one in DURATION_SAMPLE), else -1. */
  start(kind) {
    const n = (this.#ticks[kind] + 1) & (DURATION_SAMPLE - 1);
    this.#ticks[kind] = n;
    return n === 0 ? performance.now() : -1;
  }

  /**
   * Counts one decision of `kind` as the policy answered it (`verdict.action`,
   * `verdict.detector`); `started` is start()'s value. The hot path: a few Map lookups, and
   * one decision of a kind in DURATION_SAMPLE a histogram record.
   */
  decided(kind, verdict, started) {
    this.#counts.add(kind, verdict.action, verdict.detector ?? '');
    if (started >= 0) this.#recorder.duration.record((performance.now() - started) / 1000, this.#attributes.get(kind));
    return verdict;
  }

  /**
   * Has `counters()` (the guard's own counters; undefined once it is closed) read at each
   * collection while the returned source lives: the guard keeps it in a field, so it goes when
   * the guard is collected.
   * @param {() => Record<string, unknown> | undefined} counters
   */
  watch(counters) {
    const source = { host: this.host, counters };
    this.#recorder.watch(source);
    return source;
  }

  /** Counts the verdict `decide()` resolves to (the async form of start and decided). */
  async counted(kind, decide) {
    const started = this.start(kind);
    return this.decided(kind, await decide(), started);
  }
}

const recorders = new WeakMap();

/**
 * The metrics of a guard, or undefined when OpenTelemetry is not in use (see the file's head).
 * @param {unknown} meterProvider an OpenTelemetry MeterProvider; null: off; undefined: the
 *   global one if the application registered one
 * @param {unknown} host the `host` attribute
 * @param {string} path the option's name, for errors
 * @returns {GuardMetrics | undefined}
 */
export function guardMetrics(meterProvider, host, path) {
  if (typeof host !== 'string' || host === '') throw new LoopGuardError('input', `${path}.metricsHost`, `must be a non-empty string, not ${JSON.stringify(host)}`);
  if (meterProvider === null) return undefined;
  let provider = meterProvider;
  if (provider === undefined) {
    provider = globalThis[API_KEY]?.metrics;
    if (provider === undefined) return undefined;
  } else if (typeof provider?.getMeter !== 'function') {
    throw new LoopGuardError('input', `${path}.meterProvider`, `must be an OpenTelemetry MeterProvider (with getMeter), null or absent`);
  }
  let recorder = recorders.get(provider);
  if (recorder === undefined) {
    recorder = new Recorder(provider.getMeter('loopguard', packageVersion()));
    recorders.set(provider, recorder);
  }
  return new GuardMetrics(recorder, host);
}

/** This package's version: the meter's version. */
function packageVersion() {
  return createRequire(import.meta.url)('../package.json').version;
}
