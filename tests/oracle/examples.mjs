#!/usr/bin/env node
// Writes examples/traces/<name>/expected-openclaw-2026.9.jsonl: the decisions of the real
// openclaw 2026.9.6 package (driver.mjs) on each example's trace, with the example's config plus
// `loopguard.compat: "openclaw-2026.9"` (the driver ignores the `loopguard` block). These are what
// loopguard must reproduce under that profile (guest/tests/compat_examples.rs).
//
//   node examples.mjs           (re)write the files
//   node examples.mjs --check   fail if a file is missing or differs from the driver's output
//
// An example is skipped (no file; its README says why) when the package cannot run it:
//   - the driver exits 3 (e.g. the burst budget, `maxConversationBotEvents`, has no code in 2026.9.6);
//   - its config sets tools.loopDetection knobs to values other than 2026.9.6's fixed ones: the
//     package ignores them (its schema rejects them), loopguard honours knobs set explicitly, so
//     the two differ by design. Knobs set to the fixed values (30/10/10/20/30, detectors on,
//     window 3) are run with the keys ignored, as the package's runtime ignores them.

import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const PKG = path.join(root, "tests", "openclaw", "node_modules", "openclaw");
const JSON5 = createRequire(path.join(PKG, "package.json"))("json5");
const FILE = "expected-openclaw-2026.9.jsonl";

// 2026.9.6's constants (NOTES §2.1, §3).
const FIXED = { historySize: 30, warningThreshold: 10, unknownToolThreshold: 10, criticalThreshold: 20, globalCircuitBreakerThreshold: 30 };
const FIXED_DETECTORS = { genericRepeat: true, knownPollNoProgress: true, pingPong: true };

/** The loopDetection keys whose values 2026.9.6 cannot reproduce. */
function inexpressible(cfg) {
  const blocks = [cfg.tools?.loopDetection, ...(cfg.agents?.list ?? []).map((a) => a?.tools?.loopDetection)].filter((b) => b && typeof b === "object");
  const bad = [];
  for (const b of blocks) {
    for (const [k, v] of Object.entries(b)) {
      if (k === "enabled") continue;
      if (k in FIXED && v === FIXED[k]) continue;
      if (k === "detectors" && v && Object.entries(v).every(([d, on]) => FIXED_DETECTORS[d] === on)) continue;
      if (k === "postCompactionGuard" && v && Object.keys(v).every((w) => w === "windowSize") && (v.windowSize ?? 3) === 3) continue;
      bad.push(`${k}: ${JSON.stringify(v)}`);
    }
  }
  return bad;
}

function main() {
  const check = process.argv.includes("--check");
  const dir = path.join(root, "examples", "traces");
  let ok = true;
  for (const name of fs.readdirSync(dir).sort()) {
    const ex = path.join(dir, name);
    const cfgFile = ["config.json5", "config.json"].map((f) => path.join(ex, f)).find((f) => fs.existsSync(f));
    if (!cfgFile || !fs.existsSync(path.join(ex, "trace.jsonl"))) continue;
    const cfg = JSON5.parse(fs.readFileSync(cfgFile, "utf8"));
    const out = path.join(ex, FILE);
    const bad = inexpressible(cfg);
    let skip;
    let body;
    if (bad.length) skip = `sets knobs 2026.9.6 cannot express (${bad.join(", ")})`;
    else {
      cfg.loopguard = { ...(cfg.loopguard ?? {}), compat: "openclaw-2026.9" };
      const tmp = path.join(ex, ".compat-config.json");
      fs.writeFileSync(tmp, JSON.stringify(cfg));
      const r = spawnSync(process.execPath, [path.join(here, "driver.mjs"), "--openclaw", PKG, "--config", tmp, path.join(ex, "trace.jsonl")], { encoding: "utf8" });
      fs.rmSync(tmp);
      if (r.status === 3) skip = `unsupported by the package: ${r.stderr.trim().replace(/^driver: unsupported: /, "")}`;
      else if (r.status !== 0) throw new Error(`${name}: driver failed (${r.status}): ${r.stderr}`);
      else body = r.stdout;
    }
    if (skip) {
      process.stderr.write(`${name}: skipped: ${skip}\n`);
      if (fs.existsSync(out)) {
        if (check) ok = false;
        else fs.rmSync(out);
      }
      continue;
    }
    if (check) {
      const prev = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : undefined;
      if (prev !== body) {
        process.stderr.write(`${name}: ${FILE} is missing or out of date\n`);
        ok = false;
      } else process.stderr.write(`${name}: ok\n`);
    } else {
      fs.writeFileSync(out, body);
      process.stderr.write(`${name}: wrote ${FILE} (${body.split("\n").filter(Boolean).length} decisions)\n`);
    }
  }
  return ok ? 0 : 1;
}

try {
  process.exitCode = main();
} catch (e) {
  process.stderr.write(`examples: ${e.message}\n`);
  process.exitCode = 2;
}
