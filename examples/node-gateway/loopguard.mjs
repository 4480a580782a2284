// LoopGuard for Node.js gateways: the loopguard policy component (the same
// `loopguard_policy.wasm` the Rust host and the wasmtime CLI run), transpiled by jco.
//
// Why a wrapper at all: jco's raw bindings speak WIT (kebab-case enums, tagged variants, bigint
// for s64, `ComponentError` with a `payload`). A gateway wants its own hook names, plain objects
// whose vocabulary matches the decision lines of `applyEvents`/`loopguard replay`
// (`generic_repeat`, `all_passed`, ...), and errors it can log with a path. This file only
// converts; every decision is made inside the component. Loading components is policy.mjs.
//
//   import { LoopGuard } from './loopguard.mjs';
//   const guard = new LoopGuard({ tools: { loopDetection: { enabled: true } } }); // one per process
//   const verdict = guard.beforeToolCall({ session: 's1', tool: 'read', args: { path: '/a' } });
//   if (verdict.action === 'block') return verdict.message; // hand it to the model as the result
//   ...
//   await guard.swap('/srv/policies/loopguard_policy-0.2.1.wasm'); // hot swap, state carried over
//   guard[Symbol.dispose](); // or `using guard = ...` (TypeScript 5.2+, Node 22+ syntax)
import { LoopGuardError, compatibleLine, defaultPolicy, loadPolicy } from './policy.mjs';

export { LoopGuardError };

/** The WIT interface this wrapper was written for; a policy with another 0.x minor is refused. */
export const SUPPORTED_INTERFACE = '0.5';

/** The default policy's own version (the guest crate version). */
export const policyVersion = defaultPolicy.version;
/** The WIT interface version the default policy implements. */
export const interfaceVersion = defaultPolicy.interfaceVersion;
checkInterface(interfaceVersion);

/**
 * Replays a whole trace (JSON Lines) on a fresh gateway of the default policy; returns the
 * decisions as JSON Lines, byte for byte what `loopguard replay` prints.
 * @param {string | object} config JSON/JSON5 text (passed through unchanged) or an object
 * @param {string} trace
 * @returns {string}
 */
export function replay(config, trace) {
  return policyCall(() => defaultPolicy.exports.replay(configText(config), requireString(trace, 'trace')), defaultPolicy.core);
}

/** Set by `LoopGuard.load` for the one synchronous constructor call it makes. */
let policyForNextGuard = null;

/** All loop-guard state of one gateway process. Release it with `[Symbol.dispose]()` (or `using`). */
export class LoopGuard {
  /** @type {any} the jco `Gateway` resource; null once disposed */
  #gateway;
  /** @type {bigint} #gateway's id, for the `-quick` tool functions */
  #id = 0n;
  /** @type {import('./policy.mjs').Policy} the policy instance #gateway lives in */
  #policy;
  /** @type {string} the config text, for the gateway a swap creates */
  #config;
  /** @type {Promise<unknown>} the last swap (swaps run one after the other) */
  #swaps = Promise.resolve();

  /**
   * A gateway of the default policy (generated/, transpiled at build time).
   * @param {string | object} [config] OpenClaw-style config: JSON/JSON5 text, or an object
   *   (serialized with JSON.stringify). `{}` means all defaults.
   */
  constructor(config = '{}') {
    const policy = policyForNextGuard ?? defaultPolicy;
    policyForNextGuard = null;
    const text = configText(config);
    this.#gateway = policyCall(() => policy.exports.guard.Gateway.create(text), policy.core);
    this.#id = this.#gateway.id();
    this.#policy = policy;
    this.#config = text;
  }

  /**
   * A gateway of the policy component in `wasm` (a path, a file URL or the bytes). The file is
   * transpiled by jco in a worker thread, unless it is the default policy's or one loaded
   * recently; each call gets its own component instance.
   * @param {string | URL | Uint8Array | ArrayBuffer} wasm
   * @param {string | object} [config]
   * @returns {Promise<LoopGuard>}
   */
  static async load(wasm, config = '{}') {
    const text = configText(config);
    const policy = await loadPolicy(wasm);
    checkInterface(policy.interfaceVersion, policy.source);
    policyForNextGuard = policy;
    try {
      return new LoopGuard(text);
    } finally {
      policyForNextGuard = null;
    }
  }

