// End-to-end harness: the real OpenClaw gateway (tests/openclaw/node_modules/openclaw), a fake
// OpenAI-compatible model (fake-model.mjs) and a fake Telegram Bot API (fake-telegram.mjs).
// Facts it relies on: /work/shared/openclaw-gateway.md (§2, §3, §4, §8).
//
// Rules it keeps: everything on 127.0.0.1; free ports chosen at run time; every process it
// starts is tracked and stopped by PID (its own process group: SIGTERM, wait <= 10 s, SIGKILL),
// also on failure, timeout and exit; each gateway gets a fresh HOME, TMPDIR, OPENCLAW_STATE_DIR,
// OPENCLAW_CONFIG_PATH and logging.file under one temp dir, removed afterwards (kept when
// E2E_KEEP=1); one gateway at a time per machine (a lock directory in the system temp dir).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { DatabaseSync } from "node:sqlite";

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(E2E_DIR, "../..");
export const OPENCLAW_DIR = process.env.OPENCLAW_DIR ?? path.join(REPO, "tests/openclaw/node_modules/openclaw");
export const OPENCLAW_ENTRY = path.join(OPENCLAW_DIR, "openclaw.mjs");
export const NODE = process.execPath;
export const NODE_BIN_DIR = path.dirname(NODE);
export const GATEWAY_TOKEN = "e2e-token-0123456789";
export const FAKE_PROVIDER = "fake";
export const FAKE_MODEL = "loop-1";
const SYSTEM_TMP = os.tmpdir();

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 24 || (major === 24 && minor < 16)) {
  throw new Error(
    `The e2e harness needs Node >= 24.16 (openclaw needs node:sqlite); this is ${process.version}. ` +
      `Run: source scripts/node24.sh && "$NODE24_BIN/node" --test ...`,
  );
}

// ---------------------------------------------------------------------------------------------
// timing and logging

