// The scripted model (tests/frameworks/model.py) for node --test files: `startModel()` once per
// file (closed in `after`), `scenario()` per test: register a script, the base URLs, what the
// model received.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';

const MODEL = new URL('../model.py', import.meta.url).pathname;

/** Starts the model; returns { port, close() }. */
export async function startModel() {
  const portfile = join(mkdtempSync(join(tmpdir(), 'lg-model-')), 'port');
  const proc = spawn(process.env.PYTHON ?? 'python3', [MODEL, '--portfile', portfile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 10_000;
  while (!existsSync(portfile)) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the scripted model did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const port = Number(readFileSync(portfile, 'utf8'));
  return { port, close: () => proc.kill() };
}

export class Scenario {
  constructor(port, name = `s${randomUUID().slice(0, 12)}`) {
    this.name = name;
    this.root = `http://127.0.0.1:${port}`;
    this.openaiBase = `${this.root}/${name}/v1`; // Chat Completions and Responses
    this.anthropicBase = `${this.root}/${name}`; // the SDKs add /v1/messages
  }

  /** turns: a list of steps, each a list of { tool, args } (parallel calls). */
  async script(turns, final = 'done') {
    const r = await fetch(`${this.root}/script/${this.name}`, { method: 'PUT', body: JSON.stringify({ turns, final }) });
    if (!r.ok) throw new Error(`script: ${r.status}`);
    return this;
  }

  /** What the model received, oldest first (`kind = null`: side requests too). */
  async requests(kind = 'main') {
    const log = await (await fetch(`${this.root}/log/${this.name}`)).json();
    return log.filter((e) => kind === null || e.kind === kind);
  }

  /** Every tool result the model read, in order: { turn, text, isError }. */
  async results() {
    return (await this.requests()).flatMap((e) => e.results.map((r) => ({ turn: e.turn, text: r.text, isError: r.is_error })));
  }
}