  /**
   * Hot swap: loads the policy in `wasm`, creates its gateway with this guard's config, refuses
   * it if its interface major (for 0.x: `0.minor`) differs from the active one's, then moves the
   * state over (`exportState` from the old gateway, `importState` into the new one) and switches.
   * Everything before the state move happens while the old policy keeps answering; the move and
   * the switch are one synchronous step, so no call lands in between. On any failure the old
   * policy stays active and the promise rejects with a LoopGuardError. Swaps are serialized.
   * @param {string | URL | Uint8Array | ArrayBuffer} wasm
   * @returns {Promise<SwapReport>}
   */
  swap(wasm) {
    const run = this.#swaps.then(() => this.#swap(wasm));
    this.#swaps = run.catch(() => {});
    return run;
  }

  async #swap(wasm) {
    this.#live();
    const started = performance.now();
    const old = this.#policy;
    const kept = () => `the active policy stays (${describePolicy(old)})`;
    let policy;
    let gateway;
    try {
      policy = await loadPolicy(wasm);
      if (compatibleLine(policy.interfaceVersion) !== compatibleLine(old.interfaceVersion)) {
        throw new LoopGuardError(
          'interface-version',
          `${policy.source} implements loopguard:policy@${policy.interfaceVersion}, the active policy ` +
            `loopguard:policy@${old.interfaceVersion}; a swap needs the same interface ` +
            `${compatibleLine(old.interfaceVersion)}.x`,
        );
      }
      gateway = policyCall(() => policy.exports.guard.Gateway.create(this.#config), policy.core);
    } catch (e) {
      throw swapError(e, kept());
    }
    if (this.#gateway === null) {
      disposeQuietly(gateway);
      throw new LoopGuardError('gateway', 'this LoopGuard was disposed during the swap');
    }
    const prepared = performance.now();
    // From here to the switch: synchronous, so every call sees either the old or the new policy.
    let snapshot;
    try {
      snapshot = this.#call((g) => g.exportState());
      policyCall(() => gateway.importState(snapshot), policy.core);
    } catch (e) {
      disposeQuietly(gateway);
      throw swapError(e, kept());
    }
    const previous = this.#gateway;
    this.#gateway = gateway;
    this.#id = gateway.id();
    this.#policy = policy;
    const switched = performance.now();
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

  /** The active policy: its versions, the component's sha256 and where it came from. */
  get policy() {
    return policyInfo(this.#policy);
  }

  /**
   * Before a tool runs: allow, warn or block. The call is recorded unless blocked or disabled.
   * @param {ToolCallInput} call
   */
  beforeToolCall(call) {
    this.#live();
    const policy = this.#policy;
    const c = toolCall(call);
    const v = policy.core !== null ? policy.core.check(this.#id, c) : jcoCheck(policy, this.#id, c);
    if (v === null) throw quickError(policy);
    if (v.action === 'allow') return { action: 'allow', count: v.count, notify: v.notify };
    const message = lastMessage(policy);
    return { action: v.action, detector: snake(v.detector), count: v.count, message, notify: v.notify };
  }

  /**
   * After a tool ran: records its outcome, and may say to abort the run (post-compaction guard).
   * @param {ToolCallInput} call the same call that was passed to beforeToolCall
   * @param {{ result?: unknown, resultJson?: string, error?: unknown }} outcome `resultJson` is
   *   the result as JSON text, for gateways that have it (it skips JSON.stringify)
   */
  afterToolOutcome(call, outcome) {
    if (outcome === null || typeof outcome !== 'object') {
      throw new LoopGuardError('outcome', 'must be an object with `result` or `error`');
    }
    // OpenClaw's rule (spec/tool-loop.md §1.3): an error that is not undefined wins; an undefined
    // result has no hash and is neither recorded nor observed. JSON cannot carry `undefined`,
    // so that one case is answered here instead of in the component.
    let text;
    const threw = outcome.error !== undefined;
    if (threw) {
      text = json(errorValue(outcome.error), 'outcome.error');
    } else if (outcome.result !== undefined) {
      text = json(outcome.result, 'outcome.result');
    } else if (outcome.resultJson !== undefined) {
      text = requireString(outcome.resultJson, 'outcome.resultJson');
    } else {
      this.#live();
      return { action: 'ignored' };
    }
    this.#live();
    const policy = this.#policy;
    const c = toolCall(call);
    const v = policy.core !== null ? policy.core.record(this.#id, c, text, threw) : jcoRecord(policy, this.#id, c, text, threw);
    if (v === null) throw quickError(policy);
    if (v.tag !== 'abort') return { action: v.tag };
    const message = lastMessage(policy);
    return { action: 'abort', detector: 'compaction_loop_persisted', count: v.val, tool: c.tool, message };
  }

  /**
   * A context compaction succeeded and the run is being retried: arms the post-compaction guard.
   * @param {string} session
   * @param {string} [run]
   * @param {string} [agent]
   */
  afterCompactionRetry(session, run, agent) {
    const v = this.#call((g) =>
      g.compactionRetried(
        requireString(session, 'session'),
        optionalString(run, 'run'),
        optionalString(agent, 'agent'),
      ),
    );
    return v.tag === 'armed' ? { action: 'armed', remaining: v.val } : { action: 'disabled' };
  }

  /** Forget a session (closed, or `/new` gave it a new id). @param {string} session */
  endSession(session) {
    this.#call((g) => g.endSession(requireString(session, 'session')));
  }

  /**
   * A bot-authored inbound message the channel already admitted: allow or suppress.
   * @param {BotMessageInput} msg
   */
  onBotMessage(msg) {
    this.#live();
    const policy = this.#policy;
    const m = botMessage(msg);
    const v = policy.core !== null ? policy.core.checkBot(this.#id, m) : this.#call((g) => g.checkBotMessage(m));
    if (v === null) throw quickError(policy);
    if (v.tag === 'allow') return { action: 'allow' };
    return { action: 'suppress', cooldownUntilMs: Number(v.val.cooldownUntilMs), budget: v.val.budget };
  }

  /**
   * An inbound message to a conversation with a broadcast entry: round 1, a legacy pass or none.
   * @param {GroupThreadInput} thread
   * @param {string} peer the id in the `"<channel>:<peer>"` broadcast key
   * @param {string} text the message text
   */
  startGroupThread(thread, peer, text) {
    const v = this.#call((g) =>
      g.startGroupThread(groupThread(thread), requireString(peer, 'peer'), requireString(text, 'text')),
    );
    if (v.tag === 'round') return { action: 'round', round: v.val.round, participants: v.val.participants };
    if (v.tag === 'legacy') return { action: 'legacy', participants: v.val };
    return { action: 'none' };
  }

  /**
   * The finals of the round just run: the next round or stop.
   * @param {GroupThreadInput} thread
   * @param {{ agent: string, reply?: string | null }[]} replies reply null/absent = passed or failed
   */
  finishGroupRound(thread, replies) {
    if (!Array.isArray(replies)) throw new LoopGuardError('replies', 'must be an array of { agent, reply }');
    const list = replies.map((r, i) => ({
      agent: requireString(r?.agent, `replies[${i}].agent`),
      reply: optionalString(r?.reply, `replies[${i}].reply`),
    }));
    return groupStep(this.#call((g) => g.finishGroupRound(groupThread(thread), list)));
  }

  /** The thread was cancelled: forget it. @param {GroupThreadInput} thread */
  cancelGroupThread(thread) {
    return groupStep(this.#call((g) => g.cancelGroupThread(groupThread(thread))));
  }

  /**
   * Applies trace events (JSON Lines) and returns their decisions (JSON Lines): one boundary
   * crossing for the whole batch.
   * @param {string} jsonl
   * @param {number} [firstLine] 1-based trace line number of the first line of `jsonl`
   */
  applyEvents(jsonl, firstLine = 1) {
    if (!Number.isInteger(firstLine) || firstLine < 1 || firstLine > 0xffffffff) {
      throw new LoopGuardError('firstLine', `must be an integer ≥ 1, not ${String(firstLine)}`);
    }
    return this.#call((g) => g.applyEvents(requireString(jsonl, 'jsonl'), firstLine));
  }

  /** The whole state as a versioned snapshot (bytes owned by the policy). @returns {Uint8Array} */
  exportState() {
    return this.#call((g) => g.exportState());
  }

  /**
   * Replaces the state with a snapshot from `exportState` (this or an older policy). On error the
   * current state is kept.
   * @param {Uint8Array} bytes
   */
  importState(bytes) {
    if (!(bytes instanceof Uint8Array)) throw new LoopGuardError('snapshot', 'must be a Uint8Array (or Buffer)');
    this.#call((g) => g.importState(bytes));
  }

  /** Counters for metrics: tool-loop sessions plus the bot and group guards. */
  stats() {
    const g = this.#call((g) => g.stats());
    const b = this.#call((g) => g.botStats());
    return {
      sessions: g.sessions,
      evictedSessions: Number(g.evictedSessions),
      pairs: b.pairs,
      evictedPairs: Number(b.evictedPairs),
      groupThreads: b.groupThreads,
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
    if (this.#gateway === null) throw new LoopGuardError('gateway', 'this LoopGuard was disposed; create a new one');
    // A trap in a direct call (core-calls.mjs) poisons jco's glue for this instance as well.
    if (this.#policy.core?.trapped) throw new WebAssembly.RuntimeError('wasm trap: cannot enter component instance');
    return this.#gateway;
  }

  /**
   * Runs `fn` on the live gateway through jco's glue: a policy error becomes a LoopGuardError, and
   * a trap also poisons the policy's direct calls, as jco poisons its own.
   * @template T
   * @param {(gateway: any) => T} fn
   * @returns {T}
   */
  #call(fn) {
    const gateway = this.#live();
    return policyCall(() => fn(gateway), this.#policy.core);
  }
}

// ---- conversions (no policy logic below) ----

/** `check-tool-call-quick` through jco's glue (where core-calls.mjs is not used). */
function jcoCheck(policy, id, call) {
  const c = packedCall(call);
  return jcoQuick(() => policy.exports.guard.checkToolCallQuick(id, c.fields, c.session, c.tool, c.run, c.agent, c.callId));
}

/** `record-tool-outcome-quick` through jco's glue. */
function jcoRecord(policy, id, call, text, threw) {
  const c = packedCall(call);
  return jcoQuick(() =>
    policy.exports.guard.recordToolOutcomeQuick(id, c.fields + text, c.session, c.tool, c.run, c.agent, c.callId, c.argsLen, threw),
  );
}

/**
 * Runs a `-quick` tool function through jco's glue: its verdict, or null for the `result`'s
 * error (jco throws it with no payload; the result holds nothing to free).
 */
function jcoQuick(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Error && Object.hasOwn(e, 'payload') && e.payload === undefined) return null;
    throw e;
  }
}

/** Why the last `-quick` call failed (`last-error`), as the packed method's error would say. */
function quickError(policy) {
  const p = policyCall(() => policy.exports.guard.lastError(), policy.core);
  if (p) return new LoopGuardError(p.path, p.reason);
  return new LoopGuardError('policy', 'a call failed and the policy gave no reason (last-error is empty)');
}

/** The message of the warning, block or abort the last `-quick` call returned. */
function lastMessage(policy) {
  return policyCall(() => policy.exports.guard.lastMessage(), policy.core);
}

/**
 * Runs a component call through jco's glue; turns its `result` error payload into a
 * LoopGuardError. A trap also poisons `core`, the same instance's direct calls.
 * @param {import('./core-calls.mjs').CoreCalls | null} [core]
 */
function policyCall(fn, core = null) {
  try {
    return fn();
  } catch (e) {
    if (core !== null && e instanceof WebAssembly.RuntimeError) core.trapped ??= e;
    const p = e?.payload;
    if (p && typeof p.path === 'string' && typeof p.reason === 'string') {
      throw new LoopGuardError(p.path, p.reason, { cause: e });
    }
    throw e;
  }
}

function checkInterface(found, source = 'the policy') {
  if (compatibleLine(found) !== SUPPORTED_INTERFACE) {
    throw new LoopGuardError(
      'interface-version',
      `${source} implements loopguard:policy@${found}, this wrapper needs ${SUPPORTED_INTERFACE}.x; ` +
        'rebuild the policy or update examples/node-gateway',
    );
  }
}

function policyInfo(p) {
  return { version: p.version, interfaceVersion: p.interfaceVersion, sha256: p.sha256, source: p.source };
}

function describePolicy(p) {
  return `loopguard-policy ${p.version}, loopguard:policy@${p.interfaceVersion}, from ${p.source}`;
}

/** Drops a gateway that will not be used; its instance may have trapped, which is not news. */
function disposeQuietly(gateway) {
  try {
    gateway[Symbol.dispose]();
  } catch {
    // the component instance is unusable anyway and goes away with the last reference
  }
}

/** A failed swap: always a LoopGuardError, whose reason says that the old policy is active. */
function swapError(e, kept) {
  if (e instanceof LoopGuardError) return new LoopGuardError(e.path, `${e.reason}; ${kept}`, { cause: e });
  return new LoopGuardError('swap', `${e instanceof Error ? e.message : String(e)}; ${kept}`, { cause: e });
}

function configText(config) {
  if (typeof config === 'string') return config;
  if (config !== null && typeof config === 'object') return json(config, 'config');
  throw new LoopGuardError('config', 'must be JSON/JSON5 text or an object');
}

function toolCall(call) {
  if (call === null || typeof call !== 'object') throw new LoopGuardError('call', 'must be an object');
  return {
    session: requireString(call.session, 'call.session'),
    tool: requireString(call.tool, 'call.tool'),
    argsJson: call.argsJson !== undefined ? requireString(call.argsJson, 'call.argsJson') : json(call.args ?? null, 'call.args'),
    run: optionalString(call.run, 'call.run'),
    agent: optionalString(call.agent, 'call.agent'),
    callId: optionalString(call.callId, 'call.callId'),
  };
}

/** UTF-8 byte length of `s` (native, and cheaper than an ASCII test first). */
function utf8Length(s) {
  return Buffer.byteLength(s);
}

/**
 * A checked tool call laid out for the `-quick` functions through jco's glue: `fields` is
 * session, tool, run, agent, call id and the arguments' JSON text end to end, and each length
 * is a UTF-8 byte length (`undefined` for an absent field). core-calls.mjs lays it out itself.
 * @param {import('./core-calls.mjs').ToolCall} c
 */
function packedCall(c) {
  const opt = (s) => (s === undefined ? undefined : utf8Length(s));
  return {
    fields: c.session + c.tool + (c.run ?? '') + (c.agent ?? '') + (c.callId ?? '') + c.argsJson,
    session: utf8Length(c.session),
    tool: utf8Length(c.tool),
    run: opt(c.run),
    agent: opt(c.agent),
    callId: opt(c.callId),
    argsLen: utf8Length(c.argsJson),
  };
}

function botMessage(msg) {
  if (msg === null || typeof msg !== 'object') throw new LoopGuardError('message', 'must be an object');
  return {
    channel: requireString(msg.channel, 'message.channel'),
    account: requireString(msg.account, 'message.account'),
    conversation: requireString(msg.conversation, 'message.conversation'),
    room: optionalString(msg.room, 'message.room'),
    sender: requireString(msg.sender, 'message.sender'),
    receiver: requireString(msg.receiver, 'message.receiver'),
    tsMs: int64(msg.tsMs, 'message.tsMs'),
    eventId: optionalString(msg.eventId, 'message.eventId'),
  };
}

function groupThread(t) {
  if (t === null || typeof t !== 'object') throw new LoopGuardError('thread', 'must be an object');
  return {
    channel: requireString(t.channel, 'thread.channel'),
    account: requireString(t.account, 'thread.account'),
    conversation: requireString(t.conversation, 'thread.conversation'),
    thread: optionalString(t.thread, 'thread.thread'),
    root: requireString(t.root, 'thread.root'),
  };
}

function groupStep(v) {
  if (v.tag === 'round') return { action: 'round', round: v.val.round, participants: v.val.participants };
  return { action: 'stop', reason: snake(v.val) };
}

/** formatError's Error case (spec/tool-loop.md §1.3): the message, or the name if it is empty. */
function errorValue(error) {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'bigint') return String(error);
  return error;
}

function json(value, path) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new LoopGuardError(path, `cannot be serialized as JSON (${e.message})`, { cause: e });
  }
  return text ?? 'null';
}

function requireString(value, path) {
  if (typeof value !== 'string') throw new LoopGuardError(path, `must be a string, not ${typeName(value)}`);
  return value;
}

function optionalString(value, path) {
  return value === undefined || value === null ? undefined : requireString(value, path);
}

function int64(value, path) {
  if (typeof value === 'bigint') return value;
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new LoopGuardError(path, `must be an integer (milliseconds), not ${typeName(value)} ${String(value)}`);
}

function typeName(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function snake(witName) {
  return witName.replaceAll('-', '_');
}

/**
 * @typedef {{ session: string, tool: string, args?: unknown, argsJson?: string, run?: string,
 *   agent?: string, callId?: string }} ToolCallInput
 * @typedef {{ channel: string, account: string, conversation: string, room?: string,
 *   sender: string, receiver: string, tsMs: number | bigint, eventId?: string }} BotMessageInput
 * @typedef {{ channel: string, account: string, conversation: string, thread?: string,
 *   root: string }} GroupThreadInput
 * @typedef {{ version: string, interfaceVersion: string, sha256: string | null, source: string }} PolicyInfo
 * @typedef {{ from: PolicyInfo, to: PolicyInfo, snapshotBytes: number, prepareMs: number,
 *   switchMs: number }} SwapReport
 */
