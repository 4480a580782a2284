// The committed transcript fixtures (tests/fixtures/openclaw-2026.9.6, made by make-fixtures.mjs)
// are consistent with their expected.json, read with the harness's zstd-aware reader. No gateway.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import * as h from "./harness.mjs";

const DIR = path.join(h.REPO, "tests", "fixtures", "openclaw-2026.9.6");
const exists = fs.existsSync(path.join(DIR, "expected.json"));
const expected = exists ? JSON.parse(fs.readFileSync(path.join(DIR, "expected.json"), "utf8")) : null;
const DB = path.join(DIR, "openclaw-agent.sqlite");

test("fixture sqlite: (a) the gateway's block is at the recorded call", { skip: !exists && "no fixtures" }, () => {
  const a = expected.sessions.loop;
  const events = h.readTranscript(DB, "main", a.sessionKey);
  assert.equal(events.length, a.transcriptRows);
  const calls = h.toolCallsOf(events);
  assert.equal(calls.length, a.toolCalls);
  const blocked = h.blockedResults(events);
  assert.equal(blocked[0].toolCallId, a.gatewayBlock.toolCallId);
  assert.equal(calls.findIndex((c) => c.id === a.gatewayBlock.toolCallId) + 1, a.gatewayBlock.callIndex);
  assert.equal(a.gatewayBlock.callIndex, 21);
  assert.equal(blocked[0].details.deniedReason, "tool-loop");
  assert.equal(blocked[0].details.intervention.detector, "generic_repeat");
  assert.equal(blocked[0].text, a.gatewayBlock.modelSaw);
});

test("fixture sqlite: (b) one compaction, (c) zstd rows decode, (d) healthy", { skip: !exists && "no fixtures" }, () => {
  const b = expected.sessions.compaction;
  assert.equal(h.compactionsOf(h.readTranscript(DB, "main", b.sessionKey)).length, 1);
  const c = expected.sessions.zstd;
  const rows = h.readTranscript(DB, "main", c.sessionKey, { withRows: true });
  const compressed = rows.filter((r) => r.compressed);
  assert.ok(compressed.length >= 1);
  assert.deepEqual(compressed.map((r) => r.seq), c.compressedRowSeqs);
  const outputs = h.toolResultsOf(rows.map((r) => r.event)).map((r) => r.text);
  assert.ok(outputs[0].startsWith("1\n2\n3\n") && outputs[0].trimEnd().endsWith("600"));
  const d = expected.sessions.healthy;
  const de = h.readTranscript(DB, "main", d.sessionKey);
  assert.deepEqual(h.toolCallsOf(de).map((x) => x.name), d.toolCalls.map((x) => x.tool));
  assert.equal(h.blockedResults(de).length, 0);
  assert.ok(h.toolResultsOf(de).every((r) => !r.isError));
});

test("fixture JSONL files parse (trajectory bundle, delete archive, legacy 2026.7.35)", { skip: !exists && "no fixtures" }, () => {
  const traj = path.join(DIR, expected.files.trajectoryBundle.dir);
  const lines = fs.readFileSync(path.join(traj, "events.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  assert.ok(lines.every((l) => l.traceSchema === "openclaw-trajectory"));
  const branch = JSON.parse(fs.readFileSync(path.join(traj, "session-branch.json"), "utf8"));
  assert.ok(Array.isArray(branch.entries) && branch.header);
  const del = path.join(DIR, expected.files.deletedSessionJsonl.dir);
  const zst = fs.readdirSync(del).find((f) => f.endsWith(".zst"));
  const plain = fs.readdirSync(del).find((f) => f.endsWith(".jsonl"));
  assert.equal(zlib.zstdDecompressSync(fs.readFileSync(path.join(del, zst))).toString(), fs.readFileSync(path.join(del, plain), "utf8"));
  assert.equal(JSON.parse(fs.readFileSync(path.join(del, plain), "utf8").split("\n")[0]).version, 4);
  const legacy = expected.files.legacyJsonl;
  if (legacy && !legacy.error) {
    const l = fs.readFileSync(path.join(DIR, legacy.dir, `${legacy.sessionId}.jsonl`), "utf8").split("\n").filter(Boolean).map((x) => JSON.parse(x));
    assert.equal(l[0].version, 3);
    assert.equal(l.length, legacy.lines);
    const idx = JSON.parse(fs.readFileSync(path.join(DIR, legacy.dir, "sessions.json"), "utf8"));
    assert.equal(idx[legacy.sessionKey].sessionId, legacy.sessionId);
  }
});

// A fixture names no machine. An absolute path into a .venv or node_modules (the
// node binary, OpenClaw's entry, its skills) says where the recorder ran; make-fixtures.mjs
// writes them as `$REPO_DIR/…` and `node` (fixtures-scrub.mjs). Compressed files are read decompressed.
test("fixtures name no machine: no absolute path into a .venv or node_modules", { skip: !exists && "no fixtures" }, () => {
  const absolute = /(?<![\w$.:/])\/[\w.+-]+(?:\/[\w.+-]+)*\/(?:\.venv|node_modules)\/[^\s"'<>]*/;
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else {
        const bytes = fs.readFileSync(file);
        const text = (file.endsWith(".zst") ? zlib.zstdDecompressSync(bytes) : bytes).toString("latin1");
        const hit = text.match(absolute) ?? (text.includes(`${h.REPO}/`) ? [h.REPO] : null);
        if (hit) found.push(`${path.relative(DIR, file)}: ${hit[0]}`);
      }
    }
  };
  walk(DIR);
  assert.deepEqual(found, []);
});
