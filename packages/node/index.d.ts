// Types of the `loopguard` package (loopguard:policy@1.x). Every failure is a LoopGuardError.

/**
 * Why a call failed: the policy's own kinds, `policy` for the policy file or instance, `store`
 * for a StoredLoopGuard decision refused because the store failed and `storeFailClosed` is set.
 */
export type ErrorKind = 'config' | 'input' | 'snapshot' | 'too-large' | 'policy' | 'store';

export class LoopGuardError extends Error {
  constructor(kind: ErrorKind, path: string, reason: string, options?: ErrorOptions);
  readonly name: 'LoopGuardError';
  /** What kind of failure: bad config, bad input, a bad snapshot, an oversized value, or the policy. */
  readonly kind: ErrorKind;
  /** Where: a config path (`tools.loopDetection.historySize`), an argument (`call.args-json`), a file. */
  readonly path: string;
  /** What is wrong and how to fix it. */
  readonly reason: string;
}

/** An OpenClaw-style config document: JSON/JSON5 text or an object (`{}` = defaults). */
export type Config = string | Record<string, unknown>;

export interface ToolCallInput {
  /** The session key: all state of one agent conversation hangs off it. */
  session: string;
  /** The tool name after the gateway's own alias mapping. */
  tool: string;
  /** The call's arguments (serialized with JSON.stringify at each hook); `argsJson` instead skips that. */
  args?: unknown;
  /** The arguments as JSON text. */
  argsJson?: string;
  /** The run id that scopes detection. */
  run?: string;
  /** The agent id that selects a per-agent override. */
  agent?: string;
  /** The provider's tool-call id. */
  callId?: string;
}

/** The detectors' names, as in decision lines (a newer policy may add others). */
export type Detector =
  | 'generic_repeat'
  | 'known_poll_no_progress'
  | 'ping_pong'
  | 'unknown_tool_repeat'
  | 'global_circuit_breaker'
  | 'argument_churn'
  | (string & {});

export type ToolVerdict =
  | { action: 'allow'; count: number; notify: boolean }
  | {
      action: 'warn' | 'block';
      detector: Detector;
      count: number;
      /** For a block: the exact text to hand to the model as the tool result. */
      message: string;
      /** For a warning: newly emitted under the bucketed de-duplication (tell the model). */
      notify: boolean;
    };

export interface ToolOutcomeInput {
  /** What the tool returned. */
  result?: unknown;
  /** The result as JSON text (skips JSON.stringify). */
  resultJson?: string;
  /** What the tool threw (an Error's message is used). */
  error?: unknown;
}

export type OutcomeVerdict =
  | { action: 'recorded' }
  | { action: 'ignored' }
  | { action: 'abort'; detector: 'compaction_loop_persisted' | (string & {}); count: number; tool: string; message: string };

export type CompactionVerdict = { action: 'armed'; remaining: number } | { action: 'disabled' };

export interface BotMessageInput {
  channel: string;
  account: string;
  conversation: string;
  /** Room/space/Slack-channel key for per-conversation overrides (default: conversation). */
  room?: string;
  sender: string;
  receiver: string;
  /** The platform event timestamp in milliseconds. */
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
  root: string;
}

export type GroupStart =
  | { action: 'round'; round: number; participants: string[] }
  | { action: 'legacy'; participants: string[] }
  | { action: 'none' };

export type GroupStep =
  | { action: 'round'; round: number; participants: string[] }
  | { action: 'stop'; reason: 'all_passed' | 'max_rounds' | 'max_turns' | 'no_eligible' | 'cancelled' };

export interface Stats {
  sessions: number;
  evictedSessions: number;
  botPairs: number;
  evictedPairs: number;
  groupThreads: number;
  /** The policy instance's linear memory, bytes. */
  memoryBytes: number;
}

export interface PolicyInfo {
  version: string;
  interfaceVersion: string;
  /** The component's blake3 digest (what `expectDigest` pins). */
  blake3: string;
  source: string;
}

export interface SwapReport {
  from: PolicyInfo;
  to: PolicyInfo;
  snapshotBytes: number;
  prepareMs: number;
  switchMs: number;
}

export interface LoadOptions {
  /** Refuse the file unless its blake3 digest (hex) is this. */
  expectDigest?: string;
}

/**
 * OpenTelemetry metrics (docs/METRICS.md). The guard records when it is given a provider, or
 * when the application registered a global meter provider with `@opentelemetry/api` before the
 * guard was made; otherwise nothing is recorded and OpenTelemetry is never loaded.
 */
