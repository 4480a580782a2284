#!/usr/bin/env node
// Random loopguard traces (docs/spec/trace-format.md) for the OpenClaw oracle, deterministic per seed.
//
//   node gen-trace.mjs --seed N --events M [--mix tool|bot|group|all] [--profile NAME] [--config-out FILE]
//                      [--oracle PKG_DIR] [--without-spec-choices]
//
// The trace goes to stdout (JSON Lines). --config-out writes the matching config (JSON) to FILE.
//
// --oracle PKG_DIR: report blocked calls as a gateway running that OpenClaw package would. The
//   generator feeds every tool event it emits to the package (the same calls the driver makes,
//   lib/sides.mjs) and learns which calls are blocked: with 2026.9.6 no tool_result follows a
//   blocked call (the wrapper never runs it, NOTES §7); with 2026.7.35 the tool_result is the
//   blocked result the wrapper returns (buildBlockedToolResult's shape). Without it, blocked calls
//   cannot be known and an episode sometimes reports a 7.35-style veto result after its 20th call.
// --without-spec-choices: leave out the shapes where the documented behaviour deliberately
//   differs from the OpenClaw releases (lone surrogates, `update_plan` plans, tool names that
//   the OpenClaw callers would normalize; docs/SPEC-CHOICES.md "documented vs 2026.7.35"), for
//   comparing `documented` with 2026.7.35.
// Events come in "episodes" (a loop of identical calls, an alternation, a poll loop, a bot pair
// storm, a group thread, ...) that run interleaved with each other and with noise, so that streaks
// really reach the warning (10), critical (20) and circuit-breaker (30) thresholds.
//
// Profiles (what the config turns on; the trace shapes are the same):
//   default     tools.loopDetection {enabled:true}; agents with enabled unset / false; channel pair
//               settings at every layer; qualified and legacy broadcast entries (parallel)
//   off         no tools.loopDetection: rolling detectors off, post-compaction guard on
//   thresholds  like default plus 2026.7.35-era thresholds, detector switches and a
//               postCompactionGuard window on some agents (2026.9.6 ignores these keys)
//   burst       like default plus botLoopProtection.maxConversationBotEvents (the burst budget;
//               the OpenClaw oracle cannot replay it: use it against loopguard only)
//
// No clock, no Math.random: everything comes from the seeded PRNG (lib/gen/rng.mjs).
//
// Layout: lib/gen/config.mjs (the config per profile), lib/gen/families.mjs (tool-call shapes),
// lib/gen/tool-episodes.mjs and lib/gen/chat-episodes.mjs (episodes), lib/gen/generator.mjs (state
// and scheduler). This file parses arguments, attaches the oracle and writes the output.

import fs from "node:fs";
import { buildConfig } from "./lib/gen/config.mjs";
import { Gen } from "./lib/gen/generator.mjs";

// ---------------------------------------------------------------------------------------------
// Arguments.

function parseArgs(argv) {
  const o = { seed: 1, events: 1000, mix: "all", profile: "default", configOut: undefined, oracle: undefined, withoutSpecChoices: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--seed") o.seed = Number(argv[++i]);
    else if (a === "--events") o.events = Number(argv[++i]);
    else if (a === "--mix") o.mix = argv[++i];
    else if (a === "--profile") o.profile = argv[++i];
    else if (a === "--config-out") o.configOut = argv[++i];
    else if (a === "--oracle") o.oracle = argv[++i];
    else if (a === "--without-spec-choices") o.withoutSpecChoices = true;
    else if (a === "-h" || a === "--help") o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.seed) || !Number.isInteger(o.events) || o.events < 0) throw new Error("--seed and --events must be integers");
  if (!["tool", "bot", "group", "all"].includes(o.mix)) throw new Error("--mix must be tool, bot, group or all");
  if (!["default", "off", "thresholds", "burst"].includes(o.profile)) throw new Error("--profile must be default, off, thresholds or burst");
  return o;
}

async function attachOracle(gen, opts) {
  // Imported only here: the package must be isolated from this machine first.
  const { isolate } = await import("./lib/isolate.mjs");
  isolate();
  const { OpenClaw } = await import("./lib/openclaw.mjs");
  const { parseEventLine } = await import("./lib/trace.mjs");
  const { ToolSide } = await import("./lib/sides.mjs");
  const oc = new OpenClaw(opts.oracle);
  const cfg = JSON.parse(JSON.stringify(buildConfig(opts.profile)));
  gen.oracle = { side: new ToolSide(await oc.tool(), cfg), parse: (line) => parseEventLine(line, 0) };
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`gen-trace: ${e.message}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write("usage: node gen-trace.mjs --seed N --events M [--mix tool|bot|group|all] [--profile default|off|thresholds|burst] [--config-out FILE] [--oracle PKG_DIR] [--without-spec-choices]\n");
    return 0;
  }
  if (opts.configOut) fs.writeFileSync(opts.configOut, JSON.stringify(buildConfig(opts.profile), null, 2) + "\n");
  const gen = new Gen(opts);
  if (opts.oracle) await attachOracle(gen, opts);
  const lines = await gen.run();
  if (lines.length) process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

const code = await main();
// The oracle's package may leave handles open; the trace is complete.
process.stdout.write("", () => process.exit(code));
