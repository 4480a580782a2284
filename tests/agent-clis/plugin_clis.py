"""The CLIs that load loopguard into their own process, on the `loopguard` npm package: OpenCode
(`opencode-loopguard`) and Cline (`cline-loopguard`), each run as a user runs it (clis.py has
the shared parts and the CLIs whose hooks are processes)."""

from pathlib import Path
import json
import os
import shutil
import subprocess
import time

from clis import CLIS, ENV_BASE, HERE, NODE_BIN, ROOT, Cli, run


PLUGINS_SRC = ROOT / "packages"
NODE_PACKAGE = ROOT / "packages" / "node"


def node_package():
    """packages/node, built (its policy in generated/) and with its dependencies: what the
    in-process plugins import as `loopguard`."""
    assert (NODE_PACKAGE / "generated" / "policy.json").exists() and (NODE_PACKAGE / "node_modules").exists(), \
        "packages/node is not built: (cd packages/node && npm ci && npm run build)"
    return NODE_PACKAGE


def node_replay(config: Path, trace: Path) -> str:
    """The `loopguard` npm package's `replay` (byte for byte what `loopguard replay` prints) of
    packages/node: the policy the in-process plugins run."""
    script = ("const [c, t] = process.argv.slice(1); const fs = await import('node:fs');"
              f"const {{ replay }} = await import({json.dumps(str(NODE_PACKAGE / 'index.js'))});"
              "process.stdout.write(replay(fs.readFileSync(c, 'utf8'), fs.readFileSync(t, 'utf8')));")
    return subprocess.run([f"{NODE_BIN}/node", "--input-type=module", "-e", script, str(config), str(trace)],
                          capture_output=True, text=True, check=True).stdout


def npm_install_seed(folder: Path, name: str, source: Path):
    """`folder/node_modules` as `npm install NAME` leaves it, without the registry: the plugin's
    files copied in, `loopguard` linked to packages/node (its own dependencies resolve from
    there), and package.json/package-lock.json listing NAME, so that a CLI that checks the install
    (OpenCode's Npm.install) finds nothing to do."""
    nm = folder / "node_modules"
    nm.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, nm / name, ignore=shutil.ignore_patterns("node_modules"), dirs_exist_ok=True)
    if not (nm / "loopguard").exists():
        (nm / "loopguard").symlink_to(node_package())
    deps = {name: "*"}
    (folder / "package.json").write_text(json.dumps({"dependencies": deps}))
    (folder / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}))


