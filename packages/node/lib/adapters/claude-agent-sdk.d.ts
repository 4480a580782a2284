// Types of `loopguard/claude-agent-sdk`: the `hooks` option of the Claude Agent SDK's `query()`.
// Written without importing the SDK's types, so this package does not depend on the SDK.
import type { Config } from '../../index.js';

/** A hook callback as the SDK calls it: `(input, toolUseID, { signal })`. */
export type LoopGuardHookCallback = (
  input: any,
  toolUseID: string | undefined,
  options: { signal: AbortSignal },
) => Promise<Record<string, unknown>>;

export interface LoopGuardHookMatcher {
  matcher?: string;
  hooks: LoopGuardHookCallback[];
}

export interface LoopGuardHooksOptions {
  /** An OpenClaw-style config; the agent-facing default document fills what it leaves out. */
  config?: Config;
  /** A LoopGuard (or StoredLoopGuard) to share; its own config applies. Not with `config`. */
  guard?: { beforeToolCall: Function; afterToolOutcome: Function };
  /** The session id from a hook input (default: `input.session_id`). */
  session?: (input: any) => string;
}

/** `PreToolUse`, `PostToolUse` and `PostToolUseFailure` matchers for every tool: pass as `options.hooks`. */
export function loopGuardHooks(options?: LoopGuardHooksOptions): {
  PreToolUse: LoopGuardHookMatcher[];
  PostToolUse: LoopGuardHookMatcher[];
  PostToolUseFailure: LoopGuardHookMatcher[];
};
