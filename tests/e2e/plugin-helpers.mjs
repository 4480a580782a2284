// Helpers for the loopguard plugin's e2e tests (packages/openclaw-plugin inside the real gateway).
import fs from "node:fs";
import path from "node:path";
import * as h from "./harness.mjs";

export const PLUGIN_DIR = path.join(h.REPO, "packages/openclaw-plugin");
export const PLUGIN_ID = "loopguard";
/** tests/hostile-policy with its session-suffix feature: `agent:main:__trap__` traps, `…:__loop__` spins. */
export const HOSTILE_WASM = path.join(h.REPO, "target/hostile-gateway/wasm32-wasip2/release/hostile_policy.wasm");
export const BASELINE_DIR = path.join(h.E2E_DIR, "baseline");

/** The policy component the plugin runs by default (the one inside the loopguard package). */
export const defaultPolicyWasm = () => path.join(PLUGIN_DIR, "node_modules/loopguard/generated/loopguard_policy.wasm");

/**
 * `node scripts/pack.mjs --out DIR` in packages/openclaw-plugin: packs packages/node, installs it
 * into the plugin's node_modules (so the folder also works as a load.paths entry) and packs the
 * plugin with loopguard bundled. Returns the tarball's path.
 */
export async function packPlugin(outDir) {
  const res = await h.runCommand("pack plugin", h.NODE, [path.join(PLUGIN_DIR, "scripts/pack.mjs"), "--out", outDir], {
    cwd: PLUGIN_DIR,
    env: { ...process.env, PATH: `${h.NODE_BIN_DIR}:${process.env.PATH}` },
    timeoutMs: 300_000,
  });
  if (res.code !== 0) throw new Error(`pack.mjs failed (${res.code}):\n${res.stderr.slice(-3000)}`);
  h.log(res.stderr.split("\n").filter((l) => l.startsWith("openclaw-loopguard:")).join(" "));
  return res.stdout.trim().split("\n").at(-1);
}

/** Builds the hostile fixture with session-suffix unless it is there (cargo, wasm32-wasip2). */
export async function ensureHostilePolicy() {
  if (fs.existsSync(HOSTILE_WASM)) return HOSTILE_WASM;
  h.log("building tests/hostile-policy (features session-suffix) into target/hostile-gateway");
  const res = await h.runCommand("cargo build hostile", "bash", [path.join(h.REPO, "scripts/build-hostile-policy.sh")], { cwd: h.REPO, env: process.env, timeoutMs: 900_000 });
  if (res.code !== 0 || !fs.existsSync(HOSTILE_WASM)) throw new Error(`cargo build of the hostile policy failed:\n${res.stderr.slice(-3000)}`);
  return HOSTILE_WASM;
}

/** The plugin's decision log (its `decisionLog` config), optionally only one process's lines. */
export function readDecisions(file, { pid } = {}) {
  if (!fs.existsSync(file)) return [];
  const out = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    try {
      const rec = JSON.parse(line);
      if (pid === undefined || rec.pid === pid) out.push(rec);
    } catch {}
  }
  return out;
}

export const toolDecisions = (recs, session) =>
  recs.filter((r) => r.event === "decision" && r.hook === "before_tool_call" && (!session || r.session === session));

export function readBaseline(name) {
  return JSON.parse(fs.readFileSync(path.join(BASELINE_DIR, name), "utf8"));
}

export function writeBaseline(name, data) {
  fs.mkdirSync(BASELINE_DIR, { recursive: true });
  fs.writeFileSync(path.join(BASELINE_DIR, name), JSON.stringify(data, null, 2) + "\n");
  h.log(`wrote tests/e2e/baseline/${name}`);
}

/** Replace a file the way a deploy does: write beside it, then rename over it. */
export function replaceFile(target, source) {
  const tmp = `${target}.incoming`;
  fs.copyFileSync(source, tmp);
  fs.renameSync(tmp, target);
}

/** Set plugins.entries.loopguard.config (merged) in the gateway's config file. */
export function setPluginConfig(gw, patch) {
  const cfg = gw.config;
  cfg.plugins ??= {};
  cfg.plugins.entries ??= {};
  const entry = (cfg.plugins.entries[PLUGIN_ID] ??= { enabled: true });
  entry.config = { ...(entry.config ?? {}), ...patch };
  gw.writeConfig(cfg);
  return entry.config;
}
