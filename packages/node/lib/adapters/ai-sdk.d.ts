// loopguard/ai-sdk: the policy between the model and the tools of the Vercel AI SDK (ai 7).
import type { GateOptions, ToolGate } from './gate.js';

export interface AiSdkOptions extends GateOptions {
  /** The conversation a call belongs to (default: one session per `wrap()`: one
   * generateText/streamText call, or one ToolLoopAgent). */
  session?: (ctx: { runtimeContext: any; toolCall: { toolName: string; toolCallId: string; input: unknown }; messages: unknown[] }) => string;
}

export interface AiSdkGuard {
  /** The settings of one generateText / streamText call or one ToolLoopAgent, with loopguard's
   * toolApproval, onToolExecutionEnd, prepareStep and stopWhen added (yours still run). */
  wrap<S extends object>(settings: S): S & { toolApproval: any; onToolExecutionEnd: any; prepareStep: any; stopWhen: any };
  /** The gate that decides (its `guard`, the calls waiting for their outcome). */
  readonly gate: ToolGate;
}

/** A guard for AI SDK runs. Throws a LoopGuardError for a broken config. */
export declare function loopGuard(options?: AiSdkOptions): AiSdkGuard;
