// Types for loopguard.mjs: the LoopGuard wrapper around the loopguard policy component.
// Enum-like strings use the vocabulary of the decision lines (`generic_repeat`, `all_passed`).

/** The WIT interface (major.minor) this wrapper accepts. */
export const SUPPORTED_INTERFACE: string;
/** The default policy's own version (the guest crate version). */
export const policyVersion: string;
/** The WIT interface version the default policy (generated/) implements. */
export const interfaceVersion: string;

/**
 * Bad config, malformed input, an unreadable snapshot, or a policy file that cannot be loaded or
 * swapped in (`policy`, `interface-version`). `message` is `<path>: <reason>`.
 */
export class LoopGuardError extends Error {
  constructor(path: string, reason: string, options?: ErrorOptions);
  /** Where: a config path, `line 3: args`, `call.args-json`, ... */
  readonly path: string;
  /** What is wrong and how to fix it. */
  readonly reason: string;
}

export type Detector =
  | 'generic_repeat'
  | 'known_poll_no_progress'
  | 'ping_pong'
  | 'unknown_tool_repeat'
  | 'global_circuit_breaker'
  | 'compaction_loop_persisted'
  | (string & {});

export interface ToolCallInput {
  /** The session key: all state of one agent conversation hangs off it. */
  session: string;
  /** The tool name after the gateway's own alias mapping. */
  tool: string;
  /** The arguments (serialized with JSON.stringify; absent = null). */
  args?: unknown;
  /** The arguments as JSON text, when the gateway already has it (skips JSON.stringify). */
  argsJson?: string;
  run?: string;
  agent?: string;
  callId?: string;
}

/** Exactly one of them: an `error` that is not undefined wins; an undefined result is ignored. */
export interface ToolOutcomeInput {
  result?: unknown;
  /** The result as JSON text, when the gateway already has it (skips JSON.stringify); used when
   * `result` is undefined. */
  resultJson?: string;
  /** A string, a number, an Error (its message is used) or any JSON value. */
  error?: unknown;
}

export interface ToolVerdict {
  action: 'allow' | 'warn' | 'block';
  /** Absent for `allow`. */
  detector?: Detector;
  /** The streak or repeat count the detector saw (0 for `allow`). */
  count: number;
  /** The message to log (`warn`) or to hand to the model as the tool result (`block`). */
  message?: string;
  /** For `warn`: true when this warning is newly emitted (bucketed de-duplication). */
  notify: boolean;
}

export type OutcomeVerdict =
  | { action: 'recorded' }
  | { action: 'ignored' }
  | { action: 'abort'; detector: Detector; count: number; tool: string; message: string };

export type CompactionVerdict = { action: 'armed'; remaining: number } | { action: 'disabled' };

export interface BotMessageInput {
  channel: string;
  account: string;
  conversation: string;
  /** Room/space/Slack-channel key for per-conversation overrides (default: conversation). */
  room?: string;
  sender: string;
  receiver: string;
  /** Platform event time in milliseconds (number or bigint). */
  tsMs: number | bigint;
  eventId?: string;
}

export type BotVerdict =
  | { action: 'allow' }
  | { action: 'suppress'; cooldownUntilMs: number; budget: 'pair' | 'burst' };

export interface GroupThreadInput {
  channel: string;
  account: string;
  conversation: string;
  thread?: string;
  /** The root inbound message id. */
  root: string;
}

export interface GroupReplyInput {
  agent: string;
  /** The final reply; null/absent when the agent passed (NO_REPLY) or failed. */
  reply?: string | null;
}

export type GroupStart =
  | { action: 'round'; round: number; participants: string[] }
  | { action: 'legacy'; participants: string[] }
  | { action: 'none' };

export type StopReason = 'all_passed' | 'max_rounds' | 'max_turns' | 'no_eligible' | 'cancelled';

export type GroupStep =
  | { action: 'round'; round: number; participants: string[] }
  | { action: 'stop'; reason: StopReason };

export interface Stats {
  /** Agent sessions with state. */
  sessions: number;
  /** Sessions evicted because the session cap was reached. */
  evictedSessions: number;
  /** Bot pairs tracked. */
  pairs: number;
  /** Pairs evicted by `loopguard.maxPairs`. */
  evictedPairs: number;
  /** Group threads in progress. */
  groupThreads: number;
}

/** Which policy a LoopGuard runs. */
export interface PolicyInfo {
  /** The policy's own version (the guest crate version). */
  version: string;
  /** The WIT interface version it implements (`0.2.0`). */
  interfaceVersion: string;
  /** sha256 of the component's bytes (null for generated/ without its stamp). */
  sha256: string | null;
  /** The path it was loaded from, `<N bytes>`, or `generated/ (...)` for the default policy. */
  source: string;
}

/** What a successful `swap` did. */
export interface SwapReport {
  from: PolicyInfo;
  to: PolicyInfo;
  /** Size of the snapshot that carried the state over. */
  snapshotBytes: number;
  /** Loading, compiling, instantiating and creating the new gateway (the old one answered meanwhile). */
  prepareMs: number;
  /** exportState + importState + the switch: the time calls had to wait. */
  switchMs: number;
}

/** A policy component: a path, a file URL, or its bytes. */
export type PolicySource = string | URL | Uint8Array | ArrayBuffer;

/** Replays a trace on a fresh gateway of the default policy: the same bytes `loopguard replay` prints. */
export function replay(config: string | object, trace: string): string;

/** All loop-guard state of one gateway process. */
export class LoopGuard implements Disposable {
  /**
   * A gateway of the default policy (generated/, transpiled at build time).
   * @param config OpenClaw-style config as JSON/JSON5 text or an object; default `{}`.
   */
  constructor(config?: string | object);
  /**
   * A gateway of the policy component in `wasm`, in its own component instance (transpiled by jco
   * in a worker thread unless the same bytes were loaded before). Rejects with a LoopGuardError.
   */
  static load(wasm: PolicySource, config?: string | object): Promise<LoopGuard>;
  /**
   * Hot swap to the policy in `wasm` with the same config: the state moves over via
   * exportState/importState and the new policy takes over atomically. A policy with another
   * interface major (0.x: `0.minor`) is refused. On any failure the old policy stays active and
   * the promise rejects with a LoopGuardError. Swaps on one guard run one after the other.
   */
  swap(wasm: PolicySource): Promise<SwapReport>;
  /** The active policy. */
  readonly policy: PolicyInfo;
  beforeToolCall(call: ToolCallInput): ToolVerdict;
  afterToolOutcome(call: ToolCallInput, outcome: ToolOutcomeInput): OutcomeVerdict;
  afterCompactionRetry(session: string, run?: string, agent?: string): CompactionVerdict;
  endSession(session: string): void;
  onBotMessage(msg: BotMessageInput): BotVerdict;
  startGroupThread(thread: GroupThreadInput, peer: string, text: string): GroupStart;
  finishGroupRound(thread: GroupThreadInput, replies: GroupReplyInput[]): GroupStep;
  cancelGroupThread(thread: GroupThreadInput): GroupStep;
  /** Trace events (JSON Lines) in, decisions (JSON Lines) out, in one boundary crossing. */
  applyEvents(jsonl: string, firstLine?: number): string;
  exportState(): Uint8Array;
  importState(bytes: Uint8Array): void;
  stats(): Stats;
  readonly disposed: boolean;
  [Symbol.dispose](): void;
}
