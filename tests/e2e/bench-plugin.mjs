#!/usr/bin/env node
// What the loopguard plugin costs inside the gateway, beside OpenClaw's own guard. Not a test:
// it prints a table (and, with --json FILE, writes the figures).
//
//   source scripts/node24.sh && "$NODE24_BIN/node" tests/e2e/bench-plugin.mjs [--calls 60] [--repeat 2]
//       [--model-delay-ms 0] [--only LABEL[,LABEL…]] [--json out.json]
//
// 1. The guard calls alone, in this process, same workload for both (N tool calls over 50
//    sessions, arguments cycling so that nothing trips): OpenClaw 2026.9.6's own detector
//    functions (bound from its dist/ by tests/oracle/lib) vs the plugin's hooks through a
//    stand-in api (before_tool_call + the result middleware + after_tool_call, including the
//    round trip to the policy worker). performance.now() around the calls.
// 2. The real gateway, three times, the same turn (`--calls` exec calls with cycling arguments):
//    no guard, the core guard on, the plugin on (core off). Per tool call: the plugin's own
//    in-hook time (its decision log, measured in the hooks) and the end-to-end step time (the gap
//    between the fake model's consecutive requests: model answer + tool + every hook). Memory:
//    the gateway's RSS once a second for its first STARTUP_S seconds after ready, no traffic (its
//    peak: OpenClaw's plugin loader reads and hashes every file of a plugin's dependencies then),
//    its RSS after the turn (VmRSS, VmHWM), and the plugin's own footprint measured in a fresh
//    Node process.
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import * as h from "./harness.mjs";
import * as p from "./plugin-helpers.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const CALLS = Number(opt("--calls", 60));
const REPEAT = Math.max(1, Math.min(5, Number(opt("--repeat", 2))));
const JSON_OUT = opt("--json", null);
/** How long the fake model holds each tool-call answer back (a real model takes seconds). */
const MODEL_DELAY_MS = Math.max(0, Math.min(10_000, Number(opt("--model-delay-ms", 0))));
const IN_PROCESS_N = 4000;
/** Calls spaced like a gateway's (a tool call every few tens of ms): caches and JIT state go cold between them. */
const GAPPED_N = 150;
const GAP_MS = 40;
/** How long the gateway's start-up memory is sampled after it is ready (the loader's work ends within ~13 s). */
const STARTUP_S = 16;

const q = (arr, f) => {
  if (!arr.length) return NaN;
  const s = [...arr].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(f * (s.length - 1)))];
};
const fmt = (v, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : "n/a");
const workloadCall = (i) => ({ session: `agent:main:b${i % 50}`, run: `run-${i % 50}`, tool: "exec", args: { command: `echo ${i % 7}` } });
const RESULT = (i) => ({ content: [{ type: "text", text: String(i % 7) }], details: { status: "completed", exitCode: 0, aggregated: String(i % 7) } });