export interface MetricsOptions {
  /** An OpenTelemetry `MeterProvider`; `null`: no metrics even with a global one. Default: the global one, if any. */
  meterProvider?: { getMeter(name: string, version?: string): unknown } | null;
  /** The `host` attribute (default `node`; the OpenClaw plugin says `openclaw`): one name per deployment. */
  metricsHost?: string;
}

export class LoopGuard {
  /** A gateway of the policy shipped in this package. */
  constructor(config?: Config, options?: MetricsOptions);
  /** A gateway of another policy component, in its own instance. */
  static load(wasm: string | URL | Uint8Array | ArrayBuffer, config?: Config, options?: LoadOptions & MetricsOptions): Promise<LoopGuard>;
  /**
   * Compiles the policy's hot code now (made-up decisions on a scratch gateway of the same
   * policy and config; this guard's state is untouched), so the first tool calls do not pay for
   * V8's compiler. `load` and `swap` do it themselves. `rounds`: made-up tool calls (default
   * 200; one, ~0.3 ms, brings back code that went cold while the process did other work).
   */
  warmUp(options?: { rounds?: number }): void;
  /** Hot swap with every count carried over; on failure the active policy stays. */
  swap(wasm: string | URL | Uint8Array | ArrayBuffer, options?: LoadOptions): Promise<SwapReport>;
  readonly policy: PolicyInfo;
  beforeToolCall(call: ToolCallInput): ToolVerdict;
  afterToolOutcome(call: ToolCallInput, outcome: ToolOutcomeInput): OutcomeVerdict;
  afterCompactionRetry(session: string, run?: string, agent?: string): CompactionVerdict;
  endSession(session: string): void;
  onBotMessage(message: BotMessageInput): BotVerdict;
  startGroupThread(thread: GroupThreadInput, peer: string, text: string): GroupStart;
  finishGroupRound(thread: GroupThreadInput, replies: { agent: string; reply?: string | null }[]): GroupStep;
  cancelGroupThread(thread: GroupThreadInput): GroupStep;
  /** Trace events (JSON Lines) in, decision lines out. */
  applyEvents(jsonl: string, firstLine?: number): string;
  exportState(): Uint8Array;
  importState(snapshot: Uint8Array): void;
  stats(): Stats;
  readonly disposed: boolean;
  [Symbol.dispose](): void;
}

/** Replays a whole trace on a fresh gateway of the default policy: `loopguard replay`'s output. */
export function replay(config: Config, trace: string): string;

/** The default policy's versions and digest. */
export function versions(): { policy: string; interface: string; blake3: string };

/** The agent-facing hosts' one default document (`loopguard hook`, `loopguard mcp`, the LiteLLM guardrail, the framework adapters). */
export function agentDefaults(): Record<string, unknown>;
/** `config` (an object or JSON text) with `agentDefaults()` filled in where it is silent, as JSON text. */
export function agentConfig(config?: Config): string;

/** Where a Supervisor keeps the policy. */
export type Isolation = 'inline' | 'worker';

export interface SupervisorOptions extends MetricsOptions {
  /** The policy's config (default `{}`). */
  config?: Config;
  /** A policy component (path or bytes) instead of the package's own. A path is read at start. */
  policy?: string | Uint8Array | null;
  /** Refuse a policy (at start, or at a swap) unless its blake3 digest (hex) is this. */
  expectDigest?: string | null;
  /**
   * `inline`: on the caller's thread (no thread hop; a spinning policy cannot be stopped).
   * `worker`: in a worker thread, every call behind `callTimeoutMs`. Default: inline for the
   * package's own policy, worker for a `policy` file.
   */
  isolation?: Isolation;
  /** Deadline of one call in the worker (default 250). */
  callTimeoutMs?: number;
  /** How long the first call waits for the worker's policy to load (default 5000). */
  startTimeoutMs?: number;
  /** The state to start from (else `stateFile`'s). */
  snapshot?: Uint8Array | null;
  /** A file the state is saved to (`save`, `stop`, every `saveEveryMs`) and read from at start. */
  stateFile?: string | null;
  /** Save a changed state this often (0: only on `save`/`stop`; default 0). */
  saveEveryMs?: number;
  /** With `policy` a path: check the file this often and hot-swap a changed one (0: off; default 0). */
  watchPolicyMs?: number;
  /** Every event: `ready`, `load-failed`, `trap`, `timeout`, `paused`, `swapped`, `swap-refused`, `state-read`, `state-written`, … */
  onEvent?: (event: SupervisorEvent) => void;
}

