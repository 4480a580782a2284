// Machine resources a gateway takes: free ports, the temp roots (the one set of them), OpenClaw's
// state-lock files of a root, and the one-gateway-per-machine lock (its held flag lives only here).
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { createHash } from "node:crypto";
import { SYSTEM_TMP } from "./constants.mjs";
import { alive, log, sleep } from "./processes.mjs";

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

// (exported for the sibling modules under harness/; harness.mjs does not re-export it)
export const tempRoots = new Set();
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
// (exported for the sibling modules under harness/; harness.mjs does not re-export it)
export async function acquireGatewayLock(timeoutMs = 15 * 60_000) {
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
// (exported for the sibling modules under harness/; harness.mjs does not re-export it)
export function releaseGatewayLockSync() {
  if (!lockHeld) return;
  try {
    const owner = Number(fs.readFileSync(path.join(LOCK_DIR, "pid"), "utf8"));
    if (owner === process.pid) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  } catch {}
  lockHeld = false;
}