const T0 = Date.now();
export function log(...args) {
  const s = ((Date.now() - T0) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[e2e ${s}s] ${args.join(" ")}\n`);
}
export async function timed(label, fn) {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    log(`${label}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll fn() every intervalMs until it returns a truthy value or timeoutMs passes. */
export async function waitFor(fn, { timeoutMs = 30_000, intervalMs = 250, what = "condition" } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (let i = 0; Date.now() < deadline && i < 100_000; i += 1) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

// ---------------------------------------------------------------------------------------------
// processes

const tracked = new Set(); // {child, name}

function groupKill(pid, sig) {
  try {
    process.kill(-pid, sig); // the process group this harness created (detached child)
    return true;
  } catch {
    try {
      process.kill(pid, sig);
      return true;
    } catch {
      return false;
    }
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawn a tracked child in its own process group; stdout/stderr go to files (and are kept in memory if capture). */
export function spawnTracked(name, cmd, args, { env, cwd, stdoutFile, stderrFile, capture = false } = {}) {
  const child = spawn(cmd, args, { env, cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const entry = { child, name, exited: false, code: null, signal: null, stdout: "", stderr: "" };
  const out = stdoutFile ? fs.createWriteStream(stdoutFile, { flags: "a" }) : null;
  const err = stderrFile ? fs.createWriteStream(stderrFile, { flags: "a" }) : null;
  child.stdout.on("data", (d) => {
    out?.write(d);
    if (capture) entry.stdout += d;
  });
  child.stderr.on("data", (d) => {
    err?.write(d);
    if (capture) entry.stderr += d;
  });
  entry.done = new Promise((resolve) => {
    child.on("close", (code, signal) => {
      entry.exited = true;
      entry.code = code;
      entry.signal = signal;
      tracked.delete(entry);
      out?.end();
      err?.end();
      resolve({ code, signal });
    });
    child.on("error", (e) => {
      entry.exited = true;
      entry.code = -1;
      entry.stderr += String(e);
      tracked.delete(entry);
      resolve({ code: -1, signal: null, error: e });
    });
  });
  tracked.add(entry);
  return entry;
}

/** SIGTERM the child's process group, wait <= graceMs, then SIGKILL. */
export async function stopProcess(entry, { graceMs = 10_000 } = {}) {
  if (!entry || entry.exited) return;
  const pid = entry.child.pid;
  groupKill(pid, "SIGTERM");
  const res = await Promise.race([entry.done, sleep(graceMs).then(() => "timeout")]);
  if (res === "timeout" || alive(pid)) {
    log(`${entry.name} (pid ${pid}) did not exit in ${graceMs} ms: SIGKILL`);
    groupKill(pid, "SIGKILL");
    await Promise.race([entry.done, sleep(5_000)]);
  }
  // any leftover member of its group (e.g. an exec'd shell)
  groupKill(pid, "SIGKILL");
}

/** Run a command to completion with a hard timeout (SIGTERM, then SIGKILL after 10 s). */
export async function runCommand(name, cmd, args, { env, cwd, timeoutMs = 180_000, stdoutFile, stderrFile, input } = {}) {
  const t = Date.now();
  const entry = spawnTracked(name, cmd, args, { env, cwd, stdoutFile, stderrFile, capture: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stopProcess(entry);
  }, timeoutMs);
  const { code, signal } = await entry.done;
  clearTimeout(timer);
  return { code, signal, timedOut, stdout: entry.stdout, stderr: entry.stderr, durationMs: Date.now() - t };
}

export async function stopAll() {
  await Promise.all([...tracked].map((e) => stopProcess(e)));
}

let exitHooked = false;
function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on("exit", () => {
    for (const e of tracked) groupKill(e.child.pid, "SIGKILL");
    releaseGatewayLockSync();
  });
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.once(sig, async () => {
      await stopAll();
      await cleanupAll();
      process.exit(130);
    });
  }
}
hookExit();

// ---------------------------------------------------------------------------------------------
// ports, temp dirs, lock

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function portFree(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A port P such that P, P+1, P+2 (OpenClaw derives helper ports from the gateway port) are free. */
export async function freeGatewayPort() {
  for (let i = 0; i < 50; i += 1) {
    const p = await freePort();
    if (p > 65000) continue;
    if ((await portFree(p + 1)) && (await portFree(p + 2)) && (await portFree(p + 3))) return p;
  }
  throw new Error("no free port block found");
}

const tempRoots = new Set();
/** A fresh temp root with home/, tmp/, state/, workspace/, out/. */
export function makeRoot(label = "e2e") {
  const base = process.env.E2E_TMP ?? SYSTEM_TMP;
  const root = fs.mkdtempSync(path.join(base, `loopguard-e2e-${label}-`));
  for (const d of ["home", "tmp", "state", "workspace", "out"]) fs.mkdirSync(path.join(root, d), { recursive: true });
  tempRoots.add(root);
  return {
    root,
    home: path.join(root, "home"),
    tmp: path.join(root, "tmp"),
    stateDir: path.join(root, "state"),
    configPath: path.join(root, "state", "openclaw.json"),
    workspace: path.join(root, "workspace"),
    out: path.join(root, "out"),
  };
}

function listFiles(dir, pred, out = [], depth = 0) {
  if (depth > 12) return out;
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) listFiles(p, pred, out, depth + 1);
    else if (pred(p)) out.push(p);
  }
  return out;
}

/**
 * OpenClaw 2026.9.6 keeps its state-database lock files in a host-global directory: on Linux
 * it is hard-coded to /tmp/openclaw-state-locks-<uid>/ (not $TMPDIR; dist/sqlite-source-handle-*:
 * resolveStateLifecycleRuntimeDirectory), one `<kind>.<sha256(db path)[0:8]>.lock.sqlite` per
 * database. Remove exactly the ones that belong to this root's databases (other OpenClaw
 * processes on the machine share the directory, so it is left in place). The same for a per-root
 * $TMPDIR copy. (OpenClaw also creates the shared, empty /tmp/openclaw; it is left alone too.)
 */
export function cleanupLockFiles(root) {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const lockDirName = uid === undefined ? "openclaw-state-locks" : `openclaw-state-locks-${uid}`;
  const dbs = listFiles(root, (p) => p.endsWith(".sqlite"));
  const hashes = new Set(
    dbs.map((p) => {
      let canon = path.resolve(p);
      try {
        canon = fs.realpathSync.native(canon);
      } catch {}
      return createHash("sha256").update(canon).digest("hex").slice(0, 8);
    }),
  );
  const removed = [];
  for (const dir of [path.join("/tmp", lockDirName), path.join(root, "tmp", lockDirName)]) {
    let names = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const m = /^[a-z-]+\.([0-9a-f]{8})\.lock\.sqlite(?:-(?:wal|shm|journal))?$/.exec(name);
      if (m && hashes.has(m[1])) {
        try {
          fs.rmSync(path.join(dir, name), { force: true });
          removed.push(name);
        } catch {}
      }
    }
  }
  return removed;
}

/** Remove this root's OpenClaw lock files, then (unless E2E_KEEP=1 or keep) the whole root. */
export async function cleanupRoot(root, { keep = false } = {}) {
  if (!root || !fs.existsSync(root)) return;
  cleanupLockFiles(root);
  if (process.env.E2E_KEEP === "1" || keep) {
    log(`kept ${root} (${keep ? "a test failed" : "E2E_KEEP=1"})`);
  } else {
    await fsp.rm(root, { recursive: true, force: true, maxRetries: 3 });
  }
  tempRoots.delete(root);
}

export async function cleanupAll() {
  for (const r of [...tempRoots]) await cleanupRoot(r);
}

const LOCK_DIR = path.join(SYSTEM_TMP, "loopguard-e2e-gateway.lock");
let lockHeld = false;
async function acquireGatewayLock(timeoutMs = 15 * 60_000) {
  if (lockHeld) return;
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 100_000; i += 1) {
    try {
      fs.mkdirSync(LOCK_DIR);
      fs.writeFileSync(path.join(LOCK_DIR, "pid"), String(process.pid));
      lockHeld = true;
      return;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      let owner = NaN;
      try {
        owner = Number(fs.readFileSync(path.join(LOCK_DIR, "pid"), "utf8"));
      } catch {}
      if (Number.isFinite(owner) && owner > 0 && !alive(owner)) {
        fs.rmSync(LOCK_DIR, { recursive: true, force: true }); // stale
        continue;
      }
      if (Date.now() > deadline) throw new Error(`gateway lock ${LOCK_DIR} held by pid ${owner} for too long`);
      if (i % 20 === 0) log(`waiting for the gateway lock (held by pid ${owner})`);
      await sleep(500);
    }
  }
}
function releaseGatewayLockSync() {
  if (!lockHeld) return;
  try {
    const owner = Number(fs.readFileSync(path.join(LOCK_DIR, "pid"), "utf8"));
    if (owner === process.pid) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  } catch {}
  lockHeld = false;
}

// ---------------------------------------------------------------------------------------------
// env and config

/** The environment for every OpenClaw process of one root. */
export function openclawEnv(dirs, extra = {}) {
  const pass = {};
  for (const k of ["LANG", "LC_ALL", "TZ", "TERM"]) if (process.env[k]) pass[k] = process.env[k];
  // registry/proxy settings, if any (plugins install npm-pack: runs npm install)
  for (const [k, v] of Object.entries(process.env)) {
    // (the registry is reached through a TLS-intercepting proxy here: npm needs the extra CA)
    if (/^(https?_proxy|no_proxy|npm_config_registry|npm_config_cafile|node_extra_ca_certs|ssl_cert_file|ssl_cert_dir)$/i.test(k)) pass[k] = v;
  }
  return {
    ...pass,
    PATH: `${NODE_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    OPENCLAW_STATE_DIR: dirs.stateDir,
    OPENCLAW_CONFIG_PATH: dirs.configPath,
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_NO_AUTO_UPDATE: "1",
    OPENCLAW_OFFLINE: "1",
    // opt-in shared npm cache for `plugins install npm-pack:` (OpenClaw resolves the plugin's
    // openclaw peer and fetches ~160 MB on a cold cache); default: a fresh cache under HOME
    ...(process.env.E2E_NPM_CACHE ? { npm_config_cache: path.resolve(process.env.E2E_NPM_CACHE) } : {}),
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    ...extra,
  };
}

export function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
/** Deep merge (objects merge, everything else, arrays included, replaces). */
export function deepMerge(a, b) {
  if (!isPlainObject(a) || !isPlainObject(b)) return b === undefined ? a : b;
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? deepMerge(out[k], v) : v;
  return out;
}

/** The §2.2 config for one gateway, merged with the test's parts. */
export function baseConfig({ port, modelPort, dirs, loopDetection = true }) {
  return {
    gateway: { mode: "local", bind: "loopback", port, auth: { mode: "token", token: GATEWAY_TOKEN } },
    logging: { file: path.join(dirs.out, "openclaw.log") },
    agents: {
      defaults: {
        model: { primary: `${FAKE_PROVIDER}/${FAKE_MODEL}` },
        workspace: dirs.workspace,
        heartbeat: { every: "0m" },
      },
    },
    models: {
      mode: "merge",
      providers: {
        [FAKE_PROVIDER]: {
          baseUrl: `http://127.0.0.1:${modelPort}/v1`,
          apiKey: "fake-key",
          api: "openai-completions",
          models: [
            { id: FAKE_MODEL, name: "Loop Fake", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096 },
          ],
        },
      },
    },
    tools: { loopDetection: { enabled: loopDetection } },
    plugins: { entries: { "memory-core": { config: { dreaming: { enabled: false } } } } },
  };
}

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

