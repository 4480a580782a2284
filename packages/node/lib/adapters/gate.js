// The one mapping every framework adapter shares: a tool call's before and after points onto
// the policy's `beforeToolCall` / `afterToolOutcome`, and the verdicts onto four things an
// adapter can do in its framework: let the call run, refuse it with a text the model reads,
// hand the model a note (a warning, once), end the run. No loop rule lives here or in an
// adapter: the policy decides; this file only keeps the bookkeeping between the two points.
import { LoopGuard } from '../guard.js';
import { agentConfig } from '../agent.js';
import { LoopGuardError } from '../errors.js';

/** How many calls may wait between their before and after points (a framework that never
 * reports an outcome must not grow this without bound); the oldest is forgotten first. */
export const MAX_PENDING = 4096;

/**
 * @typedef {{ session: string, tool: string, args?: unknown, callId?: string, run?: string, agent?: string }} GateCall
 * @typedef {{ run: true } | { run: false, message: string, endRun: boolean }} Before
 *   `run: false`: refuse the call with `message` as its result; `endRun`: and end the run
 * @typedef {{ note: string | null, endRun: boolean, message: string | null }} After
 *   `note`: a warning to hand the model once (with this result, or before its next step);
 *   `endRun`: end the run, with `message`
 */

export class ToolGate {
  #guard;
  /** ticket → the call as the policy saw it, waiting for its outcome */
  #pending = new Map();
  /** ticket → the warning text queued for this call's outcome */
  #notes = new Map();
  #tickets = 0;

  /**
   * @param {{ config?: string | object, guard?: { beforeToolCall: Function, afterToolOutcome: Function } }} [options]
   *   `guard`: a LoopGuard or StoredLoopGuard to share (its own config applies); otherwise a
   *   LoopGuard of `config` with the agent-facing hosts' default document filled in.
   */
  constructor(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw new LoopGuardError('input', 'options', 'must be an object');
    }
    if (options.guard !== undefined && options.config !== undefined) {
      throw new LoopGuardError('config', 'options.config', 'give a config or a guard, not both (a guard has its own)');
    }
    this.#guard = options.guard ?? new LoopGuard(agentConfig(options.config ?? {}));
  }

  /** The guard that decides. */
  get guard() {
    return this.#guard;
  }

  /**
   * A tool call is about to run. Returns a ticket for `after` and what to do.
   * @param {GateCall} call
   * @returns {Promise<{ ticket: string } & Before>}
   */
  async before(call) {
    const verdict = await this.#guard.beforeToolCall(call);
    const ticket = `t${++this.#tickets}`;
    if (verdict.action === 'block') {
      return { ticket, run: false, message: verdict.message, endRun: endsRun(verdict) };
    }
    remember(this.#pending, ticket, call);
    if (verdict.action === 'warn' && verdict.notify) remember(this.#notes, ticket, verdict.message);
    return { ticket, run: true };
  }

  /**
   * The call of `ticket` ran: `{ result }` or `{ error }`. A refused call has no outcome: never
   * call this for one (the policy would count the adapter's own refusal as the tool's answer).
   * @param {string} ticket
   * @param {{ result?: unknown, error?: unknown }} outcome
   * @returns {Promise<After>}
   */
  async after(ticket, outcome) {
    const call = this.#pending.get(ticket);
    if (call === undefined) return { note: null, endRun: false, message: null };
    this.#pending.delete(ticket);
    const note = this.#notes.get(ticket) ?? null;
    this.#notes.delete(ticket);
    const verdict = await this.#guard.afterToolOutcome(call, outcome);
    if (verdict.action === 'abort') return { note, endRun: true, message: verdict.message };
    return { note, endRun: false, message: null };
  }

  /** Calls waiting for their outcome (for tests and stats). */
  get pending() {
    return this.#pending.size;
  }
}

/**
 * Pairs outcomes with calls by order where a framework passes no call id: tickets wait per
 * (session, tool) in the order the calls were checked, the first to finish takes the first.
 */
export class OrderedTickets {
  #queues = new Map();
  #size = 0;

  push(session, tool, ticket) {
    const key = `${session}\u0000${tool}`;
    const queue = this.#queues.get(key) ?? [];
    queue.push(ticket);
    this.#queues.set(key, queue);
    if (++this.#size > MAX_PENDING) this.#dropOldest();
  }

  shift(session, tool) {
    const key = `${session}\u0000${tool}`;
    const queue = this.#queues.get(key);
    if (!queue) return undefined;
    const ticket = queue.shift();
    this.#size--;
    if (queue.length === 0) this.#queues.delete(key);
    return ticket;
  }

  #dropOldest() {
    const [key, queue] = this.#queues.entries().next().value;
    queue.shift();
    this.#size--;
    if (queue.length === 0) this.#queues.delete(key);
  }
}

/** The policy's ladder: the agent sent a blocked call again and again (the same rule as the
 * Rust host's `ToolVerdict::ends_run`). */
export function endsRun(verdict) {
  return verdict.action === 'block' && verdict.detector === 'ladder';
}

function remember(map, key, value) {
  map.set(key, value);
  if (map.size > MAX_PENDING) map.delete(map.keys().next().value);
}
