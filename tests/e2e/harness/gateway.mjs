// Starting, restarting and stopping one real OpenClaw gateway (under the machine-wide gateway lock),
// plus reading its output tail and its listening sockets.
import fs from "node:fs";
import path from "node:path";
import { NODE, OPENCLAW_ENTRY } from "./constants.mjs";
import { log, spawnTracked, stopProcess, waitFor } from "./processes.mjs";
import { acquireGatewayLock, cleanupRoot, freeGatewayPort, makeRoot, releaseGatewayLockSync } from "./resources.mjs";
import { baseConfig, deepMerge, openclawEnv } from "./config.mjs";
import { openclaw } from "./cli.mjs";
// a gateway takes the machine lock: make sure the exit hook that releases it is installed even if
// this module is imported without harness.mjs
import "./exit.mjs";

// ---------------------------------------------------------------------------------------------
// the gateway

async function readyz(port) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return r.ok;
  } catch {
    return false;
  }
}

/**
 * Start a gateway. opts:
 *   config       parts merged over baseConfig (objects merge, arrays replace)
 *   model        a startModel() handle (its port is the provider's baseUrl), or modelPort
 *   plugins      [{dir, id, config?}] loaded through plugins.load.paths
 *   loopDetection  tools.loopDetection.enabled (default true)
 *   env          extra env for the gateway and the CLI
 *   label        for the temp dir name
 *   workspaceFiles {name: content} written into the workspace
 * Returns {port, dirs, stateDir, configPath, logFile, config, env, stop(), restart(), cli(), cleanup()}.
 */
export async function startGateway(opts = {}) {
  await acquireGatewayLock();
  const dirs = opts.dirs ?? makeRoot(opts.label ?? "gw");
  const port = await freeGatewayPort();
  const modelPort = opts.model?.port ?? opts.modelPort;
  if (!modelPort) throw new Error("startGateway needs opts.model (startModel handle) or opts.modelPort");
  let config = baseConfig({ port, modelPort, dirs, loopDetection: opts.loopDetection ?? true });
  if (opts.plugins?.length) {
    config = deepMerge(config, {
      plugins: {
        load: { paths: opts.plugins.map((p) => p.dir) },
        entries: Object.fromEntries(opts.plugins.map((p) => [p.id, { enabled: true, ...(p.config ? { config: p.config } : {}) }])),
      },
    });
  }
  if (opts.config) config = deepMerge(config, opts.config);
  fs.writeFileSync(dirs.configPath, JSON.stringify(config, null, 2));
  for (const [name, content] of Object.entries(opts.workspaceFiles ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dirs.workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(dirs.workspace, name), content);
  }
  const env = openclawEnv(dirs, opts.env ?? {});
  const gw = {
    port,
    dirs,
    stateDir: dirs.stateDir,
    configPath: dirs.configPath,
    workspace: dirs.workspace,
    logFile: config.logging.file,
    stdoutFile: path.join(dirs.out, "gateway.stdout"),
    stderrFile: path.join(dirs.out, "gateway.stderr"),
    env,
    entry: null,
    starts: 0,
    get config() {
      return JSON.parse(fs.readFileSync(dirs.configPath, "utf8"));
    },
    writeConfig(cfg) {
      fs.writeFileSync(dirs.configPath, JSON.stringify(cfg, null, 2));
    },
    cli: (args, o = {}) => openclaw(dirs, args, { ...o, env: { ...(opts.env ?? {}), ...(o.env ?? {}) } }),
    async start() {
      const t = Date.now();
      gw.starts += 1;
      fs.appendFileSync(gw.stderrFile, `\n===== start #${gw.starts} =====\n`);
      gw.entry = spawnTracked("gateway", NODE, [OPENCLAW_ENTRY, "gateway", "run", "--port", String(port), "--bind", "loopback"], {
        env,
        cwd: dirs.workspace,
        stdoutFile: gw.stdoutFile,
        stderrFile: gw.stderrFile,
      });
      const entry = gw.entry;
      try {
        await waitFor(
          async () => {
            if (entry.exited) throw new Error(`gateway exited early (code ${entry.code}); see ${gw.stderrFile}`);
            return readyz(port);
          },
          { timeoutMs: 60_000, intervalMs: 500, what: `gateway /readyz on ${port}` },
        );
      } catch (err) {
        const tail = tailFile(gw.stderrFile, 3000) + tailFile(gw.stdoutFile, 3000);
        await stopProcess(entry);
        throw new Error(`${err.message}\n--- gateway output tail ---\n${tail}`);
      }
      gw.pid = entry.child.pid;
      log(`gateway pid ${gw.pid} ready on 127.0.0.1:${port} in ${((Date.now() - t) / 1000).toFixed(1)} s (${dirs.root})`);
      return gw;
    },
    async stop() {
      if (gw.entry && !gw.entry.exited) {
        const t = Date.now();
        await stopProcess(gw.entry);
        log(`gateway stopped in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      }
    },
    async restart() {
      await gw.stop();
      return gw.start();
    },
    /** stop, remove lock files and (unless E2E_KEEP=1 or keep) the temp dir, release the gateway lock */
    async cleanup({ keep = false } = {}) {
      await gw.stop();
      await cleanupRoot(dirs.root, { keep });
      releaseGatewayLockSync();
    },
  };
  try {
    await gw.start();
  } catch (err) {
    await cleanupRoot(dirs.root, { keep: true }).catch(() => {});
    releaseGatewayLockSync();
    throw err;
  }
  return gw;
}

export function tailFile(file, bytes = 4000) {
  try {
    const s = fs.readFileSync(file, "utf8");
    return s.slice(-bytes);
  } catch {
    return "";
  }
}

/** Listening TCP sockets of a PID's process group (from /proc; Linux). [{addr, port}] */
export function listeningSockets(pid) {
  const pids = [];
  for (const p of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pid) pids.push(p); // pgrp
    } catch {}
  }
  const inodes = new Set();
  for (const p of pids) {
    try {
      for (const fd of fs.readdirSync(`/proc/${p}/fd`)) {
        try {
          const l = fs.readlinkSync(`/proc/${p}/fd/${fd}`);
          const m = /^socket:\[(\d+)\]$/.exec(l);
          if (m) inodes.add(m[1]);
        } catch {}
      }
    } catch {}
  }
  const out = [];
  for (const [file, v6] of [["/proc/net/tcp", false], ["/proc/net/tcp6", true]]) {
    let lines = [];
    try {
      lines = fs.readFileSync(file, "utf8").split("\n").slice(1);
    } catch {}
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== "0A" || !inodes.has(f[9])) continue;
      const [hexAddr, hexPort] = f[1].split(":");
      let addr;
      if (!v6) addr = hexAddr.match(/../g).reverse().map((h) => parseInt(h, 16)).join(".");
      else addr = hexAddr === "00000000000000000000000001000000" ? "::1" : hexAddr === "0".repeat(32) ? "::" : hexAddr;
      out.push({ addr, port: parseInt(hexPort, 16) });
    }
  }
  return out;
}
