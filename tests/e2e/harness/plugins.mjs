// Getting plugins into a gateway: npm pack + `plugins install npm-pack:`, plugins.load.paths,
// `plugins inspect`, and a throwaway probe plugin that blocks the Nth exec call.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { NODE, NODE_BIN_DIR } from "./constants.mjs";
import { runCommand } from "./processes.mjs";
import { parseJsonOutput } from "./cli.mjs";

// ---------------------------------------------------------------------------------------------
// plugins

/** npm pack a plugin folder into destDir; returns the .tgz path. */
export async function npmPack(dir, destDir) {
  const npm = path.join(NODE_BIN_DIR, "npm");
  const res = await runCommand("npm pack", NODE, [npm, "pack", "--pack-destination", destDir, "--json", "--ignore-scripts"], {
    cwd: dir,
    env: { PATH: `${NODE_BIN_DIR}:${process.env.PATH}`, HOME: process.env.HOME, npm_config_update_notifier: "false" },
    timeoutMs: 60_000,
  });
  if (res.code !== 0) throw new Error(`npm pack failed: ${res.stderr}`);
  const info = parseJsonOutput(res.stdout);
  return path.join(destDir, info[0].filename);
}

/**
 * Install a plugin the published-package way: `plugins install npm-pack:<tgz> --force
 * --accept-capabilities`, then `plugins enable <id> --accept-capabilities`. Returns the two results.
 * The gateway may hot-apply; pass {restart:true} to restart it afterwards.
 */
export async function installPluginFromTarball(gw, tgzPath, { id, restart = false, timeoutMs = 150_000 } = {}) {
  const install = await gw.cli(["plugins", "install", `npm-pack:${tgzPath}`, "--force", "--accept-capabilities"], { timeoutMs });
  if (install.code !== 0) throw new Error(`plugins install failed (${install.code}):\n${install.stdout}\n${install.stderr}`);
  const pluginId = id ?? readPackedManifestId(tgzPath);
  const enable = await gw.cli(["plugins", "enable", pluginId, "--accept-capabilities"], { timeoutMs: 60_000 });
  if (enable.code !== 0) throw new Error(`plugins enable failed (${enable.code}):\n${enable.stdout}\n${enable.stderr}`);
  if (restart) await gw.restart();
  return { install, enable, id: pluginId };
}

function readPackedManifestId(tgzPath) {
  const res = spawnSync("tar", ["-xzOf", tgzPath, "package/openclaw.plugin.json"], { encoding: "utf8" });
  if (res.status !== 0) throw new Error(`cannot read the manifest from ${tgzPath}: ${res.stderr}`);
  return JSON.parse(res.stdout).id;
}

/**
 * The plugins.load.paths way: add the folder and plugins.entries.<id> to the config, then
 * restart the gateway (unless restart:false).
 */
export async function addPluginLoadPath(gw, dir, { id, config, restart = true } = {}) {
  const cfg = gw.config;
  cfg.plugins ??= {};
  cfg.plugins.load ??= {};
  cfg.plugins.load.paths = [...new Set([...(cfg.plugins.load.paths ?? []), dir])];
  cfg.plugins.entries ??= {};
  cfg.plugins.entries[id] = { ...(cfg.plugins.entries[id] ?? {}), enabled: true, ...(config ? { config } : {}) };
  gw.writeConfig(cfg);
  if (restart) await gw.restart();
}

/** `openclaw plugins inspect <id> --runtime --json` */
export async function inspectPlugin(gw, id) {
  const res = await gw.cli(["plugins", "inspect", id, "--runtime", "--json"], { timeoutMs: 90_000 });
  return parseJsonOutput(res.stdout) ?? { error: res.stderr, code: res.code };
}

/**
 * A throwaway probe plugin with a before_tool_call hook that blocks the Nth exec call of each
 * session whose key contains `config.sessionMarker` (so two probes can share a gateway).
 * Returns {dir, id}.
 */
export function writeProbePlugin(parentDir, { id = "lg-probe", blockAt = 3, sessionMarker = "" } = {}) {
  const dir = path.join(parentDir, id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify(
      {
        name: id,
        version: "0.0.1",
        private: false,
        type: "module",
        description: "loopguard e2e probe plugin (throwaway)",
        files: ["index.js", "openclaw.plugin.json"],
        peerDependencies: { openclaw: ">=2026.9.6" },
        openclaw: { extensions: ["./index.js"], compat: { pluginApi: ">=2026.9.6" } },
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(dir, "openclaw.plugin.json"),
    JSON.stringify(
      {
        id,
        name: id,
        description: "loopguard e2e probe: blocks the Nth exec call per session",
        activation: { onStartup: true },
        configSchema: {
          type: "object",
          additionalProperties: false,
          properties: { blockAt: { type: "integer", minimum: 1 }, sessionMarker: { type: "string" }, logPath: { type: "string" } },
        },
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(dir, "index.js"),
    `// throwaway probe plugin for the loopguard e2e harness
import fs from "node:fs";
const ID = ${JSON.stringify(id)};
const STATE = (globalThis[Symbol.for("openclaw." + ID + ".state")] ??= { counts: new Map() });
export default {
  id: ID,
  name: ID,
  description: "blocks the Nth exec call per session",
  register(api) {
    const cfg = api.pluginConfig ?? {};
    const blockAt = cfg.blockAt ?? ${blockAt};
    const marker = cfg.sessionMarker ?? ${JSON.stringify(sessionMarker)};
    const note = (rec) => { try { if (cfg.logPath) fs.appendFileSync(cfg.logPath, JSON.stringify({ ts: Date.now(), id: ID, mode: api.registrationMode, ...rec }) + "\\n"); } catch {} };
    note({ event: "register" });
    api.on("before_tool_call", (event, ctx) => {
      try {
        const key = String(ctx?.sessionKey ?? "");
        if (event.toolName !== "exec" || (marker && !key.includes(marker))) return;
        const n = (STATE.counts.get(key) ?? 0) + 1;
        STATE.counts.set(key, n);
        note({ event: "before_tool_call", sessionKey: key, n, toolCallId: event.toolCallId });
        if (n === blockAt) {
          return { block: true, blockReason: ID.toUpperCase() + ": blocked exec call #" + n + " (limit " + blockAt + ")" };
        }
      } catch (err) { note({ event: "error", error: String(err) }); }
    });
  },
};
`,
  );
  return { dir, id };
}
