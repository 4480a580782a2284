// The oracle sides' errors, the config file reader and the config checks against what the
// package reads (re-exported by sides.mjs). See NOTES.md §1 and §7.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

export class UnsupportedError extends Error {}
export class UsageError extends Error {}

export function loadConfig(file, pkgDir) {
  const text = fs.readFileSync(file, "utf8");
  let JSON5;
  try {
    JSON5 = createRequire(path.join(path.resolve(pkgDir), "package.json"))("json5");
  } catch {
    JSON5 = null;
  }
  let cfg;
  try {
    cfg = JSON5 ? JSON5.parse(text) : JSON.parse(text);
  } catch (e) {
    throw new UsageError(`config ${file}: ${e.message}`);
  }
  if (cfg === null || typeof cfg !== "object" || Array.isArray(cfg)) throw new UsageError(`config ${file}: not an object`);
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Config checks against what the package reads.

function loopDetectionBlocks(cfg) {
  const out = [];
  if (cfg.tools?.loopDetection !== undefined) out.push(["tools.loopDetection", cfg.tools.loopDetection]);
  const list = Array.isArray(cfg.agents?.list) ? cfg.agents.list : [];
  list.forEach((a, i) => {
    if (a?.tools?.loopDetection !== undefined) out.push([`agents.list[${i}].tools.loopDetection`, a.tools.loopDetection]);
  });
  return out;
}

export function checkToolConfig(cfg, T, opts, version) {
  // 2026.9.6's detectToolCallLoop reads only `config.enabled` (thresholds, history size, detector
  // switches and the post-compaction window are constants), and resolveToolLoopDetectionConfig
  // merges only `enabled`. 2026.7.35 reads every documented key.
  if (T.mode !== "batch") return;
  for (const [where, block] of loopDetectionBlocks(cfg)) {
    if (block === null || typeof block !== "object") continue;
    const extra = Object.keys(block).filter((k) => k !== "enabled");
    if (extra.length === 0) continue;
    const msg = `openclaw ${version} reads only \`enabled\` from ${where} (its config schema rejects ${extra.join(", ")}; the runtime uses fixed values)`;
    if (opts.strictConfig) throw new UnsupportedError(msg);
    process.stderr.write(`driver: note: ${msg}; ignored\n`);
  }
}
