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
// The per-session facts are read back by fixtures-summary.mjs, the fixture README is written by
// fixtures-readme.mjs, and fixtures-scrub.mjs takes this machine's paths out; this file runs the
// gateway and writes the files.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { DatabaseSync } from "node:sqlite";
import * as h from "./harness.mjs";
import { summarize, countBy, pick } from "./fixtures-summary.mjs";
import { readme } from "./fixtures-readme.mjs";
import { scrubFixture } from "./fixtures-scrub.mjs";

const OUT = path.join(h.REPO, "tests", "fixtures", "openclaw-2026.9.6");
const VERSION = JSON.parse(fs.readFileSync(path.join(h.OPENCLAW_DIR, "package.json"), "utf8")).version;
const SESSIONS = {
  loop: "agent:main:fx-loop-exec",
  compaction: "agent:main:fx-compaction",
  zstd: "agent:main:fx-zstd",
  healthy: "agent:main:fx-healthy",
  deleted: "agent:main:fx-deleted",
};

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

    // --- no path of this machine in what is committed
    for (const f of scrubFixture(OUT, { repo: h.REPO, node: h.NODE })) h.log(`scrubbed ${f}`);

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

await main();
