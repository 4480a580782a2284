// Writes openclaw.plugin.json from src/schema.js (the config schema's one source).
//   node scripts/build.mjs          write it
//   node scripts/build.mjs --check  exit 1 if the file on disk differs
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configSchema } from '../src/schema.js';

export const manifest = {
  id: 'loopguard',
  name: 'loopguard',
  description:
    "OpenClaw's loop decisions (tool-call loop detectors, post-compaction guard, bot-to-bot budgets) made by loopguard's sandboxed WebAssembly policy. Turn the core guard off (tools.loopDetection.enabled: false) when this plugin is on.",
  activation: { onStartup: true },
  contracts: { agentToolResultMiddleware: ['openclaw'] },
  configSchema,
};

const file = fileURLToPath(new URL('../openclaw.plugin.json', import.meta.url));
const text = `${JSON.stringify(manifest, null, 2)}\n`;
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const ok = fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text;
    if (!ok) {
      console.error('openclaw.plugin.json is out of date: run node scripts/build.mjs');
      process.exit(1);
    }
  } else {
    fs.writeFileSync(file, text);
    console.error(`wrote ${file}`);
  }
}
