#!/usr/bin/env node
// Small hand-made traces, one per behaviour listed in NOTES.md, with the decisions of both
// OpenClaw releases as printed by driver.mjs (the evidence for NOTES.md).
//
//   node cases.mjs            write cases/<name>/{config.json,trace.jsonl} and run the driver with
//                             both packages into cases/<name>/openclaw-<version>.jsonl
//   node cases.mjs --check    run the driver again and fail if an output changed
//
// When the loopguard CLI is available ($LOOPGUARD, else the checkout's target/release/loopguard)
// its decisions (the documented behaviour) are written too, as cases/<name>/loopguard.jsonl.
//
// A case that a package does not support gets `openclaw-<version>.unsupported.txt` (the driver's
// error) instead of decisions.

import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const PKGS = [
  ["2026.9.6", path.join(here, "..", "openclaw", "node_modules", "openclaw")],
  ["2026.7.35", path.join(here, "..", "openclaw", "node_modules", "openclaw-2026.7.35")],
];
const ON = { tools: { loopDetection: { enabled: true } } };

let seq = 0;
const call = (session, run, tool, args, extra = {}) => {
  seq += 1;
  return { kind: "tool_call", session, ...(run !== undefined ? { run } : {}), call_id: `c${seq}`, tool, args, ...extra };
};
const result = (c, res) => ({ kind: "tool_result", session: c.session, ...(c.run !== undefined ? { run: c.run } : {}), call_id: c.call_id, tool: c.tool, args: c.args, ...res });
const text = (t, details) => ({ content: [{ type: "text", text: t }], ...(details ? { details } : {}) });
function pairs(n, session, run, tool, argsFn, resFn) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const c = call(session, run, tool, argsFn(i));
    out.push(c);
    const r = resFn(i);
    if (r) out.push(result(c, r));
  }
  return out;
}
const veto = (msg) => ({ result: text(msg, { status: "blocked", deniedReason: "tool-loop", reason: msg }) });

