#!/usr/bin/env node
// Writes small transcript fixtures made by the real OpenClaw gateway (2026.9.6) with the fake
// model into tests/fixtures/openclaw-2026.9.6/ (for the `loopguard transcripts` importer):
//   openclaw-agent.sqlite      the agent store (VACUUM INTO after the gateway stopped) holding
//                              (a) agent:main:fx-loop-exec   a looping exec the core blocks
//                              (b) agent:main:fx-compaction  overflow -> auto-compaction -> retry
//                              (c) agent:main:fx-zstd        long tool outputs: zstd rows
//                              (d) agent:main:fx-healthy     a few different tools, no loop
//   trajectory-fx-loop-exec/   `openclaw sessions export-trajectory` bundle of (a)
//   deleted-session-jsonl/     the only JSONL transcript 2026.9.6 writes: the archive
//                              `sessions delete` leaves (<id>.jsonl.deleted.<ts>.<hash>.zst) of
//                              agent:main:fx-deleted, plus its decompressed .jsonl
//   expected.json              the facts an importer's test checks, computed from the fixture
// Run: source scripts/node24.sh && "$NODE24_BIN/node" tests/e2e/make-fixtures.mjs
// (about 1.5-2 minutes; one gateway; nothing outside the temp dir and the fixture folder).
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { DatabaseSync } from "node:sqlite";
import * as h from "./harness.mjs";

const OUT = path.join(h.REPO, "tests", "fixtures", "openclaw-2026.9.6");
const VERSION = JSON.parse(fs.readFileSync(path.join(h.OPENCLAW_DIR, "package.json"), "utf8")).version;
const SESSIONS = {
  loop: "agent:main:fx-loop-exec",
  compaction: "agent:main:fx-compaction",
  zstd: "agent:main:fx-zstd",
  healthy: "agent:main:fx-healthy",
  deleted: "agent:main:fx-deleted",
};

function summarize(dbFile, key) {
  const db = new DatabaseSync(dbFile, { readOnly: true });
  try {
    const sid = h.sessionIdFor(db, key);
    const rows = db.prepare("SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id = ? ORDER BY seq").all(sid);
    const events = rows.map((r) => ({ seq: r.seq, compressed: r.event_json == null, bytes: r.event_utf8_bytes ?? null, event: h.decodeEventRow(r) }));
    const calls = [];
    for (const { seq, event } of events) {
      if (event?.type !== "message" || event.message?.role !== "assistant") continue;
      for (const part of event.message.content ?? []) {
        if (part?.type === "toolCall") calls.push({ index: calls.length + 1, seq, id: part.id, tool: part.name, arguments: part.arguments, runId: event.message.__openclaw?.runId ?? null });
      }
    }
    const results = [];
    for (const { seq, event } of events) {
      if (event?.type !== "message" || event.message?.role !== "toolResult") continue;
      const m = event.message;
      const call = calls.find((c) => c.id === m.toolCallId);
      const texts = (m.content ?? []).filter((p) => p?.type === "text").map((p) => p.text);
      results.push({
        seq,
        toolCallId: m.toolCallId,
        callIndex: call?.index ?? null,
        tool: m.toolName,
        status: m.details?.status ?? null,
        isError: m.isError === true,
        ...(m.details?.deniedReason ? { deniedReason: m.details.deniedReason } : {}),
        ...(m.details?.intervention
          ? { detector: m.details.intervention.detector, count: m.details.intervention.count, reason: m.details.intervention.reason }
          : {}),
        texts,
      });
    }
    const runtimeCount = db.prepare("SELECT count(*) AS n FROM trajectory_runtime_events WHERE session_id = ?").get(sid).n;
    return {
      sessionKey: key,
      sessionId: sid,
      transcriptRows: rows.length,
      compressedRows: events.filter((e) => e.compressed).length,
      compressedRowSeqs: events.filter((e) => e.compressed).map((e) => e.seq),
      eventTypes: countBy(events.map((e) => e.event?.type + (e.event?.customType ? `:${e.event.customType}` : e.event?.message ? `:${e.event.message.role}` : ""))),
      runtimeEvents: runtimeCount,
      runIds: [...new Set(calls.map((c) => c.runId).filter(Boolean))],
      toolCalls: calls.map(({ index, seq, id, tool, arguments: a, runId }) => ({ index, seq, id, tool, arguments: a, runId })),
      toolResults: results,
      compactions: events.filter((e) => e.event?.type === "compaction").map((e) => ({ seq: e.seq, id: e.event.id, firstKeptEntryId: e.event.firstKeptEntryId, runId: e.event.__openclaw?.runId ?? null })),
      userMessages: events.filter((e) => e.event?.message?.role === "user").map((e) => e.event.message.content),
    };
  } finally {
    db.close();
  }
}

