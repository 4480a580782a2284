// loopguard/langchain: the policy as a LangChain.js `createAgent` middleware (langchain 1.x).
import type { AgentMiddleware, ToolCallRequest } from 'langchain';
import type { GateOptions, ToolGate } from './gate.js';

export interface LangChainOptions extends GateOptions {
  /** The conversation a call belongs to (default: `configurable.thread_id`; without one, one
   * session per middleware). */
  session?: (request: ToolCallRequest) => string;
}

/** The middleware for `createAgent({ middleware: [...] })`. Throws a LoopGuardError for a
 * broken config. `gate`: the gate that decides. */
export declare function loopGuardMiddleware(options?: LangChainOptions): AgentMiddleware & { readonly gate: ToolGate };
