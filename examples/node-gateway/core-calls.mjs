// The calls a gateway makes on every tool call (`check-tool-call-quick`,
// `record-tool-outcome-quick`) and on every bot message (`check-bot-message-quick`), made
// straight on the policy's core module with the component model's canonical ABI instead of
// through jco's generated glue.
//
// Why: jco 1.35 wraps every export call in its async-task machinery (a task object with its
// promises, a resource-borrow scope, the global current-task record), about 1 µs per call
// whatever the call does, and measures every string with a regex or a loop before encoding it.
// A tool-call decision is two calls, so that glue was a good part of a decision from Node. The
// `-quick` functions were made for callers like this one: their parameters are one string and
// scalars, their result holds nothing to free (no post-return call) and no resource handle is
// lent, so lowering and lifting them by hand is a dozen lines each that follow the canonical ABI:
// - the string is written into guest memory allocated with the module's `cabi_realloc`, which
//   the callee takes over (so the allocation is exactly the UTF-8 length, as jco makes it);
// - an `option<u32>` is two flat values (0/1 and the value), a `u64`/`s64` a BigInt, a `bool` 0/1;
// - the `result<…>` comes back as a pointer into guest memory, laid out as jco reads it.
//
// Used only when the core instance exports the three functions under interface 0.5's names with
// the right arity, plus `memory` and `cabi_realloc`; otherwise `policy.mjs` keeps jco's glue
// (the same decisions, slower). `LOOPGUARD_NODE_GLUE=jco` forces jco's glue, which is how the
// tests hold the two to the same answers. A trap poisons the instance as jco's glue does: every
// later call fails with a `WebAssembly.RuntimeError`.

const CHECK = /^loopguard:policy\/guard@0\.5\.\d+#check-tool-call-quick$/;
const RECORD = /^loopguard:policy\/guard@0\.5\.\d+#record-tool-outcome-quick$/;
const BOT = /^loopguard:policy\/guard@0\.5\.\d+#check-bot-message-quick$/;
const BUDGETS = ['pair', 'burst'];
const ALLOW = Object.freeze({ tag: 'allow' });
const ACTIONS = ['allow', 'warn', 'block'];
const DETECTORS = [
  'generic-repeat',
  'known-poll-no-progress',
  'ping-pong',
  'unknown-tool-repeat',
  'global-circuit-breaker',
  'compaction-loop-persisted',
];
/** The largest scratch buffer kept between calls (bytes). */
const SCRATCH_KEPT = 1 << 20;
const RECORDED = Object.freeze({ tag: 'recorded' });
const IGNORED = Object.freeze({ tag: 'ignored' });

/**
 * The direct calls for the core instance among `instances` that exports the quick functions,
 * or null when none does.
 * @param {WebAssembly.Instance[]} instances every core instance jco created for one component
 * @returns {CoreCalls | null}
 */
export function coreCalls(instances) {
  for (const { exports: ex } of instances) {
    const names = Object.keys(ex);
    const fn = (pattern, arity) => {
      const f = ex[names.find((n) => pattern.test(n))];
      return typeof f === 'function' && f.length === arity ? f : null;
    };
    const check = fn(CHECK, 11);
    const record = fn(RECORD, 13);
    const bot = fn(BOT, 13);
    if (
      check &&
      record &&
      bot &&
      ex.memory instanceof WebAssembly.Memory &&
      typeof ex.cabi_realloc === 'function' &&
      ex.cabi_realloc.length === 4
    ) {
      return new CoreCalls(ex.memory, ex.cabi_realloc, check, record, bot);
    }
  }
  return null;
}

/**
 * A tool call as loopguard.mjs's `toolCall` checked it.
 * @typedef {{ session: string, tool: string, argsJson: string, run?: string, agent?: string,
 *   callId?: string }} ToolCall
 */

/**
 * A bot message as loopguard.mjs's `botMessage` checked it (`tsMs` a BigInt).
 * @typedef {{ channel: string, account: string, conversation: string, room?: string,
 *   sender: string, receiver: string, tsMs: bigint, eventId?: string }} BotMessage
 */

export class CoreCalls {
  #memory;
  #realloc;
  #check;
  #record;
  #bot;
  /** the ArrayBuffer `#bytes` and `#view` look at; memory growth replaces it */
  #buffer = null;
  /** @type {Buffer} */
  #bytes;
  /** @type {DataView} */
  #view;
  /** the lengths `#lower` worked out for the call being made */
  #len = 0;
  #ascii = true;
  #argsLen = 0;
  #fieldLens = [0, 0, 0, 0, 0, 0, 0, 0];
  /** where `#lower` encodes a call's text before copying it into guest memory */
  #scratch = Buffer.allocUnsafe(4096);
  /** @type {Error | null} the trap that poisoned the instance */
  trapped = null;