export interface SupervisorEvent {
  level: 'info' | 'warn' | 'error';
  event: string;
  /** One line for a log. */
  message: string;
  [field: string]: unknown;
}

/** A supervised call's answer: never thrown, so the caller applies its fail mode. */
export type CallResult<T> =
  | { ok: true; value: T }
  | { ok: false; reason: 'error' | 'trap' | 'timeout' | 'unavailable'; error: LoopGuardError };

/** The LoopGuard methods a Supervisor forwards, by name. */
export type SupervisedCall = 'beforeToolCall' | 'afterToolOutcome' | 'afterCompactionRetry' | 'endSession' | 'onBotMessage' | 'startGroupThread' | 'finishGroupRound' | 'cancelGroupThread' | 'applyEvents' | 'exportState' | 'importState' | 'stats' | 'policy' | 'warmUp';

/**
 * A LoopGuard that cannot take its host down: inline or in a worker thread, with a deadline per
 * call (worker), restarts from the last snapshot after a trap or a missed deadline (three within
 * a minute pause it for 30 s), hot swap (also of a watched file) and a state file.
 */
export class Supervisor {
  constructor(options?: SupervisorOptions);
  readonly isolation: Isolation;
  readonly ready: boolean;
  /** What readiness reported; null while not ready. */
  readonly info: { policy: PolicyInfo; imported: boolean; importError: { kind: ErrorKind; path: string; reason: string } | null; warmMs: number } | null;
  /** True when the state changed since the state file was last written. */
  readonly dirty: boolean;
  readonly failures: { timeouts: number; traps: number; errors: number; restarts: number };
  /** The restart point (at most a second old while calls come). */
  readonly lastSnapshot: Uint8Array | null;
  /** Outcomes queued by `afterToolOutcomeLater` and not yet recorded. */
  readonly pendingOutcomes: number;
  health(): { ready: boolean; isolation: Isolation; policy: PolicyInfo | null; failures: Supervisor['failures']; paused: boolean; startError: LoopGuardError | null };
  /** Starts the policy (calls start it too). */
  start(): void;
  call(op: 'beforeToolCall', call: ToolCallInput): CallResult<ToolVerdict>;
  call(op: 'afterToolOutcome', call: ToolCallInput, outcome: ToolOutcomeInput): CallResult<OutcomeVerdict>;
  call(op: 'onBotMessage', message: BotMessageInput): CallResult<BotVerdict>;
  call(op: 'stats'): CallResult<Stats>;
  call(op: SupervisedCall, ...args: unknown[]): CallResult<any>;
  /** Records an outcome off the tool call's path: before the next call, at `flushOutcomes`, or within 250 ms. */
  afterToolOutcomeLater(call: ToolCallInput, outcome: ToolOutcomeInput, done?: (result: CallResult<OutcomeVerdict>, at: string, ms: number) => void): void;
  flushOutcomes(at?: string): number;
  snapshot(): Uint8Array | null;
  /** Writes the state file if the state changed (or `snapshot` is given); returns whether it wrote. */
  save(snapshot?: Uint8Array): boolean;
  swap(policy: string | Uint8Array, options?: { expectDigest?: string | null }): Promise<{ ok: true; value: SwapReport } | { ok: false; error: LoopGuardError }>;
  /** Stops the policy and timers (saving a changed state unless `save: false`); returns the last snapshot. */
  stop(options?: { save?: boolean }): Uint8Array | null;
}

export interface StoreOptions extends MetricsOptions {
  /**
   * Where the state lives: `redis://[user:pass@]host:port[/db]` or `rediss://…` (Valkey or
   * Redis >= 7.0, shared by the replicas), a cluster `redis+cluster://host:port,host:port`
   * (`rediss+cluster://…`), or `memory` (this process: the same path, one node).
   */
  store: string;
  /** Prefix of every store key (default `lg:1:`); a key is `<prefix>{<state key>}`. */
  storePrefix?: string;
  /** Time to live of every write, seconds (default 3600): longer than the longest window + cooldown. */
  storeTtlS?: number;
  /** How long a decision waits for the store before it is made on local state, ms (default 20). */
  storeDeadlineMs?: number;
  /** When the store fails: refuse the decision (a LoopGuardError of kind `store`) instead of deciding on local state. */
  storeFailClosed?: boolean;
  /** With a `rediss://` store: the CA (PEM file) the server's certificate must chain to, instead of Node's roots. */
  storeCa?: string;
  /** With a `rediss://` store: a client certificate (PEM file) for a server that asks for one; needs `storeKey`. */
  storeCert?: string;
  /** The private key (PEM file) of `storeCert`. */
  storeKey?: string;
  /** More ioredis options (`tls`, `username`, `password`, …); the store's own timeouts and queueing win. */
  redisOptions?: Record<string, unknown>;
  /** Where the one line per failure episode goes (default: stderr). */
  log?: (message: string) => void;
}