/** The core's guard functions on the workload (the oracle's binding of 2026.9.6's dist/). */
async function coreInProcess() {
  // run in a child: the oracle isolates the package (state dir, console) process-wide
  const script = `
    import { isolate } from ${JSON.stringify(path.join(h.REPO, "tests/oracle/lib/isolate.mjs"))};
    isolate();
    const { OpenClaw } = await import(${JSON.stringify(path.join(h.REPO, "tests/oracle/lib/openclaw.mjs"))});
    const { ToolSide } = await import(${JSON.stringify(path.join(h.REPO, "tests/oracle/lib/sides.mjs"))});
    const oc = new OpenClaw(${JSON.stringify(h.OPENCLAW_DIR)});
    const side = new ToolSide(await oc.tool(), { tools: { loopDetection: { enabled: true } } });
    const one = async (i) => {
      const c = (${workloadCall.toString()})(i);
      const ev = { kind: "tool_call", session: c.session, run: c.run, call_id: "c" + i, tool: c.tool, args: c.args };
      const t = performance.now();
      const v = await side.toolCall(ev, i + 1);
      if (v.action !== "block") side.toolResult({ ...ev, kind: "tool_result", result: (${RESULT.toString()})(i) });
      return performance.now() - t;
    };
    const times = [];
    for (let i = 0; i < ${IN_PROCESS_N}; i += 1) times.push(await one(i));
    const gapped = [];
    for (let i = 0; i < ${GAPPED_N}; i += 1) {
      await new Promise((r) => setTimeout(r, ${GAP_MS}));
      gapped.push(await one(${IN_PROCESS_N} + i));
    }
    process.stdout.write(JSON.stringify({ times: times.slice(1000), gapped }));
  `;
  const res = spawnSync(h.NODE, ["--input-type=module", "-e", script], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (res.status !== 0) throw new Error(`core in-process bench failed: ${res.stderr.slice(-2000)}`);
  return JSON.parse(res.stdout);
}

/** The plugin's hooks on the workload, and its memory footprint, in a fresh process. */
function pluginInProcess() {
  const script = `
    import fs from "node:fs";
    const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
    globalThis.gc?.();
    const rss0 = rss();
    const { fakeGateway, reset } = await import(${JSON.stringify(path.join(p.PLUGIN_DIR, "test/helpers.mjs"))});
    const g = fakeGateway({ config: {} });
    const one = (i) => {
      const c = (${workloadCall.toString()})(i);
      const t = performance.now();
      g.toolCall({ session: c.session, run: c.run, tool: c.tool, params: c.args, result: (${RESULT.toString()})(i) });
      return performance.now() - t;
    };
    const times = [];
    for (let i = 0; i < ${IN_PROCESS_N}; i += 1) times.push(one(i));
    globalThis.gc?.();
    const rss1 = rss();
    const gapped = [];
    for (let i = 0; i < ${GAPPED_N}; i += 1) {
      await new Promise((r) => setTimeout(r, ${GAP_MS}));
      gapped.push(one(${IN_PROCESS_N} + i));
    }
    const stats = g.rt.client.call("stats").value;
    const compat = g.rt.compat;
    const isolation = g.rt.settings.isolation;
    reset();
    process.stdout.write(JSON.stringify({ times: times.slice(1000), gapped, rssBeforeMiB: rss0, rssAfterMiB: rss1, policyMemoryBytes: stats.memoryBytes, compat, isolation }));
  `;
  const res = spawnSync(h.NODE, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (res.status !== 0) throw new Error(`plugin in-process bench failed: ${res.stderr.slice(-2000)}`);
  return JSON.parse(res.stdout);
}

function procStatus(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN);
  return { rssMiB: kb("VmRSS") / 1024, hwmMiB: kb("VmHWM") / 1024 };
}

/** One gateway, one turn of CALLS exec calls; returns the step times and the gateway's memory. */
async function gatewayRun(label, { loopDetection, plugin, trivial }) {
  const dirs = h.makeRoot(`bench-${label}`);
  const steps = Array.from({ length: CALLS }, (_, i) => ({ call: "exec", args: { command: `echo ${i % 7}` } }));
  const model = await h.startModel({ out: dirs.out, config: { scenarios: { bench: { maxToolsPerTurn: CALLS + 5, delayMs: MODEL_DELAY_MS, steps: [...steps, { text: "Bench done." }] } } } });
  const decisionLog = path.join(dirs.out, "decisions.jsonl");
  let gw;
  try {
    gw = await h.startGateway({
      model,
      dirs,
      label: `bench-${label}`,
      loopDetection,
      plugins: plugin
        ? [{ dir: p.PLUGIN_DIR, id: p.PLUGIN_ID, config: { decisionLog } }]
        : trivial
          ? [{ ...h.writeProbePlugin(dirs.root, { id: "lg-trivial" }), config: { blockAt: 1_000_000 } }]
          : [],
    });
    const startup = [];
    for (let i = 0; i < STARTUP_S; i += 1) {
      startup.push(procStatus(gw.pid).rssMiB);
      await h.sleep(1_000);
    }
    const memStart = procStatus(gw.pid);
    // a warm-up turn, then the measured one
    await h.runAgentTurn(gw, { sessionKey: "bench-warm", message: "[scenario:warmup] [session:bench-warm] warm up" });
    const t0 = Date.now();
    const res = await h.runAgentTurn(gw, { sessionKey: "bench", message: "[scenario:bench] [session:bench] run the commands" });
    const wallMs = Date.now() - t0;
    if (res.code !== 0) throw new Error(`${label}: the turn failed: ${res.stderr.slice(-1500)}`);
    await h.sleep(3_000);
    const mem = { ...procStatus(gw.pid), startRssMiB: memStart.rssMiB, startupPeakMiB: Math.max(...startup), threads: fs.readdirSync(`/proc/${gw.pid}/task`).length };
    const reqs = model.chatRequests("[session:bench]");
    const gaps = reqs.slice(1).map((r, i) => r.ts - reqs[i].ts);
    const log = p.readDecisions(decisionLog, { pid: gw.pid });
    const ds = log.filter((d) => d.event === "decision" && String(d.session).endsWith(":bench"));
    // a tool call's own path: before_tool_call (which records any outcome still queued) and
    // after_tool_call, which only queues the outcome (queueMs); where the outcome was recorded
    // off that path (a model call starting), its policy time is reported on its own
    const onPath = (d) => (d.hook === "after_tool_call" ? d.queueMs ?? d.ms : d.ms);
    const byCall = new Map();
    for (const d of ds) byCall.set(d.callId, (byCall.get(d.callId) ?? 0) + onPath(d));
    const inHook = [...byCall.values()];
    const outcomes = ds.filter((d) => d.hook === "after_tool_call");
    const split = {
      before: ds.filter((d) => d.hook === "before_tool_call").map((d) => d.ms),
      after: outcomes.map(onPath),
      recorded: outcomes.filter((d) => d.recordedAt === "model_call_started").map((d) => d.ms),
      recordedAt: outcomes.map((d) => d.recordedAt ?? "after_tool_call"),
    };
    const ready = log.find((d) => d.event === "ready");
    // the priming call the plugin makes when a model call starts (off the tool call's path)
    const primes = log.filter((d) => d.event === "prime").map((d) => d.ms);
    if (process.env.BENCH_DUMP) fs.writeFileSync(process.env.BENCH_DUMP, JSON.stringify({ inHook, ready }, null, 1));
    return { label, calls: reqs.length - 1, wallMs, gaps, inHook, split, primes, mem, ready };
  } finally {
    await gw?.stop();
    await model.stop();
    if (gw) await gw.cleanup();
    else await h.cleanupRoot(dirs.root);
  }
}

async function main() {
  if (!fs.existsSync(path.join(p.PLUGIN_DIR, "node_modules/loopguard"))) {
    throw new Error("packages/openclaw-plugin/node_modules/loopguard is missing: run node scripts/pack.mjs there first");
  }
  h.log("in-process: the core's detector functions");
  const { times: core, gapped: coreGapped } = await coreInProcess();
  h.log("in-process: the plugin's hooks");
  const plug = pluginInProcess();
  const only = opt("--only", null);
  const configs = [
    ["no guard", { loopDetection: false, plugin: false }],
    ["core guard", { loopDetection: true, plugin: false }],
    // what loading any plugin costs the gateway (its loader, a second registration): one
    // before_tool_call hook that counts, so that the loopguard row's memory can be read beside it
    ["trivial plugin", { loopDetection: false, plugin: false, trivial: true }],
    ["loopguard plugin", { loopDetection: false, plugin: true }],
  ].filter(([l]) => !only || only.split(",").some((o) => l.includes(o)));
  // interleaved repeats (the gateway's own RSS varies by tens of MiB from run to run): the
  // figures are medians over the repeats, the per-call samples pooled
  const all = new Map(configs.map(([l]) => [l, []]));
  for (let k = 0; k < REPEAT; k += 1) {
    for (const [label, o] of configs) {
      h.log(`gateway: ${label} (${k + 1}/${REPEAT})`);
      all.get(label).push(await gatewayRun(label, o));
    }
  }
  const median = (xs) => q(xs, 0.5);
  const runs = configs.map(([label]) => {
    const rs = all.get(label);
    return {
      label,
      calls: rs[0].calls,
      wallMs: median(rs.map((r) => r.wallMs)),
      gaps: rs.flatMap((r) => r.gaps),
      inHook: rs.flatMap((r) => r.inHook),
      before: rs.flatMap((r) => r.split.before),
      after: rs.flatMap((r) => r.split.after),
      recorded: rs.flatMap((r) => r.split.recorded),
      recordedAt: rs.flatMap((r) => r.split.recordedAt),
      primes: rs.flatMap((r) => r.primes),
      mem: {
        rssMiB: median(rs.map((r) => r.mem.rssMiB)),
        hwmMiB: median(rs.map((r) => r.mem.hwmMiB)),
        startRssMiB: median(rs.map((r) => r.mem.startRssMiB)),
        startupPeakMiB: median(rs.map((r) => r.mem.startupPeakMiB)),
        startupPeaks: rs.map((r) => Math.round(r.mem.startupPeakMiB)),
        threads: median(rs.map((r) => r.mem.threads)),
        samples: rs.map((r) => Math.round(r.mem.rssMiB)),
        growthMiB: median(rs.map((r) => r.mem.rssMiB - r.mem.startRssMiB)),
        policyStartMiB: median(rs.map((r) => (r.ready ? r.ready.rssMiB - r.ready.rssAtStartMiB : NaN))),
      },
    };
  });
  const none = runs.find((r) => r.label === "no guard");
  const trivial = runs.find((r) => r.label === "trivial plugin");
  const rows = [
    ["", "per tool call p50 (ms)", "p90 (ms)", "p99 (ms)", "e2e step p50 (ms)", "e2e step p99 (ms)", `start-up peak RSS, ${STARTUP_S} s (MiB)`, "Δ vs trivial plugin (MiB)", "gateway RSS after (MiB)", "Δ vs no guard (MiB)", "Δ vs trivial plugin (MiB)", "RSS samples", "threads"],
    ...runs.map((r) => [
      r.label,
      r.label === "loopguard plugin" ? fmt(q(r.inHook, 0.5)) : r.label === "core guard" ? `${fmt(q(coreGapped, 0.5))}*` : "–",
      r.label === "loopguard plugin" ? fmt(q(r.inHook, 0.9)) : r.label === "core guard" ? `${fmt(q(coreGapped, 0.9))}*` : "–",
      r.label === "loopguard plugin" ? fmt(q(r.inHook, 0.99)) : r.label === "core guard" ? `${fmt(q(coreGapped, 0.99))}*` : "–",
      fmt(q(r.gaps, 0.5), 1),
      fmt(q(r.gaps, 0.99), 1),
      fmt(r.mem.startupPeakMiB, 0),
      !trivial || r.label !== "loopguard plugin" ? "–" : fmt(r.mem.startupPeakMiB - trivial.mem.startupPeakMiB, 0),
      fmt(r.mem.rssMiB, 0),
      !none || r === none ? "–" : fmt(r.mem.rssMiB - none.mem.rssMiB, 0),
      !trivial || r.label !== "loopguard plugin" ? "–" : fmt(r.mem.rssMiB - trivial.mem.rssMiB, 0),
      r.mem.samples.join(" "),
      String(r.mem.threads),
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const line = (r) => `| ${r.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
  const out = [
    `OpenClaw ${JSON.parse(fs.readFileSync(path.join(h.OPENCLAW_DIR, "package.json"), "utf8")).version}, Node ${process.version}, ${CALLS} exec calls per turn, model answers held ${MODEL_DELAY_MS} ms, ${REPEAT} gateway run(s) per configuration (medians), plugin compat ${plug.compat}`,
    line(rows[0]),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...rows.slice(1).map(line),
    `start-up peak RSS per run (MiB): ${runs.map((r) => `${r.label} ${r.mem.startupPeaks.join(" ")}`).join(", ")}`,
    `RSS growth from ${STARTUP_S} s after ready to after the turns: ${runs.map((r) => `${r.label} +${fmt(r.mem.growthMiB, 0)} MiB`).join(", ")}`,
    ...runs.filter((r) => r.before.length).map((r) => `${r.label}: before_tool_call p50 ${fmt(q(r.before, 0.5))} / p99 ${fmt(q(r.before, 0.99))} ms, after_tool_call p50 ${fmt(q(r.after, 0.5))} / p99 ${fmt(q(r.after, 0.99))} ms`),
    ...runs.filter((r) => r.recordedAt.length).map((r) => `${r.label}: outcomes recorded at ${Object.entries(Object.groupBy(r.recordedAt, (x) => x)).map(([k, v]) => `${k} ×${v.length}`).join(", ")}; at model_call_started (off the tool call's path) p50 ${fmt(q(r.recorded, 0.5))} / p99 ${fmt(q(r.recorded, 0.99))} ms`),
    ...runs.filter((r) => r.primes.length).map((r) => `${r.label}: priming when a model call starts (${r.primes.length} calls, while the gateway waits for the model): p50 ${fmt(q(r.primes, 0.5))} ms, p99 ${fmt(q(r.primes, 0.99))} ms`),
    ...runs.filter((r) => Number.isFinite(r.mem.policyStartMiB)).map((r) => `${r.label}: the gateway's RSS rose ${fmt(r.mem.policyStartMiB, 1)} MiB while the plugin created its policy instance (same process, at gateway_start)`),
    "",
    `in-process, same workload (${IN_PROCESS_N - 1000} calls after 1000 warm-up, 50 sessions):`,
    `  core guard functions (2026.9.6 dist/, detect + record + outcome): p50 ${fmt(q(core, 0.5))} ms, p99 ${fmt(q(core, 0.99))} ms`,
    `  plugin hooks (before + middleware + after, isolation ${plug.isolation}):            p50 ${fmt(q(plug.times, 0.5))} ms, p99 ${fmt(q(plug.times, 0.99))} ms`,
    `spaced ${GAP_MS} ms apart (${GAPPED_N} calls; a gateway's rhythm):`,
    `  core guard functions: p50 ${fmt(q(coreGapped, 0.5))} ms, p90 ${fmt(q(coreGapped, 0.9))} ms, p99 ${fmt(q(coreGapped, 0.99))} ms`,
    `  plugin hooks:         p50 ${fmt(q(plug.gapped, 0.5))} ms, p90 ${fmt(q(plug.gapped, 0.9))} ms, p99 ${fmt(q(plug.gapped, 0.99))} ms`,
    `  plugin footprint in a fresh Node process: RSS ${fmt(plug.rssBeforeMiB, 0)} → ${fmt(plug.rssAfterMiB, 0)} MiB (+${fmt(plug.rssAfterMiB - plug.rssBeforeMiB, 1)} MiB; the policy's linear memory ${fmt(plug.policyMemoryBytes / 1048576, 1)} MiB)`,
    "* the core guard's per-call figure is its detector functions timed in-process, spaced like the gateway's calls (they run inside the gateway's tool wrapper, where no hook can time them); the plugin's is measured in its hooks inside the gateway (before_tool_call + after_tool_call, which queues the outcome; recorded before the next policy call or while the next model call runs).",
    "e2e step = the gap between consecutive model requests in the turn (fake model answer + tool run + all hooks + gateway overhead).",
  ].join("\n");
  console.log(out);
  if (JSON_OUT) {
    fs.writeFileSync(JSON_OUT, JSON.stringify({ calls: CALLS, core: { p50: q(core, 0.5), p99: q(core, 0.99) }, pluginInProcess: { p50: q(plug.times, 0.5), p99: q(plug.times, 0.99), rssBeforeMiB: plug.rssBeforeMiB, rssAfterMiB: plug.rssAfterMiB }, runs: runs.map((r) => ({ label: r.label, wallMs: r.wallMs, stepP50: q(r.gaps, 0.5), stepP99: q(r.gaps, 0.99), inHookP50: q(r.inHook, 0.5), inHookP99: q(r.inHook, 0.99), primeP50: q(r.primes, 0.5), primeP99: q(r.primes, 0.99), mem: r.mem })) }, null, 2));
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e?.stack ?? e);
    process.exit(1);
  },
);
