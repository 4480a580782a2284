// How fast a `loopguard report` page opens in headless Chromium (scripts/bench-report.py):
// first-contentful-paint of the overview (the Performance API, from navigation start on a
// file:// URL), the load event (every session's data block read), and opening one session
// (click → its first call shown). Prints one JSON line per run.
//
//   node tests/report/paint.mjs PAGE.html [RUNS]
import path from "node:path";
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const [file, runsArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: node tests/report/paint.mjs PAGE.html [RUNS]");
  process.exit(2);
}
const runs = Number(runsArg || 3);
const executablePath = process.env.CHROMIUM || execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
const browser = await chromium.launch({ executablePath, headless: true });
try {
  for (let r = 0; r < runs; r++) {
    // A fresh context each run: nothing cached from the run before.
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: "commit", timeout: 120000 });
    await page.waitForFunction(() => performance.getEntriesByName("first-contentful-paint").length > 0, null, { timeout: 120000, polling: 20 });
    await page.waitForLoadState("load", { timeout: 300000 });
    const t = await page.evaluate(() => ({
      fcp_ms: performance.getEntriesByName("first-contentful-paint")[0].startTime,
      dom_content_loaded_ms: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
      load_ms: performance.getEntriesByType("navigation")[0].loadEventEnd,
      sessions: document.querySelectorAll("details.s").length,
    }));
    const before = await page.evaluate(() => performance.now());
    await page.locator("details.s > summary").first().click();
    await page.locator("details.s[open] .call").first().waitFor({ timeout: 60000 });
    t.open_session_ms = (await page.evaluate(() => performance.now())) - before;
    t.errors = errors.length;
    console.log(JSON.stringify(t));
    await context.close();
  }
} finally {
  await browser.close();
}
