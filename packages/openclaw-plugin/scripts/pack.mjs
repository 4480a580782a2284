// Builds the plugin's installable tarball, openclaw-loopguard-<version>.tgz, with `loopguard`
// inside it: `loopguard` is not on the public registry, so the tarball bundles it
// (bundleDependencies) and the gateway's `plugins install npm-pack:<tgz>` needs no registry for
// it (the registry still serves the public packages `loopguard` depends on, and OpenClaw's own
// resolution of the `openclaw` peer).
//
//   node scripts/pack.mjs [--out DIR]     (default DIR: this package's folder)
//
// Steps: `npm pack` packages/node (its generated/ must be built: `node scripts/build.mjs` there)
// into vendor/, install that tarball into node_modules/ without touching package.json, write
// openclaw.plugin.json, `npm pack` this package. Prints the tarball's path on stdout.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkgDir = path.resolve(here, '..');
const nodePkg = path.resolve(pkgDir, '../node');
const args = process.argv.slice(2);
const outIdx = args.indexOf('--out');
const outDir = path.resolve(outIdx >= 0 ? args[outIdx + 1] : pkgDir);
const npmCli = path.join(path.dirname(process.execPath), 'npm');
const npm = (cwd, ...a) =>
  execFileSync(process.execPath, [fs.existsSync(npmCli) ? npmCli : 'npm', ...a], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });

if (!fs.existsSync(path.join(nodePkg, 'generated', 'loopguard_policy.js'))) {
  console.error(`${nodePkg}/generated is missing: run \`npm ci && node scripts/build.mjs\` in packages/node first`);
  process.exit(1);
}
const vendor = path.join(pkgDir, 'vendor');
fs.mkdirSync(vendor, { recursive: true });
const [lg] = JSON.parse(npm(nodePkg, 'pack', '--json', '--ignore-scripts', '--pack-destination', vendor));
const lgTgz = path.join(vendor, lg.filename);
console.error(`loopguard: ${lgTgz} (${lg.size} bytes)`);

// node_modules/loopguard from that tarball, and its public dependencies from the registry (this
// folder then works as a `plugins.load.paths` entry too)
fs.rmSync(path.join(pkgDir, 'node_modules', 'loopguard'), { recursive: true, force: true });
npm(pkgDir, 'install', '--no-save', '--ignore-scripts', '--legacy-peer-deps', '--no-package-lock', lgTgz);
execFileSync(process.execPath, [path.join(here, 'build.mjs')], { stdio: 'inherit' });
checkDependencies();

// The tarball is packed from a staging copy whose node_modules holds loopguard alone: npm bundles
// a bundled package's whole dependency tree when it is installed, while the public ones belong to
// the install's own npm run.
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'openclaw-loopguard-pack-'));
try {
  for (const f of ['package.json', 'openclaw.plugin.json', 'README.md', 'src']) {
    if (fs.existsSync(path.join(pkgDir, f))) fs.cpSync(path.join(pkgDir, f), path.join(stage, f), { recursive: true });
  }
  const lgDir = path.join(stage, 'node_modules', 'loopguard');
  fs.mkdirSync(lgDir, { recursive: true });
  execFileSync('tar', ['-xzf', lgTgz, '-C', lgDir, '--strip-components=1']);
  fs.mkdirSync(outDir, { recursive: true });
  const [plugin] = JSON.parse(npm(stage, 'pack', '--json', '--ignore-scripts', '--pack-destination', outDir));
  const tgz = path.join(outDir, plugin.filename);
  const bundled = plugin.bundled ?? [];
  console.error(`openclaw-loopguard: ${tgz} (${plugin.size} bytes packed, ${plugin.unpackedSize} unpacked, ${plugin.entryCount} files; bundled: ${bundled.join(', ') || 'none'})`);
  if (!plugin.files.some((f) => f.path === 'node_modules/loopguard/generated/loopguard_policy.core.wasm') || bundled.join() !== 'loopguard') {
    console.error('the tarball does not carry loopguard alone in node_modules: refusing it');
    process.exit(1);
  }
  process.stdout.write(`${tgz}\n`);
  } finally {
  fs.rmSync(stage, { recursive: true, force: true });
}

/** loopguard's own dependencies must be this package's too (npm installs them next to the bundle). */
function checkDependencies() {
  const mine = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).dependencies ?? {};
  const theirs = JSON.parse(fs.readFileSync(path.join(nodePkg, 'package.json'), 'utf8')).dependencies ?? {};
  const wrong = Object.entries(theirs).filter(([n, v]) => mine[n] !== v);
  if (wrong.length) {
    console.error(`package.json must list loopguard's dependencies as they are there: ${wrong.map(([n, v]) => `"${n}": "${v}"`).join(', ')}`);
    process.exit(1);
  }
}
