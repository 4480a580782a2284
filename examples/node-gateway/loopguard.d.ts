// Types for loopguard.mjs: the LoopGuard wrapper around the loopguard policy component.
// Enum-like strings use the vocabulary of the decision lines (`generic_repeat`, `all_passed`).

/** The WIT interface (major.minor) this wrapper accepts. */
export const SUPPORTED_INTERFACE: string;
/** The policy's own version (the guest crate version). */
export const policyVersion: string;
/** The WIT interface version the loaded policy implements. */
export const interfaceVersion: string;

/** Bad config, malformed input or an unreadable snapshot. `message` is `<path>: <reason>`. */
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

/** Replays a trace on a fresh gateway: the same bytes `loopguard replay` prints. */
export function replay(config: string | object, trace: string): string;

/** All loop-guard state of one gateway process. */
export class LoopGuard implements Disposable {
  /** @param config OpenClaw-style config as JSON/JSON5 text or an object; default `{}`. */
  constructor(config?: string | object);
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
