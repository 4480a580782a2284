// The Node store loop (StoredLoopGuard, packages/node/lib/stored.js) for the store conformance
// suite (run.py): the options of `loopguard replay --store` in, one trace event a line on stdin,
// and on stdout what its public API says, unconverted: per event {"decision","via"} from
// `decide()`, at the end {"stats": stats()}. Log lines go to stderr.
//
// usage: node node-host.mjs --config FILE --store URL [--store-prefix P] [--store-deadline-ms N]
//        [--store-fail-closed] [--store-ca F] [--store-cert F --store-key F] [--package DIR]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

const names = { '--store': 'store', '--store-prefix': 'storePrefix', '--store-deadline-ms': 'storeDeadlineMs', '--store-ca': 'storeCa', '--store-cert': 'storeCert', '--store-key': 'storeKey' };
const options = { log: (m) => process.stderr.write(`${m}\n`) };
let config = null;
let pkg = path.resolve(import.meta.dirname, '../../packages/node');
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--store-fail-closed') options.storeFailClosed = true;
  else if (a === '--config') config = readFileSync(argv[++i], 'utf8');
  else if (a === '--package') pkg = path.resolve(argv[++i]);
  else if (a === '--store-deadline-ms') options.storeDeadlineMs = Number(argv[++i]);
  else if (names[a]) options[names[a]] = argv[++i];
  else throw new Error(`node-host.mjs: unknown argument ${a}`);
}
const { StoredLoopGuard } = await import(pathToFileURL(path.join(pkg, 'index.js')).href);
const guard = new StoredLoopGuard(config, options);
try {
  let n = 0;
  for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    const d = await guard.decide(line, ++n);
    process.stdout.write(`${JSON.stringify({ decision: d.decision, via: d.via })}\n`);
  }
  process.stdout.write(`${JSON.stringify({ stats: guard.stats() })}\n`);
} finally {
  await guard.close();
}
