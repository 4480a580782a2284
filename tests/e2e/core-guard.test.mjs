// OpenClaw's own loop guard (tools.loopDetection.enabled: true, no plugin) inside the real
// gateway, driven by the scripted fake model. This is the baseline the loopguard plugin must
// later match: the exec-poll scenario writes what the model actually received to
// tests/e2e/baseline/core-exec-poll.json (and the other scenarios to core-*.json).
//
// One gateway serves all four scenarios (different session keys; the core's loop history is
// per run and per session, so they do not interfere).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as h from "./harness.mjs";

const BASELINE_DIR = path.join(h.E2E_DIR, "baseline");
const OPENCLAW_VERSION = JSON.parse(fs.readFileSync(path.join(h.OPENCLAW_DIR, "package.json"), "utf8")).version;

let dirs, model, gw;
let failed = false;
const t0 = Date.now();

before(async () => {
  dirs = h.makeRoot("core");
  model = await h.startModel({ out: dirs.out });
  gw = await h.timed("core gateway start", () =>
    h.startGateway({
      model,
      dirs,
      loopDetection: true,
      // overflow -> compaction needs something to compact (shared doc §2.3)
      config: { agents: { defaults: { compaction: { keepRecentTokens: 200 } } } },
      workspaceFiles: { "a.txt": "alpha\n", "b.txt": "beta\n" },
    }),
  );
});

