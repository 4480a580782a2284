// loopguard/mastra: the policy as a Mastra agent's tool hooks and input processor (@mastra/core 1.x).
import type { Processor } from '@mastra/core/processors';
import type { ToolHooks } from '@mastra/core/tools';
import type { GateOptions, ToolGate } from './gate.js';

export interface MastraOptions extends GateOptions {
  /** The conversation a call belongs to (default: the memory thread, `context.agent.threadId`;
   * else one session per RequestContext, i.e. per generate/stream call). */
  session?: (ctx: { toolName: string; input: unknown; context: any }) => string;
}

export interface MastraGuard {
  /** For `new Agent({ hooks })` (or a call's `hooks`): checks each call, records its outcome. */
  readonly hooks: Required<Pick<ToolHooks, 'beforeToolCall' | 'afterToolCall'>>;
  /** For `new Agent({ inputProcessors: [...] })`: hands the model the notes, ends the run. */
  readonly processor: Processor<'loopguard'>;
  /** The gate that decides. */
  readonly gate: ToolGate;
}

/** A guard for Mastra agents. Throws a LoopGuardError for a broken config. */
export declare function loopGuard(options?: MastraOptions): MastraGuard;
