#!/usr/bin/env node
// OpenClaw oracle driver: replays a loopguard trace (docs/spec/trace-format.md) through the guard
// functions of a real, installed OpenClaw package and prints one decision line per event, in the
// format of `loopguard replay`.
//
//   node driver.mjs --openclaw <openclaw package dir> --config <config.json|json5> <trace.jsonl|->
//
// Options:
//   --strict-config       exit 3 when the config sets tools.loopDetection keys that the package's
//                         runtime does not read (2026.9.6 reads only `enabled`; its config schema
//                         rejects the rest). Without it those keys are reported on stderr and
//                         ignored, as the runtime ignores them.
//   --ignore-unsupported  run on when the config uses something the package has no code for
//                         (botLoopProtection.maxConversationBotEvents, the burst budget): the key
//                         is then ignored, as the package ignores it. Without it: exit 3.
//   --bindings            print which dist/ chunk each bound function came from (stderr) and exit.
//
// Exit codes: 0 ok; 2 bad arguments, config or trace line; 3 unsupported by this package; 1 other.
// See NOTES.md for what is called for each event kind and why.

import fs from "node:fs";

import { isolate } from "./lib/isolate.mjs";

process.stdout.on("error", (e) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});
isolate();

const { OpenClaw, BindError } = await import("./lib/openclaw.mjs");
const { parseEventLine, traceLines, formatDecision, TraceError } = await import("./lib/trace.mjs");
const { UnsupportedError, UsageError, loadConfig, checkToolConfig, ToolSide, BotSide, GroupSide } = await import("./lib/sides.mjs");

function parseArgs(argv) {
  const o = { strictConfig: false, ignoreUnsupported: false, bindings: false };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--openclaw") o.openclaw = argv[++i];
    else if (a === "--config") o.config = argv[++i];
    else if (a === "--strict-config") o.strictConfig = true;
    else if (a === "--ignore-unsupported") o.ignoreUnsupported = true;
    else if (a === "--bindings") o.bindings = true;
    else if (a === "-h" || a === "--help") o.help = true;
    else if (a.startsWith("--")) throw new UsageError(`unknown option ${a}`);
    else rest.push(a);
  }
  if (o.help) return o;
  if (!o.openclaw) throw new UsageError("--openclaw <package dir> is required");
  if (o.bindings) return o;
  if (!o.config) throw new UsageError("--config <file> is required");
  if (rest.length !== 1) throw new UsageError("exactly one trace path (or -) is required");
  o.trace = rest[0];
  return o;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`driver: ${e.message}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write("usage: node driver.mjs --openclaw <pkg dir> --config <config.json5> <trace.jsonl|->\n");
    return 0;
  }
  const oc = new OpenClaw(opts.openclaw);
  if (opts.bindings) {
    const T = await oc.tool();
    await oc.bot();
    const G = await oc.group();
    process.stderr.write(`openclaw ${oc.version} (tool caller: ${T.mode}; group coordinator: ${G ? "yes" : "no"})\n`);
    for (const [k, v] of Object.entries(oc.files)) process.stderr.write(`  ${k}: dist/${v}\n`);
    return 0;
  }
  const cfg = loadConfig(opts.config, opts.openclaw);
  const text = opts.trace === "-" ? fs.readFileSync(0, "utf8") : fs.readFileSync(opts.trace, "utf8");

  let tool, bot, group;
  const out = [];
  const flush = () => {
    if (out.length) {
      process.stdout.write(out.join("\n") + "\n");
      out.length = 0;
    }
  };
  // Debugging aid: ORACLE_DUMP_AT=<line>[,<line>...] prints the event's session history (as the
  // package holds it) to stderr before that line is handled.
  const dumpAt = new Set((process.env.ORACLE_DUMP_AT ?? "").split(",").filter(Boolean).map(Number));
  for (const [lineNo, raw] of traceLines(text)) {
    const ev = parseEventLine(raw, lineNo);
    if (dumpAt.has(lineNo) && tool && ev.session !== undefined) {
      const st = tool.R.getDiagnosticSessionState({ sessionKey: ev.session });
      process.stderr.write(`-- line ${lineNo} session ${ev.session}: ${(st.toolCallHistory ?? []).length} records\n`);
      for (const r of st.toolCallHistory ?? [])
        process.stderr.write(`   ${JSON.stringify({ ...r, argsHash: r.argsHash?.slice(0, r.toolName.length + 9), resultHash: r.resultHash?.slice(0, 10), failureIdentityHash: r.failureIdentityHash?.slice(0, 8), timestamp: undefined })}\n`);
    }
    let d;
    switch (ev.kind) {
      case "tool_call":
      case "tool_result":
      case "compaction": {
        if (!tool) {
          const T = await oc.tool();
          checkToolConfig(cfg, T, opts, oc.version);
          tool = new ToolSide(T, cfg);
        }
        d = ev.kind === "tool_call" ? await tool.toolCall(ev, lineNo) : ev.kind === "tool_result" ? tool.toolResult(ev) : tool.compaction(ev);
        break;
      }
      case "bot_message": {
        if (!bot) bot = new BotSide(await oc.bot(), cfg, opts, oc.version);
        d = bot.message(ev, lineNo);
        break;
      }
      default: {
        if (!group) group = new GroupSide(await oc.group(), cfg, oc.version);
        d = ev.kind === "group_message" ? await group.message(ev, lineNo) : ev.kind === "group_replies" ? await group.replies(ev, lineNo) : await group.cancel(ev, lineNo);
      }
    }
    out.push(formatDecision({ line: lineNo, kind: ev.kind, ...d }));
    if (out.length >= 4096) flush();
  }
  flush();
  return 0;
}

let code;
try {
  code = await main();
} catch (e) {
  if (e instanceof TraceError || e instanceof UsageError) {
    process.stderr.write(`driver: error: ${e.message}\n`);
    code = 2;
  } else if (e instanceof UnsupportedError) {
    process.stderr.write(`driver: unsupported: ${e.message}\n`);
    code = 3;
  } else if (e instanceof BindError) {
    process.stderr.write(`driver: cannot bind the package: ${e.message}\n`);
    code = 1;
  } else {
    process.stderr.write(`driver: ${e?.stack ?? e}\n`);
    code = 1;
  }
}
process.exitCode = code;
// The package may leave handles (timers, diagnostics) open; the replay is complete.
process.stdout.write("", () => process.exit(code));
