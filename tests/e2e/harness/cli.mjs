// Talking to OpenClaw through its CLI: one `openclaw ...` run with a root's env, parsing its --json
// output, and the two ways a test drives a turn (`openclaw agent`, `gateway call chat.send`).
import { NODE, OPENCLAW_ENTRY } from "./constants.mjs";
import { runCommand } from "./processes.mjs";
import { openclawEnv } from "./config.mjs";

// ---------------------------------------------------------------------------------------------
// the openclaw CLI

/** Run the openclaw CLI with a root's env. Returns {code, stdout, stderr, json?, durationMs, timedOut}. */
export async function openclaw(dirs, args, { timeoutMs = 120_000, env = {}, cwd, json = false, entry = OPENCLAW_ENTRY } = {}) {
  const res = await runCommand(`openclaw ${args[0]}`, NODE, [entry, ...args], {
    env: openclawEnv(dirs, env),
    cwd: cwd ?? dirs.workspace,
    timeoutMs,
  });
  if (json) res.json = parseJsonOutput(res.stdout);
  return res;
}

/** Parse CLI --json output (tolerates log lines before the JSON document). */
export function parseJsonOutput(stdout) {
  const s = stdout.trim();
  if (!s) return undefined;
  try {
    return JSON.parse(s);
  } catch {}
  for (let i = s.indexOf("{"); i >= 0 && i < s.length; i = s.indexOf("{", i + 1)) {
    try {
      return JSON.parse(s.slice(i));
    } catch {}
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// driving turns

/** `openclaw agent --agent main --session-key K --message M --json` (timeout <= 180 s). */
export async function runAgentTurn(gw, { sessionKey, message, agent = "main", timeoutMs = 180_000, extraArgs = [] }) {
  const args = ["agent", "--agent", agent, "--session-key", sessionKey, "--message", message, "--json", ...extraArgs];
  const res = await gw.cli(args, { timeoutMs: Math.min(timeoutMs, 180_000) });
  res.json = parseJsonOutput(res.stdout);
  if (res.timedOut) throw new Error(`openclaw agent timed out after ${timeoutMs} ms\n${res.stderr.slice(-3000)}`);
  return res;
}

/** `openclaw gateway call chat.send --json --params {...}` (WebChat path: message hooks fire). */
export async function chatSend(gw, { sessionKey, message, idempotencyKey, timeoutMs = 30_000 }) {
  const params = { sessionKey, message, idempotencyKey: idempotencyKey ?? `e2e-${Date.now()}-${Math.random().toString(36).slice(2)}` };
  const res = await gw.cli(["gateway", "call", "chat.send", "--json", "--params", JSON.stringify(params)], { timeoutMs });
  res.json = parseJsonOutput(res.stdout);
  return res;
}
