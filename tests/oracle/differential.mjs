#!/usr/bin/env node
// Differential test: loopguard against the real OpenClaw packages on generated traces.
//
//   node differential.mjs [--long] [--seeds 1,2,3] [--events N] [--replayer CMD] [--keep DIR]
//                         [--only 2026.9|2026.7]
//
// For each seed it generates a trace with gen-trace.mjs and compares, decision line by decision
// line (diff.mjs):
//
//   A. loopguard with `loopguard.compat: "openclaw-2026.9"` against the driver running the
//      openclaw 2026.9.6 package: every event kind (all tool detectors and outcome rules, runs,
//      compactions, bot pairs with redeliveries and out-of-order timestamps, group threads), with
//      the config profiles 2026.9.6 can express (gen-trace `default`, `off`). Blocked calls are
//      reported as a 2026.9.6 gateway reports them: no tool_result (gen-trace --oracle).
//   B. loopguard `documented` (the default profile) against the driver running openclaw
//      2026.7.35, tool events only, without the deliberate spec choices (gen-trace
//      --without-spec-choices; docs/SPEC-CHOICES.md "documented vs 2026.7.35"), with the
//      profiles `default`, `thresholds` and `off`. Blocked calls are reported with 2026.7.35's
//      blocked result.
//
// The short run (default) is 3 seeds x 5,000 events per comparison, well under a minute; --long
// runs 8 seeds x 40,000 events. --replayer is a shell command template with {config} and {trace}
// (default: the native replayer, target/release/examples/replay_native, built with
// `cargo build --release -p loopguard-policy --example replay_native`); e.g.
// --replayer "target/debug/loopguard replay --config {config} {trace}" for the CLI.
//
// Prints one line per run ("0 differing decision lines", or the count and the first
// differences) and a total. Exit status: 0 when every run agrees, 1 when some decision differs,
// 2 when a run could not be made.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const PKG_9 = path.join(root, "tests", "openclaw", "node_modules", "openclaw");
const PKG_7 = path.join(root, "tests", "openclaw", "node_modules", "openclaw-2026.7.35");
const NATIVE = path.join(root, "target", "release", "examples", "replay_native");

function parseArgs(argv) {
  const o = { long: false, seeds: undefined, events: undefined, replayer: undefined, keep: undefined, only: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--long") o.long = true;
    else if (a === "--seeds") o.seeds = argv[++i].split(",").map(Number);
    else if (a === "--events") o.events = Number(argv[++i]);
    else if (a === "--replayer") o.replayer = argv[++i];
    else if (a === "--keep") o.keep = argv[++i];
    else if (a === "--only") o.only = argv[++i];
    else if (a === "-h" || a === "--help") o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  o.seeds ??= o.long ? [1, 2, 3, 4, 5, 6, 7, 8] : [1, 2, 3];
  o.events ??= o.long ? 40000 : 5000;
  if (o.seeds.some((s) => !Number.isInteger(s)) || !Number.isInteger(o.events) || o.events < 1) throw new Error("--seeds and --events must be integers");
  if (o.only && !["2026.9", "2026.7"].includes(o.only)) throw new Error("--only must be 2026.9 or 2026.7");
  return o;
}

const q = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

function node(args, label) {
  const r = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 1 << 30 });
  if (r.error || r.status !== 0) throw new Error(`${label} failed (${r.status ?? r.error}): ${(r.stderr || "").slice(0, 2000)}`);
  return r.stdout;
}

/** One comparison: generate, add the profile to the config, diff. Returns the differing count. */
function runOne(o, dir, { name, seed, profile, mix, pkg, compat, genArgs }) {
  const base = path.join(dir, `${name}-seed${seed}-${profile}`);
  const cfgGen = `${base}.config.json`;
  const trace = `${base}.trace.jsonl`;
  const args = [path.join(here, "gen-trace.mjs"), "--seed", String(seed), "--events", String(o.events), "--mix", mix, "--profile", profile, "--config-out", cfgGen, "--oracle", pkg, ...genArgs];
  fs.writeFileSync(trace, node(args, "gen-trace"));
  // The driver ignores the `loopguard` block, so one config serves both sides.
  const cfg = JSON.parse(fs.readFileSync(cfgGen, "utf8"));
  if (compat) cfg.loopguard = { ...(cfg.loopguard ?? {}), compat };
  const config = `${base}.json`;
  fs.writeFileSync(config, JSON.stringify(cfg, null, 2) + "\n");
  const tpl = o.replayer ?? `${q(NATIVE)} {config} {trace}`;
  const r = spawnSync(process.execPath, [path.join(here, "diff.mjs"), "--config", config, "--trace", trace, "--openclaw", pkg, "--replayer", tpl, "--first", "5"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    cwd: root,
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`diff failed (${r.status}): ${(r.stderr || r.stdout || "").slice(0, 2000)}`);
  const out = r.stdout.trimEnd();
  const count = Number(out.match(/^(\d+) differing/)?.[1] ?? NaN);
  const head = `  seed ${seed}, profile ${profile}, ${o.events} events: `;
  process.stdout.write(head + out.replaceAll("\n", "\n    ") + "\n");
  return count;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) {
    process.stdout.write("usage: node differential.mjs [--long] [--seeds 1,2,3] [--events N] [--replayer CMD] [--keep DIR] [--only 2026.9|2026.7]\n");
    return 0;
  }
  if (!o.replayer && !fs.existsSync(NATIVE)) throw new Error(`${NATIVE} is missing: run \`cargo build --release -p loopguard-policy --example replay_native\` or pass --replayer`);
  const dir = o.keep ?? fs.mkdtempSync(path.join(os.tmpdir(), "lg-differential-"));
  fs.mkdirSync(dir, { recursive: true });
  const started = Date.now();
  let total = 0;
  let runs = 0;
  try {
    if (o.only !== "2026.7") {
      process.stdout.write('A. loopguard compat "openclaw-2026.9" vs openclaw 2026.9.6, every event kind:\n');
      o.seeds.forEach((seed, i) => {
        const profile = i % 3 === 2 ? "off" : "default";
        total += runOne(o, dir, { name: "openclaw-2026.9", seed, profile, mix: "all", pkg: PKG_9, compat: "openclaw-2026.9", genArgs: [] });
        runs += 1;
      });
    }
    if (o.only !== "2026.9") {
      process.stdout.write('B. loopguard "documented" vs openclaw 2026.7.35, tool events, without the spec choices:\n');
      o.seeds.forEach((seed, i) => {
        const profile = ["default", "thresholds", "off"][i % 3];
        total += runOne(o, dir, { name: "documented", seed, profile, mix: "tool", pkg: PKG_7, compat: undefined, genArgs: ["--without-spec-choices"] });
        runs += 1;
      });
    }
  } finally {
    if (!o.keep) fs.rmSync(dir, { recursive: true, force: true });
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`total: ${Number.isNaN(total) ? "?" : total} differing decision lines in ${runs} runs (${secs} s)${o.keep ? `; files in ${dir}` : ""}\n`);
  return total === 0 ? 0 : 1;
}

try {
  process.exitCode = main();
} catch (e) {
  process.stderr.write(`differential: ${e.message}\n`);
  process.exitCode = 2;
}
