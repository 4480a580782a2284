// Logging, waiting and child processes: the one set of tracked children (each in its own process
// group, stopped by PID: SIGTERM, wait, SIGKILL). The exit hook that kills them is in exit.mjs.
import { spawn } from "node:child_process";
import fs from "node:fs";

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

// (exported for the sibling modules under harness/; harness.mjs does not re-export it)
export const tracked = new Set(); // {child, name}

export function groupKill(pid, sig) {
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

export function alive(pid) {
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
