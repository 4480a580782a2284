// `loopguard report` as a person uses it: the page opened in headless Chromium (the system's
// `chromium`, driven by playwright-core), its numbers checked against `loopguard transcripts
// --json` on the same input, a known session opened at its first block, the what-if list, a
// hostile transcript that must stay text, no network request, no console error; screenshots
// under target/report/.
//
//   LOOPGUARD_BIN=target/debug/loopguard node --test tests/report/report.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = path.resolve(ROOT, process.env.LOOPGUARD_BIN || "target/debug/loopguard");
const FIX = path.join(ROOT, "transcripts/tests/fixtures");
const ARTIFACTS = path.join(ROOT, "target/report");
const HOSTILE = "</script><img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>";

let work, browser, inputs;

function lg(args) {
  const r = spawnSync(BIN, args, { encoding: "utf8", cwd: work, maxBuffer: 1 << 28 });
  if (r.status !== 0) {
    throw new Error(`loopguard ${args.join(" ")}: exit ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return r.stdout;
}

const jsonl = (text) => text.trim().split("\n").map((l) => JSON.parse(l));

// The browser, with every request and console error of the page recorded.
async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const requests = [];
  const errors = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));
  const url = pathToFileURL(file).href;
  await page.goto(url);
  return { page, requests: () => requests.filter((u) => u !== url), errors };
}

before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "lg-report-"));
  // A transcript whose tool output (and command) is markup: it must show as text.
  const hostile = path.join(work, "hostile");
  fs.mkdirSync(hostile);
  const loop = fs.readFileSync(path.join(FIX, "claude-code/loop.jsonl"), "utf8");
  fs.writeFileSync(path.join(hostile, "hostile.jsonl"), loop.replaceAll("still-running", HOSTILE.replaceAll('"', "'")));
  inputs = [path.join(FIX, "claude-code"), path.join(FIX, "codex"), path.join(FIX, "gemini"), hostile];
  fs.writeFileSync(path.join(work, "b.json"), JSON.stringify({ loopguard: { detectors: { sameError: false } } }));
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const executablePath = process.env.CHROMIUM || execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  browser = await chromium.launch({ executablePath, headless: true });
});

after(async () => {
  await browser?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

test("the overview's numbers are those of `loopguard transcripts --json`", async () => {
  lg(["report", "--agent-default", "-o", "a.html", ...inputs]);
  const lines = jsonl(lg(["transcripts", "--agent-default", "--json", ...inputs]));
  const summary = lines.find((l) => l.type === "summary");
  const rows = lines.filter((l) => l.type === "session");
  const { page, requests, errors } = await open(path.join(work, "a.html"));
  const cell = (k) => page.locator(`#overview td[data-k="${k}"][data-c="0"]`).innerText().then(Number);
  for (const k of ["sessions", "tool_calls", "sessions_with_warnings", "sessions_with_blocks", "sessions_with_aborts", "read_errors"]) {
    assert.equal(await cell(k), summary[k], k);
  }
  assert.ok(summary.sessions_with_blocks > 0 && summary.sessions_with_aborts > 0, "the fixtures block and abort");
  // From the first block to the end of each blocked session.
  const saved = rows.filter((r) => r.first_block).reduce((n, r) => n + r.tool_calls - r.first_block.call + 1, 0);
  assert.equal(await cell("saved_calls"), saved);
  for (const [name, d] of Object.entries(summary.by_detector)) {
    const tds = await page.locator(`#detectors tr[data-detector="${name}"][data-c="0"] td`).allInnerTexts();
    assert.deepEqual(tds.slice(1).map(Number), [d.warnings, d.blocks, d.aborts, d.sessions_warned, d.sessions_blocked, d.sessions_aborted], name);
  }
  // Per tool: the calls add up to all calls.
  const toolCalls = await page.locator('#tools tr[data-c="0"] td:nth-of-type(2)').allInnerTexts();
  assert.equal(toolCalls.map(Number).reduce((a, b) => a + b, 0), summary.tool_calls);
  const touched = rows.filter((r) => r.warnings + r.blocks + r.aborts > 0).length;
  assert.equal(await page.locator("details.s").count(), touched);
  assert.deepEqual(requests(), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a known session opens at its first block, with the message the policy gives", async () => {
  lg(["report", "--agent-default", "-o", "a.html", ...inputs]);
  const rows = jsonl(lg(["transcripts", "--agent-default", "--json", ...inputs])).filter((l) => l.type === "session");
  const i = rows.findIndex((r) => r.file.endsWith(path.join("claude-code", "loop.jsonl")));
  const first = rows[i].first_block;
  assert.deepEqual([first.call, first.detector], [4, "same_result"], "the fixture's loop is blocked at call 4");
  const { page, requests, errors } = await open(path.join(work, "a.html"));
  await page.locator(`#s${i} > summary`).click();
  const selected = page.locator(`#s${i} .lane button.sel`);
  assert.equal(await selected.getAttribute("data-call"), String(first.call));
  const call = await page.locator(`#s${i} .call`).innerText();
  assert.match(call, /echo still-running/);
  assert.match(call, /same_result \(count 4\)/);
  assert.ok(call.includes(blockMessage(work, path.join(FIX, "claude-code/loop.jsonl"))), call);
  assert.deepEqual(requests(), []);
  assert.deepEqual(errors, []);
  await page.close();
});

// The first block's message, from `loopguard replay` on the session's trace under the
// agent-facing default (what `--agent-default` fills in: the `cautious` preset).
function blockMessage(dir, file) {
  fs.writeFileSync(path.join(dir, "one.trace"), lg(["transcripts", "--trace", file]));
  fs.writeFileSync(path.join(dir, "cautious.json"), JSON.stringify({ tools: { loopDetection: { enabled: true } }, loopguard: { preset: "cautious" } }));
  const block = jsonl(lg(["replay", "--config", "cautious.json", "one.trace"])).find((d) => d.action === "block");
  assert.ok(block?.message, "the replay blocks with a message");
  return block.message;
}

test("--compare lists exactly the sessions whose decisions change", async () => {
  lg(["report", "--agent-default", "--compare", "b.json", "-o", "ab.html", ...inputs]);
  const lines = jsonl(lg(["transcripts", "--agent-default", "--json", "--compare", "b.json", ...inputs]));
  const changed = lines.filter((l) => l.type === "change").map((l) => l.session_id);
  assert.ok(changed.length > 0 && changed.length < lines.filter((l) => l.type === "session").length / 2);
  const { page, requests, errors } = await open(path.join(work, "ab.html"));
  const listed = await page.locator("#changes tr.change").evaluateAll((trs) => trs.map((t) => t.dataset.session));
  assert.deepEqual(listed, changed);
  assert.equal(await page.locator('#changes [data-k="changed"]').innerText(), String(changed.length));
  // Side by side: a changed session opens with one lane per config.
  await page.locator("#changes tr.change a").first().click();
  const open_ = page.locator("details.s[open]");
  assert.equal(await open_.locator(".lane").count(), 2);
  assert.deepEqual(requests(), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a transcript holding markup stays text", async () => {
  lg(["report", "--agent-default", "-o", "a.html", ...inputs]);
  const raw = fs.readFileSync(path.join(work, "a.html"), "utf8");
  assert.ok(!raw.includes("<img"), "no <img from the input in the page's source");
  assert.equal(raw.split("</script>").length - 1, raw.split("<script").length - 1, "every </script> closes a script of the page");
  const { page, requests, errors } = await open(path.join(work, "a.html"));
  const hostile = page.locator('details.s[data-session="hostile"]');
  await hostile.locator("summary").click();
  const call = await hostile.locator(".call").innerText();
  assert.ok(call.includes(HOSTILE.replaceAll('"', "'")), call);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.evaluate(() => document.images.length), 0);
  assert.deepEqual(requests(), []);
  assert.deepEqual(errors, []);
  await page.close();
});

// The pictures (target/report/, one copied to docs/img/report.png): the what-if page of the
// three CLIs' fixtures, named by relative paths as a user in that folder would type them.
test("screenshots: the overview and one opened session", async () => {
  const r = spawnSync(BIN, ["report", "--agent-default", "--set", "loopguard.detectors.sameError=false", "-o", path.join(work, "shot.html"), "claude-code", "codex", "gemini"], { cwd: FIX, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const { page, requests, errors } = await open(path.join(work, "shot.html"));
  await page.screenshot({ path: path.join(ARTIFACTS, "overview.png"), fullPage: true });
  const loop = page.locator('details.s[data-session="loop"]');
  await loop.locator("summary").click();
  await loop.scrollIntoViewIfNeeded();
  await loop.screenshot({ path: path.join(ARTIFACTS, "session.png") });
  assert.deepEqual(requests(), []);
  assert.deepEqual(errors, []);
  await page.close();
});