after(async () => {
  await gw?.stop();
  await model?.stop();
  if (gw) await gw.cleanup({ keep: failed });
  else await h.cleanupRoot(dirs?.root, { keep: failed });
  h.log(`core-guard.test.mjs total: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
});

/** run fn, remember failures (the temp dir is then kept for inspection) */
async function scenario(name, fn) {
  try {
    await h.timed(name, fn);
  } catch (err) {
    failed = true;
    throw err;
  }
}

function writeBaseline(name, data) {
  fs.mkdirSync(BASELINE_DIR, { recursive: true });
  const file = path.join(BASELINE_DIR, name);
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + "\n");
  h.log(`wrote ${path.relative(h.REPO, file)}`);
}

/** details without run-specific values (paths, durations, call ids) */
function stableDetails(d) {
  const { cwd, durationMs, ...rest } = d ?? {};
  if (rest.intervention) {
    const { toolCallId, ...iv } = rest.intervention;
    rest.intervention = iv;
  }
  return rest;
}

/** per-session view joining the transcript and the fake model's request log */
function sessionView(sessionKey, marker) {
  const events = h.readTranscript(gw.stateDir, "main", sessionKey);
  const calls = h.toolCallsOf(events);
  const results = h.toolResultsOf(events);
  const requests = model.chatRequests(marker);
  return { events, calls, results, requests };
}

const SYSTEM_NOTE = /^\[System note: Tool-loop warning after (\d+) repeated calls\. Change your approach or stop if you are not making progress\.\]$/;

test("listens on loopback only", () => {
  const socks = h.listeningSockets(gw.pid);
  assert.ok(socks.some((s) => s.port === gw.port), `gateway port ${gw.port} not listening: ${JSON.stringify(socks)}`);
  for (const s of socks) assert.ok(s.addr === "127.0.0.1" || s.addr === "::1", `non-loopback listener ${JSON.stringify(s)}`);
});

test("exec poll: warned at the 11th call, blocked at the 21st, run stopped at the 22nd", async () => {
  await scenario("scenario exec-poll", async () => {
    const key = "core-exec-poll";
    const marker = `[session:${key}]`;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:exec-poll] ${marker} Run echo loop please` });
    const { calls, results, requests } = sessionView(key, marker);

    // the model issued 22 identical exec calls; 21 ran or were blocked with the result seen by the
    // model, the 22nd was blocked and ended the run
    assert.equal(calls.length, 22, `tool calls: ${calls.length}`);
    assert.ok(calls.every((c) => c.name === "exec" && c.arguments.command === "echo loop"));
    assert.equal(requests.length, 22, `model requests: ${requests.length}`);
    assert.equal(results.length, 22);

    // warning: the 11th result carries a second text part, once
    const withNote = results.map((r, i) => ({ i: i + 1, r })).filter(({ r }) => r.texts.some((t) => SYSTEM_NOTE.test(t)));
    assert.deepEqual(withNote.map((x) => x.i), [11], `System note on calls ${withNote.map((x) => x.i)}`);
    const r11 = results[10];
    assert.deepEqual(r11.texts[0], "loop");
    assert.equal(r11.texts.length, 2);
    assert.equal(SYSTEM_NOTE.exec(r11.texts[1])[1], "10");
    assert.equal(r11.isError, false);
    assert.equal(r11.details.status, "completed");
    // what the model received for it: request 12's last tool message
    const seen11 = requests[11].lastTool;
    assert.equal(seen11.text, `loop\n${r11.texts[1]}`);
    // calls 1..20 ran normally
    for (let i = 0; i < 20; i += 1) assert.equal(results[i].details.status, "completed", `call ${i + 1}`);

    // block at the 21st: CRITICAL + recovery paragraph
    const r21 = results[20];
    assert.equal(r21.isError, true);
    assert.equal(r21.details.status, "blocked");
    assert.equal(r21.details.deniedReason, "tool-loop");
    assert.equal(r21.details.intervention.kind, "critical-tool-loop");
    assert.equal(r21.details.intervention.detector, "generic_repeat");
    assert.equal(r21.details.intervention.count, 20);
    const critical = "CRITICAL: Called exec with identical outcomes 20 times. Session execution blocked to prevent runaway loops.";
    assert.equal(r21.details.intervention.reason, critical);
    assert.ok(r21.text.startsWith(`${critical}\n\nDo not repeat this exact tool action.`), r21.text);
    assert.equal(requests[21].lastTool.text, r21.text, "the model received the transcript's text");

    // the 22nd: blocked again (count 21) and the run stops; the model never sees it
    const r22 = results[21];
    assert.equal(r22.details.status, "blocked");
    assert.equal(r22.details.intervention.count, 21);
    assert.match(r22.text, /Critical tool-loop recovery failed because another critical loop was detected\. This run is stopping now\.$/);
    assert.notEqual(res.code, 0, "openclaw agent exits non-zero when the core stops the run");

    const recovery = r21.text.slice(critical.length + 2);
    writeBaseline("core-exec-poll.json", {
      openclaw: OPENCLAW_VERSION,
      producedBy: "tests/e2e/core-guard.test.mjs (exec poll)",
      config: { "tools.loopDetection.enabled": true, plugins: [] },
      script: { tool: "exec", args: { command: "echo loop" }, repeat: "until the run stops" },
      toolCallsIssued: calls.length,
      modelRequests: requests.length,
      cli: {
        exitCode: res.code,
        status: res.json?.status ?? null,
        ok: res.json?.ok ?? null,
        error: res.json?.error ?? res.json?.result?.meta?.error ?? null,
        payloads: (res.json?.result?.payloads ?? []).map((p) => p.text),
      },
      warning: {
        atCall: 11,
        count: 10,
        appendedPart: r11.texts[1],
        transcriptContent: r11.texts,
        modelReceived: seen11.text,
        modelReceivedInRequest: 12,
        timesAppended: withNote.length,
      },
      block: {
        atCall: 21,
        reason: critical,
        recoveryParagraph: recovery,
        modelReceived: requests[21].lastTool.text,
        modelReceivedInRequest: 22,
        details: stableDetails(r21.details),
        isError: r21.isError,
      },
      terminal: {
        atCall: 22,
        text: r22.text,
        details: stableDetails(r22.details),
        seenByModel: false,
      },
      perCall: results.map((r, i) => ({
        call: i + 1,
        status: r.details.status,
        ...(r.details.deniedReason ? { deniedReason: r.details.deniedReason } : {}),
        ...(r.details.intervention ? { detector: r.details.intervention.detector, count: r.details.intervention.count } : {}),
        texts: r.texts,
      })),
      modelReceivedPerRequest: requests.map((q, i) => ({ request: i + 1, lastToolText: q.lastTool?.text ?? null })),
    });
  });
});

