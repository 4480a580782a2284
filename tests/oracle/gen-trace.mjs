#!/usr/bin/env node
// Random loopguard traces (spec/trace-format.md) for the OpenClaw oracle, deterministic per seed.
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
// No clock, no Math.random: everything comes from the seeded PRNG below.

import fs from "node:fs";

// ---------------------------------------------------------------------------------------------
// PRNG: sfc32 seeded through splitmix32.

function splitmix32(a) {
  return () => {
    a |= 0;
    a = (a + 0x9e3779b9) | 0;
    let t = a ^ (a >>> 16);
    t = Math.imul(t, 0x21f0aaad);
    t ^= t >>> 15;
    t = Math.imul(t, 0x735a2d97);
    return (t ^ (t >>> 15)) >>> 0;
  };
}

class Rng {
  constructor(seed) {
    const sm = splitmix32(seed >>> 0);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    for (let i = 0; i < 12; i++) this.u32();
  }
  u32() {
    let { a, b, c, d } = this;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
    return t >>> 0;
  }
  float() {
    return this.u32() / 4294967296;
  }
  int(lo, hi) {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }
  chance(p) {
    return this.float() < p;
  }
  pick(arr) {
    return arr[Math.floor(this.float() * arr.length)];
  }
  weighted(pairs) {
    let total = 0;
    for (const [w] of pairs) total += w;
    let x = this.float() * total;
    for (const [w, v] of pairs) {
      x -= w;
      if (x < 0) return v;
    }
    return pairs[pairs.length - 1][1];
  }
  hex(n) {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(0, 15)];
    return s;
  }
  word() {
    return this.pick(["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "zeta", "theta", "lambda"]);
  }
}

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

// ---------------------------------------------------------------------------------------------
// Config per profile.

const GROUP_AGENTS = ["planner", "coder", "reviewer", "concierge", "scribe"];

function buildConfig(profile) {
  const cfg = {};
  if (profile !== "off") cfg.tools = { loopDetection: { enabled: true } };
  const list = [
    { id: "main" },
    { id: "ops", tools: { loopDetection: {} } },
    { id: "cron", tools: { loopDetection: { enabled: false } } },
    { id: "planner", groupChat: { mentionPatterns: ["@planner"] } },
    { id: "coder", groupChat: { mentionPatterns: ["@coder"] } },
    { id: "reviewer", groupChat: { mentionPatterns: ["@reviewer", "@rev"] } },
    { id: "concierge", groupChat: { mentionPatterns: ["@concierge"] } },
    { id: "scribe", name: "Scribe" },
  ];
  if (profile === "off") list[2].tools.loopDetection = { enabled: false };
  if (profile === "thresholds") {
    list[1].tools.loopDetection = { warningThreshold: 4, criticalThreshold: 8, globalCircuitBreakerThreshold: 12, historySize: 20 };
    list.push({ id: "scout", tools: { loopDetection: { detectors: { genericRepeat: false }, postCompactionGuard: { windowSize: 2 } } } });
  } else {
    list.push({ id: "scout" });
  }
  cfg.agents = { list };
  cfg.messages = { groupChat: { mentionPatterns: ["@team"] } };
  const burst = profile === "burst";
  cfg.channels = {
    defaults: { botLoopProtection: { maxEventsPerWindow: 12, ...(burst ? { maxConversationBotEvents: 30 } : {}) } },
    discord: {
      allowBots: true,
      botLoopProtection: { maxEventsPerWindow: 8 },
      accounts: { secondary: { allowBots: true, botLoopProtection: { maxEventsPerWindow: 5, cooldownSeconds: 90 } }, tertiary: { botLoopProtection: { enabled: false } } },
    },
    slack: {
      allowBots: true,
      botLoopProtection: { windowSeconds: 30 },
      channels: {
        "*": { botLoopProtection: { cooldownSeconds: 45 } },
        C0ABC: { botLoopProtection: { maxEventsPerWindow: 6 } },
        "channel:c0def": { botLoopProtection: { maxEventsPerWindow: 4 } },
      },
    },
    matrix: {
      allowBots: true,
      groups: { "!room1:example.org": { botLoopProtection: { maxEventsPerWindow: 5 } } },
      accounts: { bot2: { botLoopProtection: { cooldownSeconds: 30 } } },
    },
    googlechat: {
      allowBots: true,
      groups: { "spaces/AAAA": { botLoopProtection: { maxEventsPerWindow: 4 } } },
      accounts: { default: { botLoopProtection: { windowSeconds: 20 } }, other: { botLoopProtection: { cooldownSeconds: 15 } } },
    },
    feishu: { botLoopProtection: { maxEventsPerWindow: 3 } },
    telegram: { botLoopProtection: { maxEventsPerWindow: 10, windowSeconds: 40 } },
  };
  cfg.broadcast = {
    strategy: "parallel",
    "slack:C0123": { agents: ["planner", "coder", "reviewer"], maxRounds: 3, maxTurns: 6 },
    "discord:998877": { agents: ["reviewer", "coder", "planner"], mentionGating: false, maxRounds: 4, maxTurns: 5 },
    "telegram:-100123": ["planner", "coder", "scribe"],
    "slack:C0BIG": { agents: ["planner", "coder", "reviewer", "concierge", "scribe"], maxRounds: 4 },
    "120363012345@g.us": ["concierge", "planner"],
    "whatsapp:120363099999@g.us": { agents: ["coder", "reviewer"] },
    "120363099999@g.us": ["concierge"],
  };
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Shapes.

const BASE_TS = 1767225600000;

function textResult(text, details) {
  const r = { content: [{ type: "text", text }] };
  if (details !== undefined) r.details = details;
  return r;
}

function untrusted(rng, body, escapes) {
  const id = rng.hex(16);
  const q = "\\".repeat(escapes) + '"';
  return `<<<EXTERNAL_UNTRUSTED_CONTENT id=${q}${id}${q}>>>\n${body}\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=${q}${id}${q}>>>`;
}

function volatileTime(rng) {
  const s = rng.int(0, 59).toString().padStart(2, "0");
  return `2026-01-01T10:${rng.int(10, 59)}:${s}.${rng.int(100, 999)}Z`;
}

// An "outcome family": (args, result-or-error) for a call, given whether this call repeats the
// previous outcome (stable) and the call's index in its episode. Every family varies only what
// the hashing rules ignore when `stable` is true.
const FAMILIES = {
  read: (rng, st) => ({ tool: "read", args: { path: st.path }, result: textResult(st.stable ? st.text : `${st.text} v${st.i}`) }),
  web_search: (rng, st) => ({ tool: "web_search", args: { query: st.query, count: 5 }, result: textResult(st.stable ? st.text : `${st.text} #${st.i}`, { provider: "brave" }) }),
  exec_completed: (rng, st) => {
    const out = st.stable ? st.text : `${st.text} ${st.i}`;
    return {
      tool: "exec",
      args: { command: st.command },
      result: {
        content: [{ type: "text", text: out }],
        details: { status: "completed", exitCode: 0, exitSignal: null, durationMs: rng.int(5, 900), aggregated: rng.chance(0.5) ? `  ${out}\n` : out, noOutputTimedOut: false, cwd: `/w/${rng.word()}`, pid: rng.int(1000, 9999) },
      },
    };
  },
  exec_failed: (rng, st) => {
    const msg = st.stable
      ? `error at ${volatileTime(rng)}: build failed (attempt ${rng.int(1, 9)}, took ${rng.int(1, 900)}ms, pid ${rng.int(100, 999)})`
      : `error: build failed step ${st.i}`;
    return {
      tool: "exec",
      args: { command: st.command },
      result: { content: [{ type: "text", text: msg }], details: { status: "failed", exitCode: st.exitCode ?? 1, durationMs: rng.int(5, 900), aggregated: msg, cwd: "/w" } },
    };
  },
  exec_failed_plain: (rng, st) => {
    const ec = st.exitCode ?? 2;
    return {
      tool: "exec",
      args: { command: st.command },
      result: { content: [{ type: "text", text: st.stable ? `(Command exited with code ${ec})` : `out ${st.i}` }], details: { status: "failed", exitCode: ec, aggregated: rng.chance(0.5) ? "" : "   ", durationMs: rng.int(1, 99) } },
    };
  },
  exec_running: (rng, st) => ({
    tool: "exec",
    args: { command: st.command, background: true },
    result: {
      content: [{ type: "text", text: `started ${rng.hex(6)}` }],
      details: { status: "running", sessionId: rng.hex(8), pid: rng.int(1000, 9999), startedAt: BASE_TS + rng.int(0, 1e6), cwd: "/w", tail: st.stable ? st.text : `${st.text}${st.i}` },
    },
  }),
  exec_approval: (rng, st) => ({
    tool: "exec",
    args: { command: st.command, elevated: true },
    result: {
      content: [{ type: "text", text: `approval ${rng.hex(4)}` }],
      details: { status: rng.chance(0.5) ? "approval-pending" : "approval-pending", reason: st.stable ? "needs approval" : `reason ${st.i}`, host: "gateway", command: st.command, expiresAtMs: BASE_TS + rng.int(0, 1e6), approvalId: rng.hex(8), ...(rng.chance(0.3) ? { warningText: "" } : {}) },
    },
  }),
  process_poll: (rng, st) => ({
    tool: "process",
    args: { action: "poll", sessionId: st.sid },
    result: {
      content: [{ type: "text", text: st.stable ? "still running" : `line ${st.i}` }],
      details: { status: "running", sessionId: st.sid, ...(rng.chance(0.5) ? { aggregated: st.stable ? "x" : `x${st.i}` } : { aggregated: st.stable ? "x" : `y${st.i}` }), polledAt: BASE_TS + rng.int(0, 1e6) },
    },
  }),
  process_log: (rng, st) => ({
    tool: "process",
    args: { action: "log", sessionId: st.sid, offset: 0 },
    result: { content: [{ type: "text", text: st.stable ? "log" : `log ${st.i}` }], details: { status: "running", totalLines: st.stable ? 10 : 10 + st.i, totalChars: 100, truncated: false, readAt: rng.int(0, 1e6) } },
  }),
  command_status: (rng, st) => ({
    tool: "command_status",
    args: { commandId: st.sid },
    result: textResult(st.stable ? "RUNNING" : `RUNNING ${st.i}`, { status: "running" }),
  }),
  message_send: (rng, st) => ({
    tool: "message",
    args: { action: st.action ?? "send", channel: "slack", target: "#ops", message: st.text },
    result: {
      content: [{ type: "text", text: `sent ${rng.hex(10)}` }],
      details: {
        ok: true,
        messageId: rng.hex(12),
        ts: `${1767225600 + rng.int(0, 99999)}.${rng.int(100000, 999999)}`,
        channel: "slack",
        delivery: { id: rng.hex(10), text: st.stable ? st.text : `${st.text} ${st.i}`, direction: "outbound", receipt: rng.hex(6) },
        ...(st.stable ? {} : { seq: st.i }),
      },
    },
  }),
  sessions_send: (rng, st) => ({
    tool: "sessions_send",
    args: { sessionKey: "agent:ops:main", message: st.text },
    result: { content: [{ type: "text", text: `ok ${rng.hex(5)}` }], details: { status: "accepted", runId: rng.hex(8), sessionKey: "agent:ops:main", createdAt: BASE_TS + rng.int(0, 1e6), ...(st.stable ? {} : { n: st.i }) } },
  }),
  update_plan: (rng, st) => {
    const plan = [
      { step: `${rng.word()} ${rng.word()}`, status: "completed" },
      { step: st.stable ? `${rng.word()} step` : "", status: st.stable ? "in_progress" : "pending" },
    ];
    return { tool: "update_plan", args: { plan, explanation: rng.chance(0.5) ? "why" : "because" }, result: { content: [{ type: "text", text: `Plan updated ${rng.hex(4)}` }], details: { plan, updatedAt: rng.int(0, 1e6) } } };
  },
  write_unchanged: (rng, st) => ({
    tool: "write",
    args: { path: st.path, content: st.text },
    result: textResult(st.stable ? `Wrote ${st.path}` : `Wrote ${st.path} (${st.i})`, { changed: st.stable ? false : true, bytes: rng.int(1, 99) }),
  }),
  web_fetch_untrusted: (rng, st) => ({
    tool: "web_fetch",
    args: { url: st.url },
    result: textResult(untrusted(rng, st.stable ? st.text : `${st.text} ${st.i}`, st.escapes ?? 0), { status: 200 }),
  }),
  web_fetch_nested: (rng, st) => ({
    tool: "web_fetch",
    args: { url: st.url, format: "json" },
    result: textResult(JSON.stringify({ body: untrusted(rng, st.stable ? st.text : `${st.text} ${st.i}`, 0) }), { status: 200 }),
  }),
  unknown_tool: (rng, st) => ({
    tool: st.tool,
    args: { url: rng.chance(0.5) ? "https://a.example" : `https://b.example/${rng.int(0, 3)}` },
    error: rng.pick([`Unknown tool: ${st.tool}`, `unknown tool "${st.tool}"`, `Tool ${st.tool} not found`, `tool '${st.tool}' is not available`, `  Unknown tool:${st.tool.toUpperCase()}  `]),
  }),
  error_mixed: (rng, st) => ({
    tool: "grep",
    args: { pattern: st.text },
    error: st.stable ? st.err : rng.pick(["boom", 404, 5, "5", { code: "ENOENT", message: "no such file" }, null, true, ["a", 1], "", "   "]),
  }),
  non_object: (rng, st) => ({ tool: "calc", args: { expr: st.text }, result: st.stable ? st.value : rng.pick(["ok", 42, 4.0, [1, 2], null, true, false, "", 1e21]) }),
  content_join: (rng, st) => {
    const parts = [
      { type: "text", text: st.stable ? "  head  " : ` head ${st.i} ` },
      { type: "image", text: "alt" },
      { type: "text" },
      "loose string",
      { type: 7, text: "not a string type" },
      { type: "text", text: "tail\n" },
    ];
    return { tool: "browser_snapshot", args: { tab: st.sid }, result: { content: rng.chance(0.2) ? "not an array" : parts, details: rng.chance(0.2) ? "not an object" : { title: "Page", ts: st.stable ? 1 : st.i } } };
  },
  surrogate: (rng, st) => ({ tool: "search_notes", args: { q: rng.chance(0.5) ? `note\ud800` : "note" }, result: textResult(st.stable ? "same" : `r${st.i}`) }),
  // Lone surrogates in keys (distinct keys in JS, ordered by code units), at the edges of result
  // texts (they stop the trim) and in errors.
  surrogate_keys: (rng, st) => {
    const args = rng.pick([{ "a\ud800": 1, a: 2 }, { a: 2, "a\ud800": 1 }, { ab: 1, "a\ud800": 2 }, { a: 2 }, { "\udc00k": [1, "x\ud83d"] }]);
    if (rng.chance(0.3)) return { tool: "lookup", args, error: rng.pick(["bad \ud800", "bad ", { m: "bad\udfff" }]) };
    return { tool: "lookup", args, result: textResult(st.stable ? rng.pick([" \ud800 same ", "same"]) : `r${st.i}\udc00`, { "k\ud800": 1, k: 2 }) };
  },
  // Tool names as a model writes them; the OpenClaw callers normalize them (trim, lowercase,
  // bash -> exec, apply-patch -> apply_patch, and in 2026.9.6 cron -> automations).
  raw_names: (rng, st) => {
    const out = st.stable ? "ok" : `ok ${st.i}`;
    return { tool: rng.pick(["Bash", "bash", " READ ", "Apply-Patch", "CRON", "Exec"]), args: { command: st.command }, result: { content: [{ type: "text", text: out }], details: { status: "completed", exitCode: 0, aggregated: out } } };
  },
  conversations_send: (rng, st) => ({
    tool: rng.pick(["conversations_send", "conversations_turn"]),
    args: { conversationId: "conv_1", message: st.text },
    result: {
      content: [{ type: "text", text: `sent ${rng.hex(6)}` }],
      details: { status: "sent", messageId: rng.hex(10), ts: BASE_TS + rng.int(0, 1e6), conversationId: "conv_1", ...(st.stable ? {} : { n: st.i }) },
    },
  }),
  veto_like: (rng, st) => ({
    tool: "exec",
    args: { command: st.command },
    result: textResult("Tool call blocked by plugin", { status: "blocked", deniedReason: rng.chance(0.5) ? "plugin-before-tool-call" : "plugin-approval", reason: "policy" }),
  }),
};

// Shapes where the documented behaviour deliberately differs from both releases.
const SPEC_CHOICE_FAMILIES = ["surrogate", "surrogate_keys", "update_plan", "raw_names"];

// ---------------------------------------------------------------------------------------------
// Generator.

class Gen {
  constructor(opts) {
    this.opts = opts;
    this.specChoices = !opts.withoutSpecChoices;
    this.oracle = undefined;
    this.rng = new Rng(opts.seed);
    this.out = [];
    this.callSeq = 0;
    this.clock = BASE_TS;
    this.botClock = BASE_TS;
    this.rootSeq = 0;
    this.evSeq = 0;
    this.sessions = [];
    const agents = [undefined, "", "main", "ops", "cron", "scout", "MAIN", "Ops "];
    for (let i = 0; i < 8; i++) this.sessions.push({ key: `agent:${i % 3 === 0 ? "main" : "ops"}:s${i}`, agent: agents[i], run: undefined, runSeq: 0 });
    this.sessions.forEach((s) => this.newRun(s));
  }

  emit(ev) {
    this.out.push(JSON.stringify(ev));
  }

  // The families an episode may use (--without-spec-choices leaves out the deliberate spec
  // differences: lone surrogates, update_plan).
  familyNames() {
    return Object.keys(FAMILIES).filter((f) => this.specChoices || !SPEC_CHOICE_FAMILIES.includes(f));
  }

  // Feeds an emitted event to the oracle's tool side; for a tool_call, returns {mode, message}
  // when the package blocks it.
  async observe(line) {
    if (!this.oracle || !line.includes('"kind":"tool_')) {
      if (this.oracle && line.includes('"kind":"compaction"')) this.oracle.side.compaction(this.oracle.parse(line));
      return undefined;
    }
    const ev = this.oracle.parse(line);
    if (ev.kind === "tool_result") {
      this.oracle.side.toolResult(ev);
      return undefined;
    }
    const d = await this.oracle.side.toolCall(ev, this.out.length);
    return d.action === "block" ? { mode: this.oracle.side.T.mode, message: d.message } : undefined;
  }

  tick(lo = 20, hi = 2500) {
    this.clock += this.rng.int(lo, hi);
    return this.clock;
  }

  newRun(s) {
    s.runSeq += 1;
    const base = `run_${s.key.slice(-2)}_${s.runSeq}`;
    s.run = this.rng.weighted([
      [70, base],
      [8, undefined],
      [4, ""],
      [4, "   "],
      [6, ` ${base} `],
      [8, `${base}`],
    ]);
  }

  base(s, extra = {}) {
    const ev = { session: s.key };
    if (s.run !== undefined) ev.run = s.run;
    if (s.agent !== undefined) ev.agent = s.agent;
    return Object.assign(ev, extra);
  }

  callId() {
    this.callSeq += 1;
    return `call_${this.callSeq}`;
  }

  // One call + its outcome, with the usual defects of real hosts sprinkled in.
  *callPair(s, shape, opts = {}) {
    const id = this.rng.chance(0.9) ? this.callId() : undefined;
    const ts = this.tick();
    const call = { kind: "tool_call", ...this.base(s), tool: shape.tool, args: shape.args };
    if (id) call.call_id = id;
    if (this.rng.chance(0.7)) call.ts_ms = ts;
    if (!opts.resultOnly) {
      const blocked = yield call; // the oracle's decision (see run()), or undefined
      if (blocked) {
        // 2026.9.6: the wrapper never runs a blocked call, no result follows. 2026.7.35: the
        // wrapper returns the blocked result, and the host reports it.
        if (blocked.mode === "batch") return;
        const res = { kind: "tool_result", ...this.base(s), tool: shape.tool, args: shape.args };
        if (id) res.call_id = id;
        res.result = textResult(blocked.message, { status: "blocked", deniedReason: "tool-loop", reason: blocked.message });
        yield res;
        return;
      }
    }
    if (opts.noResult || this.rng.chance(0.01)) return;
    const res = { kind: "tool_result", ...this.base(s), tool: shape.tool, args: shape.args };
    const rid = this.rng.chance(0.97) ? id : this.rng.chance(0.5) ? undefined : `call_orphan_${this.callSeq}`;
    if (rid) res.call_id = rid;
    if ("error" in shape) res.error = shape.error;
    else res.result = shape.result;
    if (this.rng.chance(0.5)) res.ts_ms = this.tick(1, 50);
    yield res;
  }

  familyState(fam) {
    const r = this.rng;
    return {
      path: `/src/${r.word()}/${r.int(0, 99)}.ts`,
      query: `${r.word()} ${r.word()}`,
      text: `${r.word()} ${r.word()} ${r.int(0, 9)}`,
      command: `${r.pick(["npm test", "make build", "git status", "gh run view 123 --json status", "ls -la"])}${r.chance(0.3) ? " --verbose" : ""}`,
      sid: `proc_${r.hex(4)}`,
      url: `https://${r.word()}.example/${r.int(0, 9)}`,
      tool: r.pick(["browser_open", "browser.navigate", "code-interpreter", "shell_run"]),
      err: r.pick(["boom", 404, { code: "E", message: "m" }, null, "404"]),
      value: r.pick(["ok", 42, [1, 2], null, true]),
      escapes: r.pick([0, 0, 1, 2, 3]),
      exitCode: r.pick([1, 2, 127]),
      action: r.pick(["send", "reply", "thread-reply", "poll", "read", "Send"]),
      i: 0,
      stable: true,
      fam,
    };
  }

  // ---- tool episodes
  *episodeRepeat(s) {
    const fam = this.rng.weighted([
      [6, "read"],
      [4, "web_search"],
      [6, "exec_completed"],
      [4, "exec_failed"],
      [2, "exec_failed_plain"],
      [3, "exec_running"],
      [2, "exec_approval"],
      [5, "process_poll"],
      [3, "process_log"],
      [3, "command_status"],
      [4, "message_send"],
      [2, "sessions_send"],
      [this.specChoices ? 3 : 0, "update_plan"],
      [3, "write_unchanged"],
      [3, "web_fetch_untrusted"],
      [1, "web_fetch_nested"],
      [3, "error_mixed"],
      [2, "non_object"],
      [2, "content_join"],
      [this.specChoices ? 1 : 0, "surrogate"],
      [this.specChoices ? 1 : 0, "surrogate_keys"],
      [this.specChoices ? 1 : 0, "raw_names"],
      [1, "conversations_send"],
      [1, "veto_like"],
    ]);
    const st = this.familyState(fam);
    const len = this.rng.weighted([
      [3, this.rng.int(5, 12)],
      [4, this.rng.int(18, 26)],
      [3, this.rng.int(28, 40)],
    ]);
    const progressRate = this.rng.pick([0, 0, 0, 0.05, 0.3]);
    const resultOnly = this.rng.chance(0.12);
    let vetoAfter = this.rng.chance(0.5) ? 20 : Infinity;
    if (this.oracle) vetoAfter = Infinity; // the oracle knows which calls are blocked
    for (let i = 0; i < len; i++) {
      st.i = i;
      st.stable = !this.rng.chance(progressRate);
      const shape = FAMILIES[fam](this.rng, st);
      if (i >= vetoAfter && !resultOnly && this.rng.chance(0.8)) {
        // what a host reports for a call its loop guard refused (buildBlockedToolResult's shape)
        const msg = `CRITICAL: Called ${shape.tool} with identical arguments and identical outcomes ${i} times. Session execution blocked to prevent runaway loops.`;
        delete shape.error;
        shape.result = textResult(msg, { status: "blocked", deniedReason: "tool-loop", reason: msg });
      }
      yield* this.callPair(s, shape, { resultOnly });
    }
  }

  *episodePingPong(s) {
    const a = this.familyState("read");
    const b = this.familyState("web_search");
    const famA = this.rng.pick(["read", "exec_completed", "process_poll"]);
    const famB = this.rng.pick(["web_search", "read", "command_status"]);
    const len = this.rng.int(10, 36);
    const progress = this.rng.chance(0.35);
    for (let i = 0; i < len; i++) {
      const st = i % 2 === 0 ? a : b;
      st.i = i;
      st.stable = !(progress && this.rng.chance(0.5));
      yield* this.callPair(s, FAMILIES[i % 2 === 0 ? famA : famB](this.rng, st));
    }
  }

  *episodeUnknown(s) {
    const st = this.familyState("unknown_tool");
    const len = this.rng.int(6, 16);
    for (let i = 0; i < len; i++) {
      st.i = i;
      if (this.rng.chance(0.08)) {
        st.tool = this.rng.pick(["browser_open", "browser.navigate"]);
      }
      yield* this.callPair(s, FAMILIES.unknown_tool(this.rng, st));
    }
  }

  *episodeChurn(s) {
    // Same tool, 2-3 argument variants, each repeated with one stable no-progress outcome.
    const variants = this.rng.int(2, 3);
    const paths = Array.from({ length: variants }, () => `/src/${this.rng.word()}-${this.rng.int(0, 99)}.md`);
    const useErr = this.rng.chance(0.5);
    const err = `ENOENT: ${this.rng.word()}`;
    const len = this.rng.int(9, 24);
    const block = this.rng.pick([1, 3, 3, 4]);
    for (let i = 0; i < len; i++) {
      const p = this.rng.chance(0.9) ? paths[Math.floor(i / block) % variants] : this.rng.pick(paths);
      const shape = useErr
        ? { tool: "edit", args: { path: p, oldText: "a", newText: "b" }, error: err }
        : { tool: "write", args: { path: p, content: "same" }, result: textResult(`Wrote ${p}`, { changed: false }) };
      yield* this.callPair(s, shape);
    }
  }

  *episodeCompaction(s) {
    const st = this.familyState("exec_completed");
    const fam = this.rng.pick(["exec_completed", "read", "web_fetch_untrusted", "process_poll"]);
    const pre = this.rng.int(0, 6);
    for (let i = 0; i < pre; i++) yield* this.callPair(s, FAMILIES[fam](this.rng, st));
    const c = { kind: "compaction", session: s.key };
    if (s.run !== undefined) c.run = s.run;
    if (s.agent !== undefined) c.agent = s.agent;
    yield c;
    const post = this.rng.int(2, 5);
    const same = this.rng.chance(0.6);
    for (let i = 0; i < post; i++) {
      st.i = i;
      st.stable = same || i === 0;
      yield* this.callPair(s, FAMILIES[fam](this.rng, st));
      if (this.rng.chance(0.1)) yield* this.callPair(s, FAMILIES.read(this.rng, this.familyState("read")));
    }
  }

  *episodeNoise(s) {
    const n = this.rng.int(1, 6);
    for (let i = 0; i < n; i++) {
      const fam = this.rng.pick(this.familyNames());
      const st = this.familyState(fam);
      st.stable = this.rng.chance(0.5);
      st.i = this.rng.int(0, 1000);
      yield* this.callPair(s, FAMILIES[fam](this.rng, st), { noResult: this.rng.chance(0.05) });
    }
  }

  toolEpisode() {
    const s = this.rng.pick(this.sessions);
    if (this.rng.chance(0.12)) this.newRun(s);
    const kind = this.rng.weighted([
      [40, "repeat"],
      [14, "pingpong"],
      [9, "unknown"],
      [8, "churn"],
      [10, "compaction"],
      [19, "noise"],
    ]);
    if (kind === "repeat") return this.episodeRepeat(s);
    if (kind === "pingpong") return this.episodePingPong(s);
    if (kind === "unknown") return this.episodeUnknown(s);
    if (kind === "churn") return this.episodeChurn(s);
    if (kind === "compaction") return this.episodeCompaction(s);
    return this.episodeNoise(s);
  }

  // ---- bot episodes
  *botEpisode() {
    const r = this.rng;
    const where = r.weighted([
      [5, { channel: "discord", account: r.pick(["default", "secondary", "tertiary"]), conversation: `13987654321${r.int(0, 3)}` }],
      [4, { channel: "slack", account: r.pick(["default", "T2"]), conversation: r.pick(["C0ABC", "c0abc", "C0DEF", "C0XYZ"]), room: undefined }],
      [3, { channel: "matrix", account: r.pick(["default", "bot2"]), conversation: r.pick(["!room1:example.org", "!room2:example.org"]) }],
      [3, { channel: "googlechat", account: r.pick(["default", "other", "third"]), conversation: r.pick(["spaces/AAAA", "spaces/BBBB"]) }],
      [2, { channel: "feishu", account: "default", conversation: `oc_${r.hex(6)}` }],
      [2, { channel: "telegram", account: "default", conversation: `-100${r.int(1, 3)}` }],
    ]);
    const bots = ["1300000000000000011", "1300000000000000022", "1300000000000000033", "B_four", "b_five"];
    const a = r.pick(bots);
    let b = r.pick(bots);
    if (b === a && r.chance(0.9)) b = bots[(bots.indexOf(a) + 1) % bots.length];
    const len = r.weighted([
      [2, r.int(4, 10)],
      [5, r.int(12, 30)],
      [2, r.int(30, 60)],
    ]);
    const gap = r.pick([300, 1000, 2000, 4000]);
    const recent = [];
    for (let i = 0; i < len; i++) {
      this.botClock += r.chance(0.05) ? r.int(30000, 100000) : r.chance(0.1) ? 0 : r.int(Math.floor(gap / 2), gap * 2);
      let ts = this.botClock;
      const fwd = i % 2 === 0;
      const ev = { kind: "bot_message", channel: where.channel, account: where.account, conversation: where.conversation, sender: fwd ? a : b, receiver: fwd ? b : a, ts_ms: ts };
      if (where.channel === "slack" && r.chance(0.2)) ev.room = r.pick(["C0ABC", "c0def", "C0ZZZ"]);
      if (where.channel !== "slack" && r.chance(0.05)) ev.room = where.conversation;
      const roll = r.float();
      if (roll < 0.08 && recent.length) {
        // provider redelivery of a recent event (same id, same or later clock)
        const old = r.pick(recent);
        ev.sender = old.sender;
        ev.receiver = old.receiver;
        ev.event_id = r.chance(0.8) ? old.event_id : ` ${old.event_id} `;
        ev.ts_ms = r.chance(0.5) ? old.ts_ms : ts;
      } else if (roll < 0.13) {
        ev.ts_ms = ts - r.int(500, 20000); // late, out of order
        ev.event_id = `ev_${++this.evSeq}`;
      } else if (roll < 0.17) {
        ev.ts_ms = ts + r.int(2000, 9000); // future-dated (clock skew), kept through a trip
        ev.event_id = `ev_${++this.evSeq}`;
      } else if (roll < 0.2) {
        if (r.chance(0.5)) ev.event_id = r.pick(["", "   "]);
      } else {
        ev.event_id = `ev_${++this.evSeq}`;
      }
      if (ev.event_id && ev.event_id.trim()) recent.push(ev);
      if (recent.length > 8) recent.shift();
      yield ev;
    }
  }

  // ---- group episodes
  *groupEpisode() {
    const r = this.rng;
    const target = r.weighted([
      [5, { channel: "slack", peer: "C0123", agents: ["planner", "coder", "reviewer"] }],
      [3, { channel: "discord", peer: "998877", agents: ["reviewer", "coder", "planner"] }],
      [2, { channel: "telegram", peer: "-100123", agents: ["planner", "coder", "scribe"] }],
      [3, { channel: "slack", peer: "C0BIG", agents: GROUP_AGENTS }],
      [2, { channel: "whatsapp", peer: "120363012345@g.us", agents: ["concierge", "planner"] }],
      [2, { channel: "whatsapp", peer: "120363099999@g.us", agents: ["coder", "reviewer"] }],
      [1, { channel: "slack", peer: "C0999", agents: ["coder"] }],
      [1, { channel: "telegram", peer: "120363012345@g.us", agents: ["planner"] }],
    ]);
    const account = r.chance(0.85) ? "default" : "Work";
    const root = `${1767225600 + ++this.rootSeq}.000${r.int(100, 999)}`;
    const thread = r.chance(0.3) ? `${1767225600 + r.int(0, this.rootSeq)}.000100` : undefined;
    // Addresses as written in chat; `x@id` is an e-mail-like text, not an address in 2026.9.6.
    const mention = (id) => r.pick([`@${id}`, `@${id}`, id === "reviewer" ? "@rev" : `@${id}`, id === "scribe" ? "Scribe" : `@${id}`, `(@${id})`, `x@${id}`, `@${id.toUpperCase()}`]);
    const mentions = r.weighted([
      [3, []],
      [4, [r.pick(target.agents)]],
      [2, [r.pick(target.agents), r.pick(target.agents)]],
      [1, ["team"]],
    ]);
    const text = mentions.length === 0 ? `status update ${r.word()}?` : mentions[0] === "team" ? "@team anyone?" : `${mentions.map(mention).join(" and ")} please look at ${r.word()}`;
    const base = { channel: target.channel, account, conversation: target.peer };
    const withThread = (ev) => (thread ? { ...ev, thread } : ev);
    yield withThread({ kind: "group_message", ...base, peer: target.peer, root, text });
    if (r.chance(0.05)) yield withThread({ kind: "group_message", ...base, peer: target.peer, root, text: "duplicate delivery" });
    const rounds = r.int(1, 5);
    for (let k = 0; k < rounds; k++) {
      if (r.chance(0.08)) {
        yield withThread({ kind: "group_cancel", ...base, root });
        if (r.chance(0.5)) continue;
        return;
      }
      const replies = [];
      for (const agent of target.agents) {
        if (r.chance(0.15)) continue;
        const other = r.pick(target.agents);
        const reply = r.weighted([
          [4, null],
          [5, `${r.word()} done`],
          [3, `${r.word()}; ${mention(other)} can you check?`],
          [1, `ask ${other === "scribe" ? "Scribe" : other} about it`],
          [1, "NO_REPLY"],
          [1, ""],
          [1, "  "],
        ]);
        replies.push({ agent, reply });
      }
      if (r.chance(0.1)) replies.push({ agent: r.pick(GROUP_AGENTS), reply: "stray" });
      yield withThread({ kind: "group_replies", ...base, root, replies });
    }
  }

  async run() {
    const { events, mix } = this.opts;
    const feedback = new Map(); // episode -> the oracle's decision on the call it just yielded
    const kinds = mix === "all" ? [[60, "tool"], [25, "bot"], [15, "group"]] : [[1, mix]];
    const active = [];
    let guard = 0;
    while (this.out.length < events && guard++ < events * 50 + 1000) {
      if (active.length < 3 && (active.length === 0 || this.rng.chance(0.3))) {
        const k = this.rng.weighted(kinds);
        active.push(k === "tool" ? this.toolEpisode() : k === "bot" ? this.botEpisode() : this.groupEpisode());
      }
      const i = this.rng.int(0, active.length - 1);
      const steps = this.rng.int(1, 4);
      for (let j = 0; j < steps && this.out.length < events; j++) {
        const ep = active[i];
        const n = ep.next(feedback.get(ep));
        feedback.delete(ep);
        if (n.done) {
          active.splice(i, 1);
          break;
        }
        this.emit(n.value);
        const blocked = await this.observe(this.out[this.out.length - 1]);
        if (blocked) feedback.set(ep, blocked);
      }
    }
    return this.out;
  }
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
