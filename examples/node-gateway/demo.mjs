#!/usr/bin/env node
// A gateway's view of a trace: the events go through the guard (`applyEvents`, the batch form of
// the hooks beforeToolCall, afterToolOutcome, onBotMessage, ...) and the demo prints what the
// gateway would block, warn about, abort or suppress.
//
// Usage: node demo.mjs [examples/traces/<name>]   (default: read-list-ping-pong)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoopGuard, versions } from 'loopguard';

const here = dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2] ?? join(here, '../traces/read-list-ping-pong');
const config = readFileSync(join(dir, 'config.json5'), 'utf8');
const trace = readFileSync(join(dir, 'trace.jsonl'), 'utf8');

const v = versions();
console.log(`loopguard policy ${v.policy} (interface ${v.interface}): ${dir}`);
const tally = {};
const guard = new LoopGuard(config);
try {
  const decisions = guard.applyEvents(trace).trim().split('\n').map((l) => JSON.parse(l));
  const events = new Map(trace.split('\n').map((t, i) => [i + 1, t]).filter(([, t]) => t.trim() !== '').map(([n, t]) => [n, JSON.parse(t)]));
  decisions.forEach((d) => {
    const line = d.line;
    const ev = events.get(line);
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
