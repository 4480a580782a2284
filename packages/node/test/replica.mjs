// One gateway replica for store.test.mjs, as a separate process: reads on stdin
// `{config, options, events: [[n, line], …], startAt, inFlight}`, waits until `startAt` (so that
// the replicas of a test decide at the same time), decides its events with up to `inFlight`
// decisions under way (as a gateway answers concurrent requests), and writes one JSON line per
// decision `{n, key, version, via, retries, decision}`, then `{stats}`.
import { StoredLoopGuard } from '../index.js';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { config, options, events, startAt, inFlight = 4 } = JSON.parse(input);
const guard = new StoredLoopGuard(config, options);
const wait = startAt - Date.now();
if (wait > 0) await new Promise((r) => setTimeout(r, wait));

const out = [];
let next = 0;
async function lane() {
  while (next < events.length) {
    const [n, line] = events[next++];
    const d = await guard.decide(line, n);
    out.push(JSON.stringify({ n, ...d }));
  }
}
await Promise.all(Array.from({ length: inFlight }, lane));
out.push(JSON.stringify({ stats: guard.stats() }));
process.stdout.write(`${out.join('\n')}\n`);
await guard.close();
