// The README.md of tests/fixtures/openclaw-2026.9.6/, written by make-fixtures.mjs from the facts
// of its expected.json and the fixture files' sizes: readme(expected, sizes).

export function readme(e, sizes) {
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
run; timestamps, session ids and run ids are those of the run. The recording machine's paths are
taken out (\`fixtures-scrub.mjs\`): the repository is \`$REPO_DIR\` and the node binary \`node\`.

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