// ---------------------------------------------------------------------------------------------
// the gateway

/** The older release installed next to it (tests/openclaw: `openclaw-2026.7.35`), for legacy fixtures. */
export const OPENCLAW_LEGACY_ENTRY = path.join(REPO, "tests/openclaw/node_modules/openclaw-2026.7.35/openclaw.mjs");

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

// ---------------------------------------------------------------------------------------------
// transcripts (SQLite)

export function agentDbPath(stateDir, agentId = "main") {
  return path.join(stateDir, "agents", agentId, "agent", "openclaw-agent.sqlite");
}

export function fullSessionKey(sessionKey, agentId = "main") {
  return sessionKey.startsWith("agent:") ? sessionKey : `agent:${agentId}:${sessionKey}`;
}

export function decodeEventRow(row) {
  if (row.event_json != null) return JSON.parse(row.event_json);
  if (row.event_zstd != null) return JSON.parse(zlib.zstdDecompressSync(Buffer.from(row.event_zstd)).toString("utf8"));
  return null;
}

/** Open an agent database read-only (works while the gateway runs). Caller closes. */
export function openAgentDb(dbFile) {
  return new DatabaseSync(dbFile, { readOnly: true });
}

/** session key -> session id via session_nodes (current_session_id) */
export function sessionIdFor(db, sessionKey) {
  const row = db.prepare("SELECT current_session_id AS id FROM session_nodes WHERE session_key = ?").get(sessionKey);
  return row?.id ?? null;
}