function countBy(list) {
  const o = {};
  for (const x of list) o[x] = (o[x] ?? 0) + 1;
  return o;
}

async function main() {
  const t0 = Date.now();
  const dirs = h.makeRoot("fixtures");
  const model = await h.startModel({ out: dirs.out });
  let gw;
  const runs = {};
  try {
    gw = await h.startGateway({
      model,
      dirs,
      loopDetection: true,
      config: { agents: { defaults: { compaction: { keepRecentTokens: 200 } } } },
      workspaceFiles: { "a.txt": "alpha\n", "b.txt": "beta\n" },
    });
    const turn = async (key, message) => {
      const r = await h.timed(`${key}: ${message.slice(0, 40)}`, () => h.runAgentTurn(gw, { sessionKey: key, message }));
      return { exitCode: r.code, runId: r.json?.runId ?? null, status: r.json?.status ?? (r.json?.ok === false ? "error" : null), error: r.json?.error ?? r.json?.result?.meta?.error ?? null, payloads: (r.json?.result?.payloads ?? []).map((p) => p.text) };
    };
    // (a) first, so that its call ids are call_fake_1..22
    runs.loop = [await turn(SESSIONS.loop, "[scenario:exec-poll] Run echo loop please")];
    runs.compaction = [
      await turn(SESSIONS.compaction, "[scenario:warmup] warmup one"),
      await turn(SESSIONS.compaction, "[scenario:warmup] warmup two"),
      await turn(SESSIONS.compaction, "[scenario:overflow-loop] OVERFLOW turn three: run echo"),
    ];
    runs.zstd = [await turn(SESSIONS.zstd, "[scenario:long-output] print three long sequences")];
    runs.healthy = [await turn(SESSIONS.healthy, "[scenario:healthy] check a.txt and write notes")];
    runs.deleted = [await turn(SESSIONS.deleted, "[scenario:healthy] a session that will be deleted")];

    const exp = await h.timed("export-trajectory", () =>
      gw.cli(["sessions", "export-trajectory", "--session-key", SESSIONS.loop, "--workspace", dirs.workspace, "--json"], { timeoutMs: 90_000 }),
    );
    const expJson = h.parseJsonOutput(exp.stdout);
    if (exp.code !== 0 || !expJson?.outputDir) throw new Error(`export-trajectory failed: ${exp.stdout}\n${exp.stderr}`);
    const del = await h.timed("sessions delete", () => gw.cli(["sessions", "delete", SESSIONS.deleted, "--yes", "--json"], { timeoutMs: 90_000 }));
    const delJson = h.parseJsonOutput(del.stdout);
    const archived = delJson?.results?.[0]?.archived ?? [];
    await gw.stop();

    // --- write the fixtures
    fs.rmSync(OUT, { recursive: true, force: true });
    fs.mkdirSync(OUT, { recursive: true });
    const src = h.agentDbPath(gw.stateDir, "main");
    const dst = path.join(OUT, "openclaw-agent.sqlite");
    {
      const db = new DatabaseSync(src, { readOnly: true });
      db.exec(`VACUUM INTO '${dst.replaceAll("'", "''")}'`);
      db.close();
      // smaller pages: ~200 mostly empty tables and indexes cost one page each (4 KiB -> 1 KiB);
      // rollback journal, so that reading the fixture creates no -wal/-shm files
      const out = new DatabaseSync(dst);
      out.exec("PRAGMA journal_mode=DELETE");
      out.exec("PRAGMA page_size=1024");
      out.exec("VACUUM");
      const ok = out.prepare("PRAGMA integrity_check").get().integrity_check;
      out.close();
      if (ok !== "ok") throw new Error(`integrity_check of the fixture: ${ok}`);
    }
    const trajDir = path.join(OUT, "trajectory-fx-loop-exec");
    fs.mkdirSync(trajDir);
    const bundleFiles = fs.readdirSync(expJson.outputDir);
    for (const f of bundleFiles) fs.copyFileSync(path.join(expJson.outputDir, f), path.join(trajDir, f));
    const jsonlDir = path.join(OUT, "deleted-session-jsonl");
    fs.mkdirSync(jsonlDir);
    const jsonlFiles = [];
    for (const a of archived) {
      const base = path.basename(a);
      fs.copyFileSync(a, path.join(jsonlDir, base));
      jsonlFiles.push(base);
      if (base.endsWith(".zst")) {
        const plain = `${base.split(".jsonl.deleted")[0]}.jsonl`;
        fs.writeFileSync(path.join(jsonlDir, plain), zlib.zstdDecompressSync(fs.readFileSync(a)));
        jsonlFiles.push(plain);
      }
    }

    let legacy;
    try {
      legacy = await makeLegacy();
    } catch (err) {
      legacy = { error: String(err?.message ?? err).slice(0, 2000) };
      h.log(`legacy JSONL fixture failed: ${legacy.error}`);
    }

    // --- expected facts, read back from the fixture itself
    const s = Object.fromEntries(Object.entries(SESSIONS).filter(([k]) => k !== "deleted").map(([k, key]) => [k, summarize(dst, key)]));
    const loopBlocked = s.loop.toolResults.filter((r) => r.status === "blocked");
    const warn = s.loop.toolResults.find((r) => r.texts.some((t) => t.startsWith("[System note: Tool-loop warning")));
    const firstBlock = loopBlocked[0];
    const expected = {
      openclaw: VERSION,
      madeBy: "tests/e2e/make-fixtures.mjs",
      madeAt: new Date().toISOString(),
      config: { "tools.loopDetection.enabled": true, "agents.defaults.compaction.keepRecentTokens": 200, model: "fake/loop-1 (tests/e2e/fake-model.mjs)" },
      files: {
        sqlite: "openclaw-agent.sqlite",
        trajectoryBundle: { dir: "trajectory-fx-loop-exec", sessionKey: SESSIONS.loop, files: bundleFiles.sort() },
        deletedSessionJsonl: { dir: "deleted-session-jsonl", sessionKey: SESSIONS.deleted, files: jsonlFiles },
        legacyJsonl: legacy,
      },
      sessions: {
        loop: {
          ...pick(s.loop, ["sessionKey", "sessionId", "transcriptRows", "compressedRows", "runtimeEvents", "runIds"]),
          toolCalls: s.loop.toolCalls.length,
          warning: warn ? { callIndex: warn.callIndex, toolCallId: warn.toolCallId, tool: warn.tool, appended: warn.texts.at(-1) } : null,
          gatewayBlock: firstBlock
            ? {
                callIndex: firstBlock.callIndex,
                toolCallId: firstBlock.toolCallId,
                tool: firstBlock.tool,
                seq: firstBlock.seq,
                deniedReason: firstBlock.deniedReason,
                detector: firstBlock.detector,
                count: firstBlock.count,
                reason: firstBlock.reason,
                modelSaw: firstBlock.texts[0],
              }
            : null,
          blocked: loopBlocked.map((r) => pick(r, ["callIndex", "toolCallId", "tool", "seq", "deniedReason", "detector", "count"])),
          runEnd: runs.loop[0],
        },
        compaction: {
          ...pick(s.compaction, ["sessionKey", "sessionId", "transcriptRows", "compressedRows", "runtimeEvents", "runIds", "compactions"]),
          toolCalls: s.compaction.toolCalls.length,
          toolCallsPerRun: countBy(s.compaction.toolCalls.map((c) => c.runId)),
          blocked: s.compaction.toolResults.filter((r) => r.status === "blocked").length,
          runEnds: runs.compaction,
        },
        zstd: {
          ...pick(s.zstd, ["sessionKey", "sessionId", "transcriptRows", "compressedRows", "compressedRowSeqs", "runtimeEvents", "runIds"]),
          toolCalls: s.zstd.toolCalls.map((c) => pick(c, ["index", "id", "tool", "arguments"])),
          runEnd: runs.zstd[0],
        },
        healthy: {
          ...pick(s.healthy, ["sessionKey", "sessionId", "transcriptRows", "compressedRows", "runtimeEvents", "runIds"]),
          toolCalls: s.healthy.toolCalls.map((c) => pick(c, ["index", "id", "tool", "arguments"])),
          blocked: s.healthy.toolResults.filter((r) => r.status === "blocked").length,
          errors: s.healthy.toolResults.filter((r) => r.isError).length,
          runEnd: runs.healthy[0],
        },
      },
      perSession: s,
    };
    // sanity: the facts the README promises
    const problems = [];
    if (!firstBlock || firstBlock.callIndex !== 21 || firstBlock.detector !== "generic_repeat") problems.push(`(a) block at ${JSON.stringify(firstBlock)}`);
    if (s.compaction.compactions.length !== 1) problems.push(`(b) compactions: ${s.compaction.compactions.length}`);
    if (s.zstd.compressedRows < 1) problems.push("(c) no compressed rows");
    if (expected.sessions.healthy.blocked || expected.sessions.healthy.errors) problems.push("(d) not healthy");
    fs.writeFileSync(path.join(OUT, "expected.json"), JSON.stringify(expected, null, 2) + "\n");
    const legacyFiles = legacy?.files ? legacy.files.map((f) => path.join(OUT, legacy.dir, f)) : [];
    const sizes = Object.fromEntries(
      [dst, ...bundleFiles.map((f) => path.join(trajDir, f)), ...jsonlFiles.map((f) => path.join(jsonlDir, f)), ...legacyFiles].map((f) => [
        path.relative(OUT, f),
        fs.statSync(f).size,
      ]),
    );
    for (const [f, n] of Object.entries(sizes)) if (n > 1024 * 1024) problems.push(`${f} is ${n} bytes (> 1 MB)`);
    fs.writeFileSync(path.join(OUT, "README.md"), readme(expected, sizes));
    h.log(`fixtures written to ${path.relative(h.REPO, OUT)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const [f, n] of Object.entries(sizes)) h.log(`  ${f}: ${n} bytes`);
    if (problems.length) {
      h.log(`PROBLEMS:\n  ${problems.join("\n  ")}`);
      process.exitCode = 1;
    }
  } finally {
    await gw?.stop();
    await model.stop();
    if (gw) await gw.cleanup({ keep: process.exitCode === 1 });
    else await h.cleanupRoot(dirs.root);
  }
}

/**
 * The older on-disk format: OpenClaw 2026.7.35 (installed next to 2026.9.6 in tests/openclaw)
 * still writes agents/<id>/sessions/<sessionId>.jsonl (header version 3) and sessions.json. One
 * looping exec session, run embedded (`openclaw agent --local`, no gateway), same config.
 */
async function makeLegacy() {
  const key = "agent:main:fx-legacy-loop-exec";
  const dirs = h.makeRoot("fixtures-legacy");
  const model = await h.startModel({ out: dirs.out });
  try {
    const cfg = h.baseConfig({ port: await h.freeGatewayPort(), modelPort: model.port, dirs, loopDetection: true });
    fs.writeFileSync(dirs.configPath, JSON.stringify(cfg, null, 2));
    fs.writeFileSync(path.join(dirs.workspace, "a.txt"), "alpha\n");
    const r = await h.timed("legacy 2026.7.35 agent --local", () =>
      h.openclaw(dirs, ["agent", "--local", "--agent", "main", "--session-key", key, "--message", "[scenario:exec-poll] Run echo loop please", "--json"], {
        entry: h.OPENCLAW_LEGACY_ENTRY,
        timeoutMs: 180_000,
      }),
    );
    const json = h.parseJsonOutput(r.stdout);
    const sessionsDir = path.join(dirs.stateDir, "agents", "main", "sessions");
    const index = JSON.parse(fs.readFileSync(path.join(sessionsDir, "sessions.json"), "utf8"));
    const sid = index[key]?.sessionId;
    if (!sid) throw new Error(`legacy run wrote no session for ${key}: ${r.stdout}\n${r.stderr.slice(-2000)}`);
    const outDir = path.join(OUT, "legacy-jsonl-openclaw-2026.7.35");
    fs.mkdirSync(outDir, { recursive: true });
    fs.copyFileSync(path.join(sessionsDir, `${sid}.jsonl`), path.join(outDir, `${sid}.jsonl`));
    fs.copyFileSync(path.join(sessionsDir, "sessions.json"), path.join(outDir, "sessions.json"));
    const lines = fs.readFileSync(path.join(outDir, `${sid}.jsonl`), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const calls = [];
    for (const e of lines) {
      if (e.type === "message" && e.message?.role === "assistant")
        for (const p of e.message.content ?? []) if (p?.type === "toolCall") calls.push({ index: calls.length + 1, id: p.id, tool: p.name });
    }
    const results = lines.filter((e) => e.type === "message" && e.message?.role === "toolResult").map((e) => e.message);
    const blocked = results
      .filter((m) => m.details?.status === "blocked")
      .map((m) => ({
        callIndex: calls.find((c) => c.id === m.toolCallId)?.index ?? null,
        toolCallId: m.toolCallId,
        tool: m.toolName,
        deniedReason: m.details.deniedReason ?? null,
        detector: m.details.intervention?.detector ?? null,
        count: m.details.intervention?.count ?? null,
        text: (m.content ?? []).map((p) => p.text).join("\n"),
      }));
    return {
      openclaw: JSON.parse(fs.readFileSync(path.join(path.dirname(h.OPENCLAW_LEGACY_ENTRY), "package.json"), "utf8")).version,
      how: "openclaw agent --local (embedded, no gateway), tools.loopDetection.enabled: true",
      dir: path.basename(outDir),
      files: [`${sid}.jsonl`, "sessions.json"],
      sessionKey: key,
      sessionId: sid,
      header: lines[0],
      lines: lines.length,
      toolCalls: calls.length,
      warning: (() => {
        const m = results.find((x) => (x.content ?? []).some((p) => String(p.text ?? "").startsWith("[System note:")));
        return m ? { callIndex: calls.find((c) => c.id === m.toolCallId)?.index ?? null, toolCallId: m.toolCallId, appended: m.content.at(-1).text } : null;
      })(),
      gatewayBlock: blocked[0] ?? null,
      blocked: blocked.map(({ text, ...b }) => b),
      runEnd: { exitCode: r.code, payloads: (json?.payloads ?? []).map((p) => p.text), stopReason: json?.meta?.stopReason ?? null },
    };
  } finally {
    await model.stop();
    await h.cleanupRoot(dirs.root);
  }
}

function pick(o, keys) {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}

function readme(e, sizes) {
  const a = e.sessions.loop;
  const b = e.sessions.compaction;
  const c = e.sessions.zstd;
  const d = e.sessions.healthy;
  return `# Transcript fixtures from the real OpenClaw ${e.openclaw} gateway

Made by \`tests/e2e/make-fixtures.mjs\` (do not edit by hand; regenerate instead):

\`\`\`sh
source scripts/node24.sh && "$NODE24_BIN/node" tests/e2e/make-fixtures.mjs
\`\`\`

It starts the real gateway (\`tests/openclaw/node_modules/openclaw\`, ${e.openclaw}) with a fresh HOME,
TMPDIR and state dir, \`tools.loopDetection.enabled: true\` (the core guard; no plugin),
\`agents.defaults.compaction.keepRecentTokens: 200\`, and the scripted fake OpenAI-compatible model
\`tests/e2e/fake-model.mjs\` (model \`fake/loop-1\`); drives each session with
\`openclaw agent --agent main --session-key <key> --message <text> --json\`; exports one trajectory;
deletes one throw-away session; stops the gateway; and copies the agent database with
\`VACUUM INTO\` (then \`PRAGMA page_size=1024; VACUUM\` to keep it small, journal mode DELETE
instead of WAL; the schema and rows are OpenClaw's). The facts below are read back from the copied file and are also in
\`expected.json\` (machine-readable; \`perSession\` there lists every tool call and result).

Paths inside the events (\`cwd\`, \`details.cwd\`, the workspace) point to the deleted temp dir of the
run; timestamps, session ids and run ids are those of the run.

## Files

| file | what | bytes |
|---|---|---|
${Object.entries(sizes).map(([f, n]) => `| \`${f}\` | ${describe(f)} | ${n} |`).join("\n")}

## \`openclaw-agent.sqlite\`

The agent store exactly as 2026.9.6 lays it out (\`$OPENCLAW_STATE_DIR/agents/main/agent/openclaw-agent.sqlite\`),
vacuumed. Read \`transcript_events\` ordered by \`seq\` for a session id; a row has \`event_json\` (text)
**or** \`event_zstd\` (zstd, then \`event_json\` is NULL; Node 24: \`zlib.zstdDecompressSync\`). Map a
session key to its id with \`session_nodes.current_session_id\`. Runtime (trajectory) events are in
\`trajectory_runtime_events\`.

| session key | session id | rows | zstd rows | tool calls | what |
|---|---|---|---|---|---|
| \`${a.sessionKey}\` | \`${a.sessionId}\` | ${a.transcriptRows} | ${a.compressedRows} | ${a.toolCalls} | (a) the model repeats \`exec {"command":"echo loop"}\`; the core warns, blocks, then stops the run |
| \`${b.sessionKey}\` | \`${b.sessionId}\` | ${b.transcriptRows} | ${b.compressedRows} | ${b.toolCalls} | (b) two warm-up turns, then a turn answered with HTTP 400 \`context_length_exceeded\` at its 2nd tool result: auto-compaction (${b.compactions.length} \`compaction\` event), retry, the same loop, and the core's post-compaction guard aborts the run |
| \`${c.sessionKey}\` | \`${c.sessionId}\` | ${c.transcriptRows} | ${c.compressedRows} | ${c.toolCalls.length} | (c) \`exec seq …\` with long outputs: rows at seq ${c.compressedRowSeqs.join(", ")} are zstd-compressed |
| \`${d.sessionKey}\` | \`${d.sessionId}\` | ${d.transcriptRows} | ${d.compressedRows} | ${d.toolCalls.length} | (d) healthy: ${d.toolCalls.map((t) => t.tool).join(", ")}; no loop, no error |

### (a) where the gateway itself blocked

- Warning: tool call **#${a.warning?.callIndex}** of the session (\`${a.warning?.toolCallId}\`, \`${a.warning?.tool}\`): its result got a second
  text part \`${a.warning?.appended}\`.
- **Block: tool call #${a.gatewayBlock?.callIndex}** of the session, call id **\`${a.gatewayBlock?.toolCallId}\`**, tool **\`${a.gatewayBlock?.tool}\`**
  (toolResult row seq ${a.gatewayBlock?.seq}): \`details.status: "blocked"\`, \`deniedReason: "${a.gatewayBlock?.deniedReason}"\`,
  \`intervention.detector: "${a.gatewayBlock?.detector}"\`, \`count: ${a.gatewayBlock?.count}\`, reason
  \`${a.gatewayBlock?.reason}\`. The model received that reason plus the recovery paragraph:
  \`${a.gatewayBlock?.modelSaw?.replaceAll("\n", "\\n")}\`
- Then: ${a.blocked.slice(1).map((x) => `call #${x.callIndex} (\`${x.toolCallId}\`) blocked with count ${x.count}`).join("; ")}, and the run stopped
  (\`openclaw agent\` exit ${a.runEnd.exitCode}, error \`${a.runEnd.error?.kind ?? ""}\`: ${a.runEnd.error?.message ?? ""}).

Call index = 1-based position among the session's \`toolCall\` parts of assistant messages, in \`seq\`
order; the call ids are the fake model's (\`call_fake_<n>\`; the model sees them without underscores).

### (b) compaction

Compaction event(s): ${b.compactions.map((x) => `seq ${x.seq} (id \`${x.id}\`, firstKeptEntryId \`${x.firstKeptEntryId}\`, runId \`${x.runId}\`)`).join("; ")}.
Tool calls per run: ${Object.entries(b.toolCallsPerRun).map(([r, n]) => `\`${r}\`: ${n}`).join(", ")}. The last run ended with
\`${b.runEnds.at(-1).error?.message ?? JSON.stringify(b.runEnds.at(-1).error)}\` (exit ${b.runEnds.at(-1).exitCode}); that abort text is not in
the transcript (only in the CLI/gateway error).

## \`trajectory-fx-loop-exec/\`

\`openclaw sessions export-trajectory --session-key ${a.sessionKey} --workspace <ws> --json\`, copied from
\`<ws>/.openclaw/trajectory-exports/openclaw-trajectory-<id>-<ts>/\`: \`events.jsonl\` mixes transcript
(\`source:"transcript"\`) and runtime (\`source:"runtime"\`) events; \`session-branch.json\` is
\`{header, leafId, entries}\` for the active branch. Paths are redacted to \`$WORKSPACE_DIR\`.

## \`deleted-session-jsonl/\` (the JSONL question)

OpenClaw ${e.openclaw} writes **no live JSONL transcript**: sessions live only in SQLite. The one JSONL
it still produces is the archive \`openclaw sessions delete <key>\` keeps:
\`agents/main/sessions/<sessionId>.jsonl.deleted.<timestamp>.<hash>.zst\`, a zstd-compressed file with one
pi-format event per line, header \`{"type":"session","version":4,…}\` (the same records as the SQLite rows,
not an older pre-SQLite version). It is here as written (\`.zst\`) and decompressed (\`.jsonl\`), for the
session \`${e.files.deletedSessionJsonl.sessionKey}\` (a healthy run like (d); it is no longer in the SQLite file).
${e.openclaw} cannot write a JSONL transcript in an older format.

## \`legacy-jsonl-openclaw-2026.7.35/\` (the older format, from the older release)

${
    e.files.legacyJsonl?.error
      ? `Not made: ${e.files.legacyJsonl.error}`
      : `Written by OpenClaw **${e.files.legacyJsonl.openclaw}** (installed next to ${e.openclaw} in \`tests/openclaw\`), which still keeps
live transcripts as files: \`agents/main/sessions/<sessionId>.jsonl\` (header \`${JSON.stringify(e.files.legacyJsonl.header)}\`)
plus the index \`sessions.json\` (session key → \`sessionId\`, …). How: ${e.files.legacyJsonl.how}, the same fake model
and config, one session \`${e.files.legacyJsonl.sessionKey}\` (id \`${e.files.legacyJsonl.sessionId}\`) repeating
\`exec {"command":"echo loop"}\`: ${e.files.legacyJsonl.lines} lines, ${e.files.legacyJsonl.toolCalls} tool calls.
${e.files.legacyJsonl.warning ? `Warning at call #${e.files.legacyJsonl.warning.callIndex} (\`${e.files.legacyJsonl.warning.toolCallId}\`). ` : ""}First block at
**call #${e.files.legacyJsonl.gatewayBlock?.callIndex}** (\`${e.files.legacyJsonl.gatewayBlock?.toolCallId}\`, \`${e.files.legacyJsonl.gatewayBlock?.tool}\`,
\`deniedReason: "${e.files.legacyJsonl.gatewayBlock?.deniedReason}"\`, ${
        e.files.legacyJsonl.gatewayBlock?.detector
          ? `detector \`${e.files.legacyJsonl.gatewayBlock.detector}\`, count ${e.files.legacyJsonl.gatewayBlock.count}`
          : "\`details\` = \`{status, deniedReason, reason}\` with no \`intervention\` object"
      }; no \`[System note: …]\` warning part in this release):
\`${e.files.legacyJsonl.gatewayBlock?.text?.replaceAll("\n", "\\n")}\`. ${e.files.legacyJsonl.openclaw} does not stop the run: blocked calls
${e.files.legacyJsonl.blocked.map((b) => "#" + b.callIndex).join(", ")}, until the fake model's bound ends the turn.`
  }
`;
}

function describe(f) {
  if (f === "openclaw-agent.sqlite") return "the agent store, sessions (a)-(d)";
  if (f.startsWith("trajectory-")) return "export-trajectory bundle of (a)";
  if (f.endsWith(".zst")) return "the delete archive as OpenClaw wrote it";
  if (f.endsWith(".jsonl") && f.startsWith("deleted-")) return "the same, decompressed (JSONL)";
  if (f.startsWith("legacy-") && f.endsWith(".jsonl")) return "older-format live transcript (OpenClaw 2026.7.35)";
  if (f.startsWith("legacy-") && f.endsWith("sessions.json")) return "its session index (2026.7.35)";
  return "";
}

await main();