/** One decision of a StoredLoopGuard. */
export interface StoredDecision {
  /** The decision line (as `applyEvents` writes it); null when refused. */
  decision: string | null;
  /** The state key it was decided on (`bot["a","c"]`, `session["s"]`, `group[…]`). */
  key: string;
  /** The key's version after the write: the commit order of the key's decisions. */
  version: number;
  /** On the store's state, on this replica's local state (the store failed), or refused. */
  via: 'store' | 'local' | 'refused';
  /** Compare-and-set conflicts retried. */
  retries: number;
}

export interface StoreStats {
  /** `memory` or the store's URL without credentials. */
  backend: string;
  onStore: number;
  onLocal: number;
  refused: number;
  casRetries: number;
  storeErrors: number;
  unreadable: number;
  episodes: number;
  /** True while a failure episode lasts. */
  degraded: boolean;
  localKeys: number;
}

/**
 * One replica of a scaled-out gateway: the same calls as LoopGuard, each deciding on its key's
 * state in a store the replicas share (read, decide, compare-and-set, retry on conflict), so the
 * budgets count across replicas. Calls return Promises. A store failure never rejects a call: the
 * decision is made on local state (or refused with `storeFailClosed`) and counted in `stats()`.
 */
export class StoredLoopGuard {
  constructor(config: Config, options: StoreOptions);
  static load(wasm: string | URL | Uint8Array | ArrayBuffer, config: Config, options: StoreOptions & LoadOptions): Promise<StoredLoopGuard>;
  readonly policy: PolicyInfo;
  /** Compiles the policy's hot code now (made-up decisions; the store and the state untouched). */
  warmUp(options?: { rounds?: number }): void;
  /** One trace event (a JSON line) decided on its key's state. */
  decide(event: string, line?: number): Promise<StoredDecision>;
  beforeToolCall(call: ToolCallInput): Promise<ToolVerdict>;
  afterToolOutcome(call: ToolCallInput, outcome: ToolOutcomeInput): Promise<OutcomeVerdict>;
  afterCompactionRetry(session: string, run?: string, agent?: string): Promise<CompactionVerdict>;
  /** Forgets the session's local state; its stored state expires with the TTL. */
  endSession(session: string): void;
  onBotMessage(message: BotMessageInput): Promise<BotVerdict>;
  startGroupThread(thread: GroupThreadInput, peer: string, text: string): Promise<GroupStart>;
  finishGroupRound(thread: GroupThreadInput, replies: { agent: string; reply?: string | null }[]): Promise<GroupStep>;
  cancelGroupThread(thread: GroupThreadInput): Promise<GroupStep>;
  applyEvents(jsonl: string, firstLine?: number): Promise<string>;
  stats(): StoreStats;
  readonly closed: boolean;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A tool call as a framework or CLI plugin hands it to `ToolGate`. */
export interface GateCall { session: string; tool: string; args?: unknown; callId?: string; run?: string; agent?: string }
/** The one before/after mapping every adapter and plugin shares (lib/adapters/gate.js). */
export class ToolGate {
  constructor(options?: { config?: Config; guard?: { beforeToolCall: Function; afterToolOutcome: Function } });
  readonly guard: { beforeToolCall: Function; afterToolOutcome: Function };
  /** `run: false`: refuse the call with `message` as its result; `endRun`: and end the run. */
  before(call: GateCall): Promise<{ ticket: string } & ({ run: true } | { run: false; message: string; endRun: boolean })>;
  /** Never for a refused call. `note`: a warning to hand the model once; `endRun`: end the run. */
  after(ticket: string, outcome: { result?: unknown; error?: unknown }): Promise<{ note: string | null; endRun: boolean; message: string | null }>;
  readonly pending: number;
}
/** Pairs outcomes with calls by order where no call id is given. */
export class OrderedTickets {
  push(session: string, tool: string, ticket: string): void;
  shift(session: string, tool: string): string | undefined;
}
