#!/usr/bin/env node
// Replays a trace through the policy component and prints the decisions: the same bytes as
// `loopguard replay --config FILE TRACE` (the parity test holds every host to that).
//
// Usage: node replay.mjs --config FILE TRACE|-
// Exit codes: 0 success, 2 any error (one line `replay.mjs: <message>` on stderr).
import { readFileSync } from 'node:fs';
import { LoopGuardError, replay } from 'loopguard';

const USAGE = 'usage: node replay.mjs --config FILE TRACE|-';

function parse(argv) {
  let config;
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--config') config = argv[++i];
    else if (arg.startsWith('--config=')) config = arg.slice('--config='.length);
    else if (arg === '-h' || arg === '--help') return { help: true };
    else if (arg.startsWith('-') && arg !== '-') throw new Error(`unknown option ${arg}; ${USAGE}`);
    else positional.push(arg);
  }
  if (config === undefined) throw new Error(`--config FILE is required; ${USAGE}`);
  if (positional.length !== 1) throw new Error(`expected one TRACE (or - for stdin); ${USAGE}`);
  return { config, trace: positional[0] };
}

function read(file, what) {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new Error(`${what} ${file}: ${e.message}`);
  }
}

try {
  const args = parse(process.argv.slice(2));
  if (args.help) {
    console.log(USAGE);
  } else {
    // The config is passed through as text: the policy parses JSON and JSON5 itself.
    process.stdout.write(replay(read(args.config, 'config'), read(args.trace, 'trace')));
  }
} catch (e) {
  const message = e instanceof LoopGuardError ? e.message : (e?.message ?? String(e));
  process.stderr.write(`replay.mjs: ${message}\n`);
  process.exitCode = 2;
}