class OpenCode(Cli):
    """OpenCode 1.18.33 with loopguard's plugin as its users install it: `opencode.json`
    `{"plugin": ["opencode-loopguard"]}`. OpenCode installs an npm plugin into
    ~/.cache/opencode/packages/<spec>@latest; the test seeds that folder as the install leaves it
    (the tests are offline). It also runs `npm install @opencode-ai/plugin` in every config folder
    at every start unless that folder's lockfile lists it (offline: a ~70 s retry): seeded too."""

    api = "chat"
    name = "opencode"

    def own_env(self):
        h = self.home
        return {
            "XDG_CONFIG_HOME": str(h / ".config"), "XDG_DATA_HOME": str(h / ".local" / "share"),
            "XDG_CACHE_HOME": str(h / ".cache"), "XDG_STATE_HOME": str(h / ".local" / "state"),
            "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            "FAKE_BASE_URL": f"http://127.0.0.1:{self.port}/v1",
        }

    def install(self, plugin_options=None):
        config_dir = self.home / ".config" / "opencode"
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "package.json").write_text(json.dumps({"dependencies": {"@opencode-ai/plugin": "1.18.33"}}))
        (config_dir / "package-lock.json").write_text(json.dumps(
            {"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}}}))
        (config_dir / "node_modules").symlink_to(HERE / "node_modules")
        npm_install_seed(self.home / ".cache" / "opencode" / "packages" / "opencode-loopguard@latest",
                         "opencode-loopguard", PLUGINS_SRC / "opencode-plugin")
        entry = "opencode-loopguard" if plugin_options is None else ["opencode-loopguard", plugin_options]
        (self.proj / "opencode.json").write_text(json.dumps({**OPENCODE_CONFIG, "plugin": [entry]}))
        return self

    def command(self, prompt, args):
        return [str(CLIS / "opencode"), "run", "--print-logs", "--log-level", "INFO", *args, prompt]


OPENCODE_CONFIG = {
    "$schema": "https://opencode.ai/config.json",
    "provider": {"fake": {
        "npm": "@ai-sdk/openai-compatible", "name": "Fake",
        "options": {"baseURL": "{env:FAKE_BASE_URL}", "apiKey": "sk-fake"},
        "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
    }},
    "model": "fake/fake-model", "small_model": "fake/fake-model",
    "autoupdate": False, "share": "disabled",
    "permission": {"bash": "allow", "edit": "allow", "read": "allow"},
}


def install_cline_plugin(template: Path) -> Path:
    """`cline plugin install <folder>` of packages/cline-plugin, as a user runs it, into the HOME
    `template` (copied into each test's HOME by Cline.install). Offline: a copy of the package
    whose `loopguard` dependency is packages/node (`file:`), so npm needs no registry."""
    pkg = template.parent / "cline-loopguard"
    shutil.copytree(PLUGINS_SRC / "cline-plugin", pkg, ignore=shutil.ignore_patterns("node_modules"), dirs_exist_ok=True)
    manifest = json.loads((pkg / "package.json").read_text())
    manifest["dependencies"]["loopguard"] = f"file:{node_package()}"
    (pkg / "package.json").write_text(json.dumps(manifest))
    env = {**ENV_BASE, "HOME": str(template)}
    p = run([str(CLIS / "cline"), "plugin", "install", str(pkg), "--json"], env, template, timeout=180)
    assert p.returncode == 0, f"cline plugin install: {p.stdout}\n{p.stderr}"
    return template


class Cline(Cli):
    """Cline's CLI 3.0.65 with loopguard's plugin (`cline plugin install`, done once per test run
    into a template HOME, then copied). The provider (`cline auth -p openai -b URL`) is written as
    `cline auth` writes it, with this run's port. Each run leaves a hub daemon
    (`cline --cline-hub-daemon`) behind: stopped by its PID (the process with this HOME)."""

    api = "chat"
    name = "cline"

    def install(self, template: Path):
        shutil.copytree(template / ".cline", self.home / ".cline", dirs_exist_ok=True)
        return self

    def prepare(self):
        settings = self.home / ".cline" / "data" / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "providers.json").write_text(json.dumps({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": {
            "openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": "sk-fake", "model": "fake-model",
                                               "baseUrl": f"http://127.0.0.1:{self.port}/v1"},
                                  "updatedAt": "2026-12-07T00:00:00.000Z", "tokenSource": "manual"}}}, indent=2))

    def session(self, *a, **kw):
        try:
            return super().session(*a, **kw)
        finally:
            self.stop_hub()

    def stop_hub(self):
        """Stops the hub daemons this HOME's runs started: the processes whose command line is
        `cline --cline-hub-daemon` and whose HOME is this test's (a fresh folder), by PID. The CLI
        spawns the hub before it exits; looked for twice, a second apart."""
        for attempt in range(2):
            for proc in Path("/proc").iterdir():
                if not proc.name.isdigit():
                    continue
                try:
                    if b"--cline-hub-daemon" not in (proc / "cmdline").read_bytes():
                        continue
                    if f"HOME={self.home}".encode() not in (proc / "environ").read_bytes().split(b"\0"):
                        continue
                    os.kill(int(proc.name), 15)
                except OSError:
                    pass
            time.sleep(1)

    def command(self, prompt, args):
        return [str(CLIS / "cline"), "--json", *args, prompt]