  /**
   * @param {WebAssembly.Memory} memory
   * @param {Function} realloc `cabi_realloc(old, oldLen, align, len)`
   * @param {Function} check
   * @param {Function} record
   * @param {Function} bot
   */
  constructor(memory, realloc, check, record, bot) {
    this.#memory = memory;
    this.#realloc = realloc;
    this.#check = check;
    this.#record = record;
    this.#bot = bot;
  }

  /**
   * `check-tool-call-quick`: the verdict as jco would lift it, or null for the `result`'s error
   * (then `last-error` says why).
   * @param {bigint} gateway
   * @param {ToolCall} c
   * @returns {{ action: string, detector?: string, count: number, notify: boolean } | null}
   */
  check(gateway, c) {
    const ptr = this.#lower(c, '');
    let ret;
    try {
      const l = this.#fieldLens;
      ret = this.#check(gateway, ptr, this.#len, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]);
    } catch (e) {
      throw this.#trap(e);
    }
    const b = this.#views();
    if (resultTag(b[ret]) === 1) return null;
    const action = ACTIONS[b[ret + 4]];
    if (action === undefined) throw new TypeError('invalid discriminant specified for ToolAction');
    let detector;
    if (optionTag(b[ret + 5]) === 1) {
      detector = DETECTORS[b[ret + 6]];
      if (detector === undefined) throw new TypeError('invalid discriminant specified for Detector');
    }
    return { action, detector, count: this.#view.getUint32(ret + 8, true), notify: bool(b[ret + 12]) };
  }

  /**
   * `record-tool-outcome-quick`: `{ tag: 'recorded' | 'ignored' }` or `{ tag: 'abort', val }` as
   * jco would lift it, or null for the `result`'s error.
   * @param {bigint} gateway
   * @param {ToolCall} c
   * @param {string} text the result (or error) as JSON text
   * @param {boolean} threw
   */
  record(gateway, c, text, threw) {
    const ptr = this.#lower(c, text);
    let ret;
    try {
      const l = this.#fieldLens;
      const argsLen = this.#argsLen;
      ret = this.#record(gateway, ptr, this.#len, l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], argsLen, threw ? 1 : 0);
    } catch (e) {
      throw this.#trap(e);
    }
    const b = this.#views();
    if (resultTag(b[ret]) === 1) return null;
    switch (b[ret + 4]) {
      case 0:
        return RECORDED;
      case 1:
        return IGNORED;
      case 2:
        return { tag: 'abort', val: this.#view.getUint32(ret + 8, true) };
      default:
        throw new TypeError('invalid variant discriminant for OutcomeVerdictQuick');
    }
  }

  /**
   * `check-bot-message-quick`: `{ tag: 'allow' }` or `{ tag: 'suppress', val: { cooldownUntilMs,
   * budget } }` as jco would lift it, or null for the `result`'s error.
   * @param {bigint} gateway
   * @param {BotMessage} m
   */
  checkBot(gateway, m) {
    const { channel, account, conversation, room = '', sender, receiver, eventId = '' } = m;
    const ptr = this.#lowerText(channel + account + conversation + room + sender + receiver + eventId, '', '');
    const ascii = this.#ascii;
    let ret;
    try {
      ret = this.#bot(
        gateway,
        ptr,
        this.#len,
        size(channel, ascii),
        size(account, ascii),
        size(conversation, ascii),
        m.room === undefined ? 0 : 1,
        m.room === undefined ? 0 : size(room, ascii),
        size(sender, ascii),
        size(receiver, ascii),
        m.tsMs,
        m.eventId === undefined ? 0 : 1,
        m.eventId === undefined ? 0 : size(eventId, ascii),
      );
    } catch (e) {
      throw this.#trap(e);
    }
    const b = this.#views();
    if (resultTag(b[ret]) === 1) return null;
    switch (b[ret + 8]) {
      case 0:
        return ALLOW;
      case 1: {
        const budget = BUDGETS[b[ret + 24]];
        if (budget === undefined) throw new TypeError('invalid discriminant specified for Budget');
        return { tag: 'suppress', val: { cooldownUntilMs: this.#view.getBigInt64(ret + 16, true), budget } };
      }
      default:
        throw new TypeError('invalid variant discriminant for BotVerdict');
    }
  }

  /**
   * Writes the call's fields (session, tool, run, agent, call id), its arguments and `text` end
   * to end into guest memory, and sets the lengths the call passes besides the total:
   * `#fieldLens` (session, tool, then each optional field as its two flat values) and
   * `#argsLen`, in UTF-8 bytes.
   */
  #lower(c, text) {
    const { session, tool, argsJson, run = '', agent = '', callId = '' } = c;
    const ptr = this.#lowerText(session + tool + run + agent + callId, argsJson, text);
    const ascii = this.#ascii;
    const lens = this.#fieldLens;
    lens[0] = size(session, ascii);
    lens[1] = size(tool, ascii);
    optional(lens, 2, c.run, ascii);
    optional(lens, 4, c.agent, ascii);
    optional(lens, 6, c.callId, ascii);
    this.#argsLen = size(argsJson, ascii);
    return ptr;
  }

  /**
   * Writes `a`, `b` and `c` end to end into guest memory allocated for them; sets `#len` to
   * their UTF-8 length and `#ascii` to whether every character is ASCII.
   *
   * The text is encoded once, into a scratch buffer with room for the worst case (three bytes
   * per UTF-16 code unit), which gives its exact UTF-8 length for the allocation; then it is
   * copied in. When that length equals the number of code units every character is ASCII (any
   * other takes more bytes than code units), so each field's length is its own `length`; other
   * text is measured field by field. Measuring first (`Buffer.byteLength`) and encoding after
   * was two passes over the text, each slower than the copy, and encoding one concatenated
   * string flattened it first. A lone surrogate becomes U+FFFD, as jco's TextEncoder writes it.
   */
  #lowerText(a, b, c) {
    if (this.trapped) throw new WebAssembly.RuntimeError('wasm trap: cannot enter component instance');
    const units = a.length + b.length + c.length;
    const scratch = this.#scratchFor(units);
    let len = scratch.write(a, 0, 'utf8');
    if (b.length !== 0) len += scratch.write(b, len, 'utf8');
    if (c.length !== 0) len += scratch.write(c, len, 'utf8');
    this.#len = len;
    this.#ascii = len === units;
    if (len === 0) return 1; // the canonical ABI's pointer for an empty string: nothing to free
    let ptr;
    try {
      ptr = this.#realloc(0, 0, 1, len);
    } catch (e) {
      throw this.#trap(e);
    }
    this.#views().set(new Uint8Array(scratch.buffer, scratch.byteOffset, len), ptr);
    return ptr;
  }

  /**
   * A buffer with room for `units` UTF-16 code units as UTF-8. One of up to `SCRATCH_KEPT`
   * bytes is kept for the next call; a larger text gets one of its own.
   */
  #scratchFor(units) {
    const need = units * 3;
    if (need <= this.#scratch.length) return this.#scratch;
    if (need > SCRATCH_KEPT) return Buffer.allocUnsafe(need);
    this.#scratch = Buffer.allocUnsafe(Math.min(SCRATCH_KEPT, Math.max(need, this.#scratch.length * 2)));
    return this.#scratch;
  }

  /** Guest memory as bytes; fresh views after the memory grew (its old buffer is detached). */
  #views() {
    const buffer = this.#memory.buffer;
    if (buffer !== this.#buffer) {
      this.#buffer = buffer;
      this.#bytes = Buffer.from(buffer);
      this.#view = new DataView(buffer);
    }
    return this.#bytes;
  }

  /** A trap leaves the instance in an unknown state: no call may enter it again (as in jco). */
  #trap(e) {
    if (e instanceof WebAssembly.RuntimeError) this.trapped ??= e;
    return e;
  }
}

/** UTF-8 length of `s`, which is its length when the text it is part of is all ASCII. */
function size(s, ascii) {
  return ascii ? s.length : Buffer.byteLength(s, 'utf8');
}

/** An `option<u32>` length as its two flat values at `lens[at]`, `lens[at + 1]`. */
function optional(lens, at, field, ascii) {
  if (field === undefined) {
    lens[at] = 0;
    lens[at + 1] = 0;
  } else {
    lens[at] = 1;
    lens[at + 1] = size(field, ascii);
  }
}

function resultTag(tag) {
  if (tag > 1) throw new TypeError('invalid variant discriminant for expected');
  return tag;
}

function optionTag(tag) {
  if (tag > 1) throw new TypeError('invalid variant discriminant for option');
  return tag;
}

function bool(v) {
  if (v > 1) throw new TypeError('invalid variant discriminant for bool');
  return v === 1;
}