const CASES = {
  // Blocked calls leave a veto record (9.6): counts go on 20, 21, ... and reach the breaker at 30;
  // the model's text gets the recovery paragraph on the first block of an attempt and the
  // "recovery failed" text on the next; a compaction (new attempt) resets that.
  "exec-repeat-block-recovery": {
    config: ON,
    trace: [
      ...pairs(20, "s1", "r1", "exec", () => ({ command: "npm test" }), () => ({
        result: { content: [{ type: "text", text: "1 failing" }], details: { status: "completed", exitCode: 0, aggregated: "1 failing", durationMs: 12 } },
      })),
      ...pairs(12, "s1", "r1", "exec", () => ({ command: "npm test" }), () => null),
      { kind: "compaction", session: "s1", run: "r1" },
      ...pairs(2, "s1", "r1", "exec", () => ({ command: "npm test" }), () => null),
    ],
  },
  // The unknown-tool streak is broken by the veto record (9.6): the call after a block is allowed.
  "unknown-tool-not-sticky": {
    config: ON,
    trace: pairs(13, "s1", "r1", "browser_open", (i) => ({ url: `https://x/${i % 3}` }), (i) => (i < 10 ? { error: i % 2 ? "Unknown tool: browser_open" : "Tool browser_open not found" } : null)),
  },
  // The veto record becomes the newest record and breaks the alternation (9.6).
  "ping-pong-not-sticky": {
    config: ON,
    trace: (() => {
      const out = [];
      for (let i = 0; i < 23; i++) {
        const a = i < 19 && i % 2 === 0;
        const c = call("s1", "r1", a ? "read" : "list", a ? { path: "/a" } : { path: "/" });
        out.push(c);
        if (i < 19) out.push(result(c, { result: text(a ? "A" : "B") }));
      }
      return out;
    })(),
  },
  // argument_churn (9.6 only): one tool cycling through stable argument variants, every outcome a
  // no-progress outcome (errors, or write {changed:false}).
  "argument-churn-write": {
    config: ON,
    trace: pairs(16, "s1", "r1", "write", (i) => ({ path: `/n/${["a", "b", "c"][i % 3]}.md`, content: "same" }), (i) => ({ result: text(`Wrote file ${i}`, { changed: false }) })),
  },
  "argument-churn-errors": {
    config: ON,
    trace: pairs(16, "s1", "r1", "edit", (i) => ({ path: `/n/${Math.floor(i / 3) % 2}.md`, oldText: "a", newText: "b" }), () => ({ error: "ENOENT: no such file" })),
  },
  // A write whose result says changed:false hashes as {status:"unchanged"} whatever the text (9.6).
  "write-unchanged": {
    config: ON,
    trace: pairs(21, "s1", "r1", "write", () => ({ path: "/a.md", content: "x" }), (i) => ({ result: text(`Wrote 1 byte at t=${i}`, { changed: false, bytes: 1 }) })),
  },
  // Terminal exec failures: volatile parts (times, durations, pids, attempts) do not break the
  // streak (failure identity), and other commands failing the same way continue it (9.6).
  "exec-failure-identity": {
    config: ON,
    trace: [
      ...pairs(21, "s1", "r1", "exec", () => ({ command: "make" }), (i) => {
        const out = `make: *** [all] Error 2 at 2026-01-01T10:00:${String(i).padStart(2, "0")}.5Z (attempt ${i}, took ${i * 7}ms, pid ${900 + i})`;
        return { result: { content: [{ type: "text", text: out }], details: { status: "failed", exitCode: 2, aggregated: out, durationMs: i } } };
      }),
      ...pairs(22, "s2", "r1", "exec", (i) => ({ command: `make target${i}` }), () => ({
        result: { content: [{ type: "text", text: "make: *** No rule to make target. Stop." }], details: { status: "failed", exitCode: 2, aggregated: "make: *** No rule to make target. Stop." } },
      })),
    ],
  },
  // Untrusted-content markers carry a fresh random id per fetch; 9.6 hashes them as
  // 0000000000000000 (outcome hashing only, not the call's args).
  "untrusted-marker-ids": {
    config: ON,
    trace: pairs(21, "s1", "r1", "web_fetch", () => ({ url: "https://status.example" }), (i) => {
      const id = (0x1000000000000000n + BigInt(i) * 7919n).toString(16).padStart(16, "0");
      return { result: text(`<<<EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>\nAll systems operational\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id="${id}">>>`) };
    }),
  },
  // The same block embedded with 1, 2 and 3 backslashes before its quotes (sessions s1, s2, s3):
  // canonicalised for 1 and 3 (2^k - 1), not for 2.
  "untrusted-marker-escaped": {
    config: ON,
    trace: [1, 2, 3].flatMap((e) =>
      pairs(21, `s${e}`, "r1", "web_fetch", () => ({ url: "https://status.example", format: "json" }), (i) => {
        const id = (0x2000000000000000n + BigInt(i) * 104729n).toString(16).padStart(16, "0");
        const q = "\\".repeat(e) + '"';
        return { result: text(`{"body":"<<<EXTERNAL_UNTRUSTED_CONTENT id=${q}${id}${q}>>>ok<<<END_EXTERNAL_UNTRUSTED_CONTENT id=${q}${id}${q}>>>"}`) };
      }),
    ),
  },
  // Lone surrogates are kept by both releases' stableStringify (JSON.stringify escapes them), so
  // "note\ud800" and "note" are different arguments: this alternation is a ping-pong, not a repeat.
  "lone-surrogate-kept": {
    config: ON,
    trace: pairs(12, "s1", "r1", "search_notes", (i) => ({ q: i % 2 ? "note\ud800" : "note" }), () => ({ result: text("same") })),
  },
  // 9.6 ignores every tools.loopDetection key but enabled.
  "thresholds-ignored": {
    config: { tools: { loopDetection: { enabled: true, warningThreshold: 3, criticalThreshold: 5, globalCircuitBreakerThreshold: 7, historySize: 10, detectors: { genericRepeat: false } } } },
    trace: pairs(12, "s1", "r1", "read", () => ({ path: "/a" }), () => ({ result: text("same") })),
  },
  // enabled unset: no rolling detection in either release; 9.6 also records no calls (only
  // outcome-only records), 7.35 records them. The post-compaction guard is on in both.
  "enabled-unset-post-compaction": {
    config: {},
    trace: [
      ...pairs(3, "s1", "r1", "read", () => ({ path: "/a" }), () => ({ result: text("same") })),
      { kind: "compaction", session: "s1", run: "r1" },
      ...pairs(3, "s1", "r1", "read", () => ({ path: "/a" }), () => ({ result: text("same") })),
    ],
  },
  // Pair guard: a replayed event id during a cooldown. The replayed event (id e-late) was recorded
  // with a timestamp before the trip (an out-of-order arrival), so it is still in the window.
  "bot-replay-during-cooldown": {
    config: { channels: { discord: { botLoopProtection: { maxEventsPerWindow: 3 } } } },
    trace: (() => {
      const m = (ts, id, fwd = true) => ({ kind: "bot_message", channel: "discord", account: "default", conversation: "c1", sender: fwd ? "A" : "B", receiver: fwd ? "B" : "A", ts_ms: ts, event_id: id });
      return [m(1000, "e1"), m(2000, "e2", false), m(3000, "e3"), m(3000, "e3"), m(4000, "e4", false), m(3500, "e-late"), m(5000, "e-late"), m(5000, "e5"), m(64000, "e6"), m(64000, "e6")];
    })(),
  },
  // Group threads: naming an agent without "@" makes it eligible; NO_REPLY / "" / whitespace are
  // passes; a duplicate root while the thread runs launches nobody.
  "group-rounds": {
    config: {
      agents: { list: [{ id: "planner", groupChat: { mentionPatterns: ["@planner"] } }, { id: "coder", groupChat: { mentionPatterns: ["@coder"] } }, { id: "reviewer", name: "Reviewer" }] },
      broadcast: { "slack:C1": { agents: ["planner", "coder", "reviewer"], maxRounds: 4, maxTurns: 7 }, "telegram:-1": ["planner", "coder"], "slack:C2": { agents: ["planner", "coder"], maxTurns: 32, maxRounds: 4 } },
    },
    trace: (() => {
      const g = (root, text, peer = "C1", channel = "slack") => ({ kind: "group_message", channel, account: "default", peer, conversation: peer, root, text });
      const r = (root, replies, peer = "C1", channel = "slack") => ({ kind: "group_replies", channel, account: "default", conversation: peer, root, replies: replies.map(([agent, reply]) => ({ agent, reply })) });
      return [
        g("m1", "@coder build is red"),
        r("m1", [["coder", "fixed; ask reviewer to check"]]),
        g("m1", "duplicate delivery of m1"),
        r("m1", [["coder", "NO_REPLY"], ["reviewer", "looks fine, thanks Coder"]]),
        r("m1", [["coder", " "], ["reviewer", ""]]),
        g("m2", "no mention here"),
        r("m2", [["planner", "p"], ["coder", "c"], ["reviewer", "r"]]),
        r("m2", [["planner", "p2"], ["coder", "c2"], ["reviewer", "r2"]]),
        r("m2", [["planner", "p3"], ["coder", null], ["reviewer", null]]),
        g("m3", "@planner hi", "-1", "telegram"),
        r("m3", [["planner", "hello"]], "-1", "telegram"),
        g("m4", "hello", "C2"),
        r("m4", [["planner", "x"]], "C2"),
        r("m4", [["planner", "y"]], "C2"),
        r("m4", [["planner", "z"]], "C2"),
        r("m4", [["planner", "w"]], "C2"),
      ];
    })(),
  },
  // Out-of-range maxTurns/maxRounds are clamped (32, 4) and unknown agent ids dropped; the
  // loopguard CLI rejects this config (its validation), so there is no loopguard.jsonl.
  "group-config-clamps": {
    config: { agents: { list: [{ id: "planner" }] }, broadcast: { "slack:C2": { agents: ["planner", "ghost"], maxTurns: 99, maxRounds: 9 } } },
    trace: [
      { kind: "group_message", channel: "slack", account: "default", peer: "C2", conversation: "C2", root: "m1", text: "hello" },
      ...["a", "b", "c", "d", "e"].map((t) => ({ kind: "group_replies", channel: "slack", account: "default", conversation: "C2", root: "m1", replies: [{ agent: "planner", reply: t }] })),
    ],
  },
};