/**
 * Read a session's transcript events in seq order: [{seq, compressed, event}].
 * Accepts a file path or a stateDir (+agentId). sessionKey may be short ("k1") or full.
 */
export function readTranscript(stateDirOrDb, agentId, sessionKey, { withRows = false } = {}) {
  const dbFile = stateDirOrDb.endsWith(".sqlite") ? stateDirOrDb : agentDbPath(stateDirOrDb, agentId);
  const db = openAgentDb(dbFile);
  try {
    const key = fullSessionKey(sessionKey, agentId);
    const sid = sessionIdFor(db, key);
    if (!sid) return [];
    const rows = db
      .prepare("SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq")
      .all(sid);
    return rows.map((r) => {
      const event = decodeEventRow(r);
      return withRows ? { seq: r.seq, compressed: r.event_json == null, event } : event;
    });
  } finally {
    db.close();
  }
}

/** message events with a role */
export const messagesOf = (events, role) =>
  events.filter((e) => e?.type === "message" && (!role || e.message?.role === role)).map((e) => e.message);

/** [{id, name, arguments, runId}] in order, from assistant toolCall parts */
export function toolCallsOf(events) {
  const out = [];
  for (const m of messagesOf(events, "assistant")) {
    for (const part of Array.isArray(m.content) ? m.content : []) {
      if (part?.type === "toolCall") out.push({ id: part.id, name: part.name, arguments: part.arguments, runId: m.__openclaw?.runId });
    }
  }
  return out;
}

/** [{toolCallId, toolName, text, texts, details, isError, runId}] in order */
export function toolResultsOf(events) {
  return messagesOf(events, "toolResult").map((m) => {
    const texts = (Array.isArray(m.content) ? m.content : []).filter((p) => p?.type === "text").map((p) => p.text);
    return { toolCallId: m.toolCallId, toolName: m.toolName, texts, text: texts.join("\n"), details: m.details ?? {}, isError: m.isError === true, runId: m.__openclaw?.runId };
  });
}

export const blockedResults = (events) => toolResultsOf(events).filter((r) => r.details?.status === "blocked");
export const compactionsOf = (events) => events.filter((e) => e?.type === "compaction");

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
