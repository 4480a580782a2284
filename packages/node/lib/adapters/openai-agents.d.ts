// loopguard/openai-agents: the policy as tool guardrails of the OpenAI Agents SDK (JS).
import type { CallModelInputFilter, RunContext, ToolInputGuardrailDefinition, ToolOutputGuardrailDefinition } from '@openai/agents';
import type { GateOptions, ToolGate } from './gate.js';

export interface OpenAIAgentsOptions extends GateOptions {
  /** The conversation a call belongs to (default: one session per run, i.e. per RunContext). */
  session?: (data: { context: RunContext<any>; agent: unknown; toolCall: { name: string; arguments: string; callId: string } }) => string;
}

export interface OpenAIAgentsGuard {
  /** The same tools, each function tool with loopguard's input and output guardrail added after its own. */
  tools<T extends unknown[]>(list: T): T;
  /** Checks a call before it runs: a block is `rejectContent`, an end of run `throwException`. */
  readonly inputGuardrail: ToolInputGuardrailDefinition<any>;
  /** Records the outcome of a call that ran. */
  readonly outputGuardrail: ToolOutputGuardrailDefinition<any>;
  /** For `run(agent, input, { callModelInputFilter })`: hands the model the policy's notes. */
  readonly callModelInputFilter: CallModelInputFilter;
  /** The gate that decides. */
  readonly gate: ToolGate;
}

/** A guard for OpenAI Agents SDK runs. Throws a LoopGuardError for a broken config. */
export declare function loopGuard(options?: OpenAIAgentsOptions): OpenAIAgentsGuard;