function writeCase(name, c) {
  const dir = path.join(here, "cases", name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(c.config, null, 2) + "\n");
  fs.writeFileSync(path.join(dir, "trace.jsonl"), c.trace.map((e) => JSON.stringify(e)).join("\n") + "\n");
  return dir;
}

const LOOPGUARD = process.env.LOOPGUARD || path.resolve(here, "../../target/release/loopguard");

function runCase(dir, check) {
  let ok = true;
  if (!check && fs.existsSync(LOOPGUARD)) {
    const r = spawnSync(LOOPGUARD, ["replay", "--config", path.join(dir, "config.json"), path.join(dir, "trace.jsonl")], { encoding: "utf8" });
    if (r.status === 0) fs.writeFileSync(path.join(dir, "loopguard.jsonl"), r.stdout);
    else process.stderr.write(`${path.basename(dir)}: loopguard failed (${r.status}): ${r.stderr}\n`);
  }
  for (const [ver, pkg] of PKGS) {
    const r = spawnSync(process.execPath, [path.join(here, "driver.mjs"), "--openclaw", pkg, "--config", path.join(dir, "config.json"), path.join(dir, "trace.jsonl")], { encoding: "utf8" });
    const outFile = path.join(dir, `openclaw-${ver}.jsonl`);
    const unsFile = path.join(dir, `openclaw-${ver}.unsupported.txt`);
    let file, body;
    if (r.status === 0) {
      file = outFile;
      body = r.stdout;
    } else if (r.status === 3) {
      file = unsFile;
      body = r.stderr;
    } else {
      process.stderr.write(`${path.basename(dir)} ${ver}: driver failed (${r.status}): ${r.stderr}\n`);
      ok = false;
      continue;
    }
    if (check) {
      const prev = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
      if (prev !== body) {
        process.stderr.write(`${path.basename(dir)} ${ver}: output changed\n`);
        ok = false;
      }
    } else {
      for (const f of [outFile, unsFile]) if (f !== file && fs.existsSync(f)) fs.rmSync(f);
      fs.writeFileSync(file, body);
    }
  }
  return ok;
}

const check = process.argv.includes("--check");
let ok = true;
for (const [name, c] of Object.entries(CASES)) {
  seq = 0;
  const dir = check ? path.join(here, "cases", name) : writeCase(name, c);
  ok = runCase(dir, check) && ok;
  process.stderr.write(`${name}: done\n`);
}
process.exitCode = ok ? 0 : 1;
