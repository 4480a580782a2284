// Isolates an OpenClaw package from this machine before its first module is imported: no
// ~/.openclaw, no /tmp/openclaw log, and console output on stderr (stdout carries decisions or a
// trace). Call isolate() before importing lib/openclaw.mjs (which imports the package lazily).

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

let done = false;

export function isolate() {
  if (done) return;
  done = true;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "lg-oracle-"));
  process.env.OPENCLAW_LOG_LEVEL = "silent";
  process.env.OPENCLAW_STATE_DIR = scratch;
  process.env.OPENCLAW_CONFIG_PATH = path.join(scratch, "openclaw.json");
  process.on("exit", () => {
    try {
      fs.rmSync(scratch, { recursive: true, force: true });
    } catch {}
  });
  const toStderr = (...a) => process.stderr.write(a.map(String).join(" ") + "\n");
  console.log = console.info = console.debug = console.warn = toStderr;
}
