// Takes the recording machine out of the fixtures make-fixtures.mjs wrote: OpenClaw
// records where it ran (its export's `harness.invocation` and `entrypoint`, the skill locations
// in each system prompt), and that is the recorder's repository and node binary, e.g.
// /home/<user>/src/loopguard/.venv/…/bin/node. They become `node` and `$REPO_DIR` (as OpenClaw
// itself writes `$WORKSPACE_DIR`), in every text file, in the text columns of the SQLite store
// and inside .zst archives; the export's manifest.json gets the new byte sizes. Temp-dir paths
// (/tmp/loopguard-e2e-…) stay: they name a deleted directory, not a machine.
//   scrubFixture(dir, { repo, node })   what make-fixtures.mjs calls after writing
//   node tests/e2e/fixtures-scrub.mjs [NODE]   scrubs the committed fixture, recorded in this
//                                              checkout with NODE (default: the node running it)
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { DatabaseSync } from "node:sqlite";

/** `text` with the node binary and then the repository written machine-free. */
export function scrubText(text, { repo, node }) {
  return text.replaceAll(node, "node").replaceAll(repo, "$REPO_DIR");
}

/** Scrubs every file under `dir`; returns the paths (relative to `dir`) it changed. */
export function scrubFixture(dir, paths) {
  const changed = [];
  for (const file of fs.readdirSync(dir, { recursive: true }).map((f) => path.join(dir, f))) {
    if (!fs.statSync(file).isFile()) continue;
    const did = file.endsWith(".sqlite") ? scrubSqlite(file, paths) : scrubFile(file, paths);
    if (did) changed.push(path.relative(dir, file));
  }
  // An export bundle lists its files' sizes in the manifest.json beside them.
  const manifests = new Set(changed.map((f) => path.join(dir, path.dirname(f), "manifest.json")));
  for (const manifest of manifests) if (fs.existsSync(manifest)) resize(manifest);
  return changed;
}

function scrubFile(file, paths) {
  const bytes = fs.readFileSync(file);
  const zst = file.endsWith(".zst");
  const text = (zst ? zlib.zstdDecompressSync(bytes) : bytes).toString("utf8");
  const clean = scrubText(text, paths);
  if (clean === text) return false;
  fs.writeFileSync(file, zst ? zlib.zstdCompressSync(Buffer.from(clean, "utf8")) : clean);
  return true;
}

/**
 * The text columns, rewritten with the triggers set aside: OpenClaw's update triggers would mark
 * the rewritten session rows for revalidation, which is not what the gateway left.
 */
function scrubSqlite(file, paths) {
  const db = new DatabaseSync(file);
  let rows = 0;
  try {
    const triggers = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all();
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'").all();
    db.exec("BEGIN");
    for (const t of triggers) db.exec(`DROP TRIGGER "${t.name}"`);
    for (const { name } of tables) {
      for (const { name: col } of db.prepare(`PRAGMA table_info("${name}")`).all()) {
        const q = `SELECT rowid AS id, "${col}" AS v FROM "${name}" WHERE typeof("${col}") = 'text' AND (instr("${col}", ?) OR instr("${col}", ?))`;
        let select;
        try {
          select = db.prepare(q);
        } catch {
          continue; // a WITHOUT ROWID table: OpenClaw keeps no paths in those
        }
        for (const r of select.all(paths.repo, paths.node)) {
          const update = db.prepare(`UPDATE "${name}" SET "${col}" = ? WHERE rowid = ?`);
          rows += update.run(scrubText(r.v, paths), r.id).changes;
        }
      }
    }
    for (const t of triggers) db.exec(t.sql);
    db.exec("COMMIT");
    if (rows) db.exec("VACUUM"); // no old page keeps the old text
  } finally {
    db.close();
  }
  return rows > 0;
}

function resize(manifestFile) {
  const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
  if (!Array.isArray(manifest.contents)) return;
  for (const entry of manifest.contents) {
    const file = path.join(path.dirname(manifestFile), entry.path);
    if (typeof entry.bytes === "number" && fs.existsSync(file)) entry.bytes = fs.statSync(file).size;
  }
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2) + "\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { REPO, NODE } = await import("./harness/constants.mjs");
  const dir = path.join(REPO, "tests", "fixtures", "openclaw-2026.9.6");
  for (const f of scrubFixture(dir, { repo: REPO, node: process.argv[2] ?? NODE })) console.log(`scrubbed ${f}`);
}