test("ping-pong between two reads: warned at the 10th call, blocked once at the 20th, run not stopped", async () => {
  await scenario("scenario read-pingpong", async () => {
    const key = "core-read-pingpong";
    const marker = `[session:${key}]`;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:read-pingpong] ${marker} read a.txt and b.txt until they change` });
    const { calls, results, requests } = sessionView(key, marker);
    assert.equal(res.code, 0, res.stderr.slice(-2000));
    assert.equal(calls.length, 24, "the fake model's bound (24) ends the turn, not the core");
    assert.deepEqual(calls.slice(0, 4).map((c) => c.arguments.path), ["a.txt", "b.txt", "a.txt", "b.txt"]);
    const blocked = results.map((r, i) => ({ call: i + 1, r })).filter(({ r }) => r.details.status === "blocked");
    assert.deepEqual(blocked.map((b) => b.call), [20], `blocked calls: ${blocked.map((b) => b.call)}`);
    const b = blocked[0].r;
    assert.equal(b.details.deniedReason, "tool-loop");
    assert.equal(b.details.intervention.detector, "ping_pong");
    assert.equal(b.details.intervention.count, 20);
    const critical =
      "CRITICAL: You are alternating between repeated tool-call patterns (20 consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste.";
    assert.equal(b.details.intervention.reason, critical);
    assert.ok(b.text.startsWith(`${critical}\n\nDo not repeat this exact tool action.`));
    assert.equal(requests[20].lastTool.text, b.text);
    const notes = results
      .map((r, i) => ({ call: i + 1, note: r.texts.find((t) => SYSTEM_NOTE.test(t)) }))
      .filter((x) => x.note);
    assert.equal(notes[0].call, 10, `first warning at call ${notes[0]?.call}`);
    assert.equal(SYSTEM_NOTE.exec(notes[0].note)[1], "10");
    assert.equal(requests[10].lastTool.text, `beta\n\n${notes[0].note}`);
    writeBaseline("core-read-pingpong.json", {
      openclaw: OPENCLAW_VERSION,
      producedBy: "tests/e2e/core-guard.test.mjs (ping-pong)",
      script: { alternate: [{ tool: "read", args: { path: "a.txt" } }, { tool: "read", args: { path: "b.txt" } }], bound: 24 },
      files: { "a.txt": "alpha\n", "b.txt": "beta\n" },
      toolCallsIssued: calls.length,
      cli: { exitCode: res.code, status: res.json?.status ?? null, payloads: (res.json?.result?.payloads ?? []).map((p) => p.text) },
      warnings: notes.map((n) => ({ atCall: n.call, appendedPart: n.note })),
      block: {
        atCall: 20,
        reason: critical,
        modelReceived: requests[20].lastTool.text,
        details: stableDetails(b.details),
      },
      afterBlock: "the core blocks once; its own veto breaks the alternation evidence, so later calls run (with a rate-limited warning) until the model stops",
      perCall: results.map((r, i) => ({ call: i + 1, path: calls[i]?.arguments?.path, status: r.details.status ?? null, texts: r.texts })),
    });
  });
});

test("a tool that does not exist: 10 errors, then the 11th call is rewritten into a text answer", async () => {
  await scenario("scenario unknown-tool", async () => {
    const key = "core-unknown-tool";
    const marker = `[session:${key}]`;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:unknown-tool] ${marker} frobnicate the widget` });
    const { events, calls, results, requests } = sessionView(key, marker);
    assert.equal(res.code, 0, res.stderr.slice(-2000));
    assert.equal(requests.length, 11, `model requests: ${requests.length}`);
    assert.ok(requests.every((q) => q.answer?.kind === "tool" && q.answer.tool === "frobnicate_widget"));
    assert.equal(results.length, 10);
    for (const r of results) {
      assert.equal(r.text, "Tool frobnicate_widget not found");
      assert.equal(r.isError, true);
    }
    // the transcript keeps only the 10 error results (orphans: the assistant messages with the
    // unknown tool calls are not persisted) and the rewritten 11th answer
    assert.equal(calls.length, 0, `assistant toolCall parts in the transcript: ${calls.length}`);
    assert.equal(h.messagesOf(events, "assistant").length, 1);
    const last = h.messagesOf(events, "assistant").at(-1);
    const rewritten = 'I can\'t use the tool "frobnicate_widget" here because it isn\'t available. I need to stop retrying it and answer without that tool.';
    assert.deepEqual(last.content, [{ type: "text", text: rewritten }]);
    assert.deepEqual((res.json?.result?.payloads ?? []).map((p) => p.text), [rewritten]);
    assert.equal(h.blockedResults(events).length, 0, "no tool-loop block: unknown tools never reach the tool pipeline");
    writeBaseline("core-unknown-tool.json", {
      openclaw: OPENCLAW_VERSION,
      producedBy: "tests/e2e/core-guard.test.mjs (unknown tool)",
      script: { tool: "frobnicate_widget", args: { target: "x" }, repeat: "until the run stops" },
      modelRequests: requests.length,
      toolResults: results.map((r) => ({ text: r.text, isError: r.isError, details: r.details })),
      transcript: "10 toolResult records (isError, details {}) whose assistant toolCall messages are not persisted, then one assistant text message (the rewrite)",
      eleventhCall: { rewrittenAssistantText: rewritten, stopReason: last.stopReason },
      cli: { exitCode: res.code, status: res.json?.status ?? null, payloads: (res.json?.result?.payloads ?? []).map((p) => p.text) },
      note: "a stream-level guard (unknownToolThreshold 10, in the embedded runner, not gated by tools.loopDetection); the tool-loop detector's unknown_tool_repeat never fires because the call never executes",
    });
  });
});

