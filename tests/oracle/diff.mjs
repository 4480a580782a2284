#!/usr/bin/env node
// Replays one config + trace with a "replayer" command and with the OpenClaw oracle driver, and
// compares the decision lines.
//
//   node diff.mjs --config C --trace T [--openclaw PKG_DIR] [--replayer CMD] [--first N]
//                 [--summary] [--driver-args "ARGS"] [--left FILE] [--right FILE]
//
//   --replayer CMD   a shell command template; {config} and {trace} are replaced by the (quoted)
//                    paths. Default: "<loopguard> replay --config {config} {trace}", where
//                    <loopguard> is $LOOPGUARD or the checkout's target/release/loopguard.
//   --openclaw DIR   the package the driver binds (default: ../openclaw/node_modules/openclaw)
//   --driver-args    extra driver options, e.g. "--ignore-unsupported"
//   --left/--right   compare saved outputs instead of running the replayer / the driver
//   --first N        how many differences to print (default 10)
//   --summary        also count the differences by (kind, replayer action/detector ->
//                    driver action/detector)
//
// Prints "0 differing decision lines" or "N differing decision lines (of M)" followed by the first
// differences (line number, both decision lines). Exit status: 0 when identical, 1 when they
// differ, 2 when a side failed to run.

import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

process.stdout.on("error", (e) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});
const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const o = { first: 10, summary: false, driverArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--config") o.config = argv[++i];
    else if (a === "--trace") o.trace = argv[++i];
    else if (a === "--openclaw") o.openclaw = argv[++i];
    else if (a === "--replayer") o.replayer = argv[++i];
    else if (a === "--first") o.first = Number(argv[++i]);
    else if (a === "--summary") o.summary = true;
    else if (a === "--driver-args") o.driverArgs = argv[++i].split(/\s+/).filter(Boolean);
    else if (a === "--left") o.left = argv[++i];
    else if (a === "--right") o.right = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.left && (!o.config || !o.trace)) throw new Error("--config and --trace are required (or --left/--right)");
  return o;
}

const q = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

function run(cmd, args, label, shell = false) {
  const r = shell
    ? spawnSync("/bin/sh", ["-c", cmd], { encoding: "utf8", maxBuffer: 1 << 30 })
    : spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.error) throw new Error(`${label}: ${r.error.message}`);
  if (r.status !== 0) {
    process.stderr.write(`${label} exited with ${r.status}:\n${(r.stderr || "").slice(0, 2000)}\n`);
    process.exit(2);
  }
  return r.stdout;
}

function byLine(text) {
  const m = new Map();
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    let line;
    try {
      line = JSON.parse(raw).line;
    } catch {
      line = undefined;
    }
    m.set(line ?? `?${m.size}`, raw);
  }
  return m;
}

function label(raw) {
  if (!raw) return "(none)";
  try {
    const d = JSON.parse(raw);
    return [d.action, d.detector ?? d.reason ?? d.budget].filter(Boolean).join("/");
  } catch {
    return "(unparsable)";
  }
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  let left, right;
  if (o.left) left = fs.readFileSync(o.left, "utf8");
  else {
    const lg = process.env.LOOPGUARD || path.resolve(here, "../../target/release/loopguard");
    const tpl = o.replayer ?? `${q(lg)} replay --config {config} {trace}`;
    left = run(tpl.replaceAll("{config}", q(o.config)).replaceAll("{trace}", q(o.trace)), [], "replayer", true);
  }
  if (o.right) right = fs.readFileSync(o.right, "utf8");
  else {
    const pkg = o.openclaw ?? path.join(here, "..", "openclaw", "node_modules", "openclaw");
    right = run(process.execPath, [path.join(here, "driver.mjs"), "--openclaw", pkg, ...o.driverArgs, "--config", o.config, o.trace], "driver");
  }
  const L = byLine(left);
  const R = byLine(right);
  const keys = [...new Set([...L.keys(), ...R.keys()])].sort((a, b) => (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))));
  const diffs = keys.filter((k) => L.get(k) !== R.get(k));
  if (diffs.length === 0) {
    process.stdout.write(`0 differing decision lines\n`);
    return 0;
  }
  process.stdout.write(`${diffs.length} differing decision lines (of ${keys.length})\n`);
  for (const k of diffs.slice(0, o.first)) {
    process.stdout.write(`line ${k}:\n  replayer: ${L.get(k) ?? "(missing)"}\n  openclaw: ${R.get(k) ?? "(missing)"}\n`);
  }
  if (o.summary) {
    const c = new Map();
    for (const k of diffs) {
      let kind = "?";
      try {
        kind = JSON.parse(L.get(k) ?? R.get(k)).kind;
      } catch {}
      let key = `${kind}: ${label(L.get(k))} -> ${label(R.get(k))}`;
      if (label(L.get(k)) === label(R.get(k))) {
        try {
          const a = JSON.parse(L.get(k));
          const b = JSON.parse(R.get(k));
          const f = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((x) => JSON.stringify(a[x]) !== JSON.stringify(b[x]));
          key += ` (${f.join(",")})`;
        } catch {}
      }
      c.set(key, (c.get(key) ?? 0) + 1);
    }
    process.stdout.write("summary (replayer -> openclaw):\n");
    for (const [k, v] of [...c.entries()].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${String(v).padStart(6)}  ${k}\n`);
  }
  return 1;
}

try {
  process.exitCode = main();
} catch (e) {
  process.stderr.write(`diff: ${e.message}\n`);
  process.exitCode = 2;
}
