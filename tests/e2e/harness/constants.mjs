// Paths and fixed names of the e2e harness (where OpenClaw and the fakes live, the gateway token,
// the fake provider/model ids), plus the Node version check that runs on import.
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// this file sits in tests/e2e/harness/; E2E_DIR stays tests/e2e (fake-model.mjs etc. are found from it)
export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = path.resolve(E2E_DIR, "../..");
export const OPENCLAW_DIR = process.env.OPENCLAW_DIR ?? path.join(REPO, "tests/openclaw/node_modules/openclaw");
export const OPENCLAW_ENTRY = path.join(OPENCLAW_DIR, "openclaw.mjs");
export const NODE = process.execPath;
export const NODE_BIN_DIR = path.dirname(NODE);
export const GATEWAY_TOKEN = "e2e-token-0123456789";
export const FAKE_PROVIDER = "fake";
export const FAKE_MODEL = "loop-1";
// (exported for the sibling modules under harness/; harness.mjs does not re-export it)
export const SYSTEM_TMP = os.tmpdir();

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 24 || (major === 24 && minor < 16)) {
  throw new Error(
    `The e2e harness needs Node >= 24.16 (openclaw needs node:sqlite); this is ${process.version}. ` +
      `Run: source scripts/node24.sh && "$NODE24_BIN/node" --test ...`,
  );
}

/** The older release installed next to it (tests/openclaw: `openclaw-2026.7.35`), for legacy fixtures. */
export const OPENCLAW_LEGACY_ENTRY = path.join(REPO, "tests/openclaw/node_modules/openclaw-2026.7.35/openclaw.mjs");