test("context overflow -> auto-compaction -> the same loop: aborted at the 3rd identical call after compaction", async () => {
  await scenario("scenario overflow-compaction", async () => {
    const key = "core-overflow";
    const marker = `[session:${key}]`;
    for (const n of ["one", "two"]) {
      const w = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:warmup] ${marker} warmup ${n}` });
      assert.equal(w.code, 0, w.stderr.slice(-2000));
    }
    const before = model.requests().length;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:overflow-loop] ${marker} OVERFLOW turn three: run echo` });
    const reqs = model.requests().slice(before).filter((r) => r.method === "POST");
    const kinds = reqs.map((r) => r.answer?.kind);
    // 2 tool calls, the overflow, the summary request (no tools), then 3 identical calls
    assert.deepEqual(kinds, ["tool", "tool", "error", "summary", "tool", "tool", "tool"], JSON.stringify(kinds));
    assert.equal(reqs[2].answer.code, "context_length_exceeded");
    assert.equal(reqs[3].tools.length, 0);
    const postCompaction = reqs.slice(4);
    assert.ok(postCompaction.every((r) => r.toolResultsInTurn <= 2), "the retried attempt starts from the compacted context");

    const events = h.readTranscript(gw.stateDir, "main", key);
    const comps = h.compactionsOf(events);
    assert.equal(comps.length, 1);
    assert.ok(comps[0].summary.includes("Fake compaction summary"), "the fake's summary was stored");
    assert.equal(comps[0].details?.latestUnresolvedUserRequest, `[scenario:overflow-loop] ${marker} OVERFLOW turn three: run echo`);
    const runId = res.json?.runId;
    const runCalls = h.toolCallsOf(events).filter((c) => !runId || c.runId === runId);
    assert.equal(runCalls.length, 5, `calls in the overflow run: ${runCalls.length}`);
    const runResults = h.toolResultsOf(events).filter((r) => !runId || r.runId === runId);
    const persisted = runCalls.map((c) => runResults.some((r) => r.toolCallId === c.id));
    const aborted =
      "CRITICAL: tool exec repeated 3 times with identical arguments and identical results within 3 attempts after auto-compaction. The compaction did not break the loop. Aborting to prevent runaway resource use.";
    assert.notEqual(res.code, 0);
    assert.equal(res.json?.ok, false);
    assert.equal(res.json?.error?.message, aborted);
    const stderr = fs.readFileSync(gw.stderrFile, "utf8");
    assert.match(stderr, /context overflow detected \(attempt 1\/3\); attempting auto-compaction/);
    assert.match(stderr, /post-compaction loop persisted: tool=exec repeated 3 times/);
    writeBaseline("core-post-compaction.json", {
      openclaw: OPENCLAW_VERSION,
      producedBy: "tests/e2e/core-guard.test.mjs (overflow -> compaction -> loop)",
      config: { "tools.loopDetection.enabled": true, "agents.defaults.compaction.keepRecentTokens": 200 },
      script: "two warm-up turns (2 exec calls each), then exec echo loop with HTTP 400 context_length_exceeded at the 2nd tool result",
      modelAnswers: kinds,
      toolCallsInRun: runCalls.length,
      callsAfterCompaction: postCompaction.length,
      resultPersistedPerCall: persisted,
      abortSeenByModel: false,
      compaction: { count: comps.length, fromHook: comps[0].fromHook ?? null, hasFirstKeptEntryId: typeof comps[0].firstKeptEntryId === "string" },
      cli: { exitCode: res.code, ok: res.json?.ok ?? null, error: res.json?.error ?? null },
      abortText: aborted,
    });
  });
});
