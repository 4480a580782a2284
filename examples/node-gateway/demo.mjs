#!/usr/bin/env node
// A gateway's view of a trace: every event goes through the hook a gateway would call
// (beforeToolCall, afterToolOutcome, onBotMessage, ...), one call per event, and the demo prints
// what the gateway would block, warn about, abort or suppress.
//
// Usage: node demo.mjs [examples/traces/<name>]   (default: read-list-ping-pong)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoopGuard, policyVersion, interfaceVersion } from './loopguard.mjs';
import { feedTrace } from './trace-events.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2] ?? join(here, '../traces/read-list-ping-pong');
const config = readFileSync(join(dir, 'config.json5'), 'utf8');
const trace = readFileSync(join(dir, 'trace.jsonl'), 'utf8');

console.log(`loopguard policy ${policyVersion} (interface ${interfaceVersion}): ${dir}`);
const tally = {};
const guard = new LoopGuard(config);
try {
  feedTrace(guard, trace, (line, ev, d) => {
    tally[d.action] = (tally[d.action] ?? 0) + 1;
    const who = ev.session ?? `${ev.channel}/${ev.conversation}`;
    const what = ev.tool ?? (ev.sender ? `${ev.sender} -> ${ev.receiver}` : ev.kind);
    if (d.action === 'block') console.log(`line ${line}: BLOCK ${what} in ${who} (${d.detector} x${d.count}): ${d.message}`);
    else if (d.action === 'warn') console.log(`line ${line}: warn ${what} in ${who} (${d.detector} x${d.count}${d.notify ? ', notify' : ''})`);
    else if (d.action === 'abort') console.log(`line ${line}: ABORT run of ${who}: ${d.message}`);
    else if (d.action === 'suppress') console.log(`line ${line}: suppress ${what} in ${who} until ${d.cooldown_until_ms} (${d.budget} budget)`);
    else if (d.action === 'stop' && d.reason !== 'all_passed') console.log(`line ${line}: stop group thread ${who}: ${d.reason}`);
  });
  console.log(`stats: ${JSON.stringify(guard.stats())}`);
} finally {
  guard[Symbol.dispose](); // `using guard = ...` once the runtime (or TypeScript 5.2+) has it
}
console.log(`decisions: ${JSON.stringify(tally)}`);
