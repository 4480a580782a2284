// Types of the adapters' shared core (gate.js), for the framework adapters' declarations.
import type { Config, LoopGuard } from '../../index.js';

/** What a framework adapter takes: a config (default: the agent-facing hosts' one default
 * document, the `cautious` preset) or a guard to share, not both. */
export interface GateOptions {
  /** The user's document; the default document fills in wherever it is silent. */
  config?: Config;
  /** A LoopGuard or StoredLoopGuard to share (its own config applies). */
  guard?: Pick<LoopGuard, 'beforeToolCall' | 'afterToolOutcome'>;
}

export interface GateCall {
  session: string;
  tool: string;
  args?: unknown;
  callId?: string;
  run?: string;
  agent?: string;
}

export type Before = { ticket: string } & ({ run: true } | { run: false; message: string; endRun: boolean });
export interface After {
  note: string | null;
  endRun: boolean;
  message: string | null;
}

export declare const MAX_PENDING: number;

export declare class ToolGate {
  constructor(options?: GateOptions);
  readonly guard: GateOptions['guard'];
  before(call: GateCall): Promise<Before>;
  after(ticket: string, outcome: { result?: unknown; error?: unknown }): Promise<After>;
  readonly pending: number;
}

export declare class OrderedTickets {
  push(session: string, tool: string, ticket: string): void;
  shift(session: string, tool: string): string | undefined;
}

export declare function endsRun(verdict: { action: string; detector?: string }): boolean;
