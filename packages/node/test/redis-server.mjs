// The real store for the tests: Debian's redis-server (scripts/setup-redis.sh installs it; CI
// does), started on 127.0.0.1 on a free port with persistence off, stopped by its PID. A missing
// redis-server fails the tests that need it with a message saying how to install it: nothing is
// skipped silently. Also finds the Rust CLI (the interop partner and the one-node oracle).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const REPO = path.resolve(import.meta.dirname, '../../..');

/** The redis-server binary, or an Error that says how to get one. */
export function redisServer() {
  try {
    return execFileSync('/bin/sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('redis-server is not on PATH: these tests need the real server; install it with `bash scripts/setup-redis.sh` (CI runs it through scripts/setup.sh)');
  }
}

/** The loopguard CLI (newer of the debug and release builds), or an Error that says how to build it. */
export function loopguardCli() {
  const found = ['debug', 'release']
    .map((p) => path.join(REPO, 'target', p, 'loopguard'))
    .filter((f) => fs.existsSync(f))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  if (!found.length) throw new Error('target/{debug,release}/loopguard not found: build it with `cargo build -p loopguard-cli`');
  return found[0];
}

async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * One RESP round trip on a fresh connection (a PING for readiness, a raw command for tests). The
 * limit is a hang's: a loaded machine may take its time, a server that never answers fails.
 */
export function resp(port, args, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error('no answer'));
    }, timeoutMs);
    s.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
    s.on('connect', () => s.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    s.on('data', (d) => {
      data += d.toString('latin1');
      if (data.endsWith('\r\n') && !/^\$\d+\r\n$/.test(data)) {
        clearTimeout(t);
        s.end();
        resolve(data);
      }
    });
  });
}

/** A redis-server of this test (`args`: more server options): `url`, `stop()` (SIGSTOP), `cont()`, `kill()`, `restart()`, `close()`. */
export async function startRedis({ args = [] } = {}) {
  const bin = redisServer();
  const port = await freePort();
  let proc = null;
  const launch = async () => {
    proc = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => (stderr += d));
    // Generous: a busy machine starts it slowly; only a server that never comes up fails here.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        if (/^(\+PONG|-NOAUTH)/.test(await resp(port, ['PING']))) return;
      } catch {}
      if (proc.exitCode !== null || Date.now() > deadline) {
        proc.kill('SIGKILL'); // not left running when the test that wanted it fails
        throw new Error(`redis-server on port ${port} did not start: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await launch();
  const signal = (sig) => process.kill(proc.pid, sig);
  const exited = () => (proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((r) => proc.once('exit', r)));
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return proc.pid;
    },
    stop: () => signal('SIGSTOP'),
    cont: () => signal('SIGCONT'),
    async kill() {
      signal('SIGKILL');
      await exited();
    },
    restart: launch,
    async close() {
      if (proc.exitCode === null && proc.signalCode === null) {
        try {
          signal('SIGCONT');
          signal('SIGKILL');
        } catch {}
        await exited();
      }
    },
  };
}

/**
 * A redis-server that also speaks TLS on a second port and asks every client for a certificate,
 * with fresh test certificates (tests/replicas/make-certs.sh): `tlsUrl` (rediss://), `certs`
 * (ca, otherCa, client, clientKey: PEM file paths), and the rest of startRedis's handle.
 */
export async function startTlsRedis() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lg-tls-'));
  execFileSync('bash', [path.join(REPO, 'tests/replicas/make-certs.sh'), dir], { timeout: 60_000 });
  const file = (name) => path.join(dir, name);
  const certs = { ca: file('ca.pem'), otherCa: file('other-ca.pem'), client: file('client.pem'), clientKey: file('client.key') };
  const tlsPort = await freePort();
  // The plain port stays for the readiness check; the tests use the TLS port only.
  const redis = await startRedis({
    args: ['--tls-port', String(tlsPort), '--tls-cert-file', file('server.pem'), '--tls-key-file', file('server.key'), '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'yes'],
  });
  return Object.assign(redis, { tlsUrl: `rediss://127.0.0.1:${tlsPort}`, certs });
}
