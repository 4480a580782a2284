// Starting the fake model (fake-model.mjs) and the fake Telegram Bot API (fake-telegram.mjs) as
// tracked processes, and the channels.telegram config that points OpenClaw at the fake.
import fs from "node:fs";
import path from "node:path";
import { E2E_DIR, NODE, SYSTEM_TMP } from "./constants.mjs";
import { spawnTracked, stopProcess, waitFor } from "./processes.mjs";
import { tempRoots } from "./resources.mjs";

// ---------------------------------------------------------------------------------------------
// fake servers

async function startServerProcess(name, script, args, { env = {}, out, timeoutMs = 15_000 } = {}) {
  const entry = spawnTracked(name, NODE, [path.join(E2E_DIR, script), ...args], {
    env: { PATH: process.env.PATH, ...env },
    stderrFile: out ? path.join(out, `${name}.stderr`) : undefined,
    capture: true,
  });
  const { port, pid } = await waitFor(
    () => {
      if (entry.exited) throw new Error(`${name} exited early: ${entry.stderr}`);
      const line = entry.stdout.split("\n").find((l) => l.startsWith("{"));
      return line ? { port: JSON.parse(line).listening, pid: entry.child.pid } : null;
    },
    { timeoutMs, intervalMs: 50, what: `${name} to listen` },
  );
  return { entry, port, pid };
}

/**
 * Start fake-model.mjs. opts: {config: {scenarios, defaultScenario}, out (dir for logs), lifetimeMs}.
 * Returns {port, pid, logFile, requests(), chatRequests(filter), stop()}.
 */
export async function startModel(opts = {}) {
  const out = opts.out ?? fs.mkdtempSync(path.join(SYSTEM_TMP, "loopguard-e2e-model-"));
  if (!opts.out) tempRoots.add(out);
  const logFile = path.join(out, "fake-model.jsonl");
  const cfgFile = path.join(out, "fake-model.config.json");
  fs.writeFileSync(cfgFile, JSON.stringify(opts.config ?? {}, null, 2));
  const args = ["--port", "0", "--log", logFile, "--config", cfgFile, "--lifetime-ms", String(opts.lifetimeMs ?? 20 * 60_000)];
  const env = opts.dump ? { FAKE_DUMP: path.join(out, "fake-model.dump.jsonl") } : {};
  const { entry, port, pid } = await startServerProcess("fake-model", "fake-model.mjs", args, { env, out });
  const requests = () =>
    fs.existsSync(logFile)
      ? fs
          .readFileSync(logFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return {
    port,
    pid,
    logFile,
    out,
    requests,
    /** chat completion requests, optionally only those whose user text includes `marker` */
    chatRequests: (marker) => requests().filter((r) => r.method === "POST" && (!marker || (r.userText ?? "").includes(marker))),
    stop: () => stopProcess(entry),
  };
}

/** Start fake-telegram.mjs. opts: {echoMax, out}. Returns {port, apiRoot, inject(u), sent(), calls(), stop()}. */
export async function startTelegram(opts = {}) {
  const out = opts.out ?? fs.mkdtempSync(path.join(SYSTEM_TMP, "loopguard-e2e-tg-"));
  if (!opts.out) tempRoots.add(out);
  const args = ["--port", "0", "--log", path.join(out, "fake-telegram.jsonl"), "--lifetime-ms", String(opts.lifetimeMs ?? 20 * 60_000)];
  if (opts.echoMax) args.push("--echo-max", String(opts.echoMax));
  const { entry, port, pid } = await startServerProcess("fake-telegram", "fake-telegram.mjs", args, { out });
  const base = `http://127.0.0.1:${port}`;
  const get = async (p) => (await (await fetch(base + p)).json()).result;
  return {
    port,
    pid,
    apiRoot: base,
    inject: async (update) =>
      (await (await fetch(base + "/__inject", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(update) })).json()).result,
    sent: () => get("/__sent"),
    /** set the other bot's echo budget (a total over the fake's lifetime) */
    setEchoMax: async (max) =>
      (await (await fetch(base + "/__echo", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ max }) })).json()).result,
    calls: () => get("/__calls"),
    stop: () => stopProcess(entry),
  };
}

/** The channels.telegram config for a fake Bot API (§8). */
export function telegramChannelConfig(apiRoot) {
  return {
    channels: {
      telegram: {
        enabled: true,
        botToken: "123456789:AAE2E-fake-token-abcdefghijklmnopqrstu",
        apiRoot,
        dmPolicy: "open",
        allowFrom: ["*"],
        groupPolicy: "open",
        groups: { "*": { requireMention: false } },
      },
    },
  };
}
