"""The three agent CLIs, each run as a user runs it: its own HOME and temp folders, loopguard's
plugin installed with the CLI's own plugin commands, a scripted fake model on 127.0.0.1
(fake-model.mjs). Every test gets a fresh folder; on failure the folder is kept and named."""

import json
import re
import os
import subprocess
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BIN = Path(os.environ.get("LOOPGUARD_BIN", ROOT / "target" / "release" / "loopguard"))
CLIS = HERE / "node_modules" / ".bin"
NODE_BIN = os.environ.get("NODE22_BIN", str(ROOT / ".venv" / "node22" / "bin"))
ENV_BASE = {"PATH": f"{NODE_BIN}:/usr/local/bin:/usr/bin:/bin", "TERM": "dumb", "LANG": "C.UTF-8"}


def pack_plugins(out: Path) -> Path:
    """The plugins as scripts/dist.sh packs them, the binary inside."""
    if not (out / "claude-code-plugin").exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "pack-agent-plugins.sh"), str(out), str(BIN)], check=True)
    return out


def run(cmd, env, cwd, timeout=300, stdin=subprocess.DEVNULL):
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=stdin)
    p.elapsed = time.monotonic() - start
    return p


class Fake:
    """fake-model.mjs for one run; `requests()` are the main conversation's requests."""

    def __init__(self, api: str, wd: Path, env: dict):
        self.log = wd / f"fake-{time.monotonic_ns()}.jsonl"
        port = wd / "port"
        port.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [f"{NODE_BIN}/node", str(HERE / "fake-model.mjs"), api, str(port), str(self.log)],
            env={**os.environ, **{k: str(v) for k, v in env.items()}},
        )
        # Until it says its port: a busy machine starts node slowly; only one that never listens
        # fails (and is not left running).
        end = time.monotonic() + 60
        while not (port.exists() and port.read_text()):
            if time.monotonic() > end or self.proc.poll() is not None:
                self.stop()
                raise AssertionError(f"fake-model.mjs ({api}) gave no port within 60 s")
            time.sleep(0.05)
        self.port = int(port.read_text())

    def stop(self):
        self.proc.kill()
        self.proc.wait()

    def requests(self):
        if not self.log.exists():
            return []
        lines = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in lines if r.get("kind") == "main"]


class Cli:
    """One CLI in one work folder."""

    api = ""

    def __init__(self, wd: Path, plugins: Path):
        self.wd = wd
        self.home = wd / "home"
        self.proj = wd / "proj"
        self.tmp = wd / "tmp"
        for d in (self.home, self.proj, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        self.plugins = plugins
        self.port = 9
        self.last = None

    def env(self, extra=None):
        env = {**ENV_BASE, "HOME": str(self.home), "TMPDIR": str(self.tmp)}
        env.update(self.own_env())
        env.update({k: str(v) for k, v in (extra or {}).items()})
        return env

    def own_env(self):
        return {}

    def prepare(self):
        """Writes what depends on the fake model's port."""

    def cli(self, *args, timeout=120):
        """Runs a CLI management command (plugin install, …); it must succeed."""
        p = run([str(CLIS / self.name), *args], self.env(), self.proj, timeout=timeout)
        assert p.returncode == 0, f"{self.name} {' '.join(args)}: rc={p.returncode}\n{p.stdout}\n{p.stderr}"
        return p

    def session(self, fake_env=None, env=None, args=(), prompt="check the build"):
        """Runs the CLI once against a fresh fake model: (process, the model's requests)."""
        fake = Fake(self.api, self.wd, fake_env or {})
        self.port = fake.port
        try:
            self.prepare()
            p = run(self.command(prompt, list(args)), self.env(env), self.proj)
        finally:
            fake.stop()
        self.last = p
        return p, fake.requests()

    def describe(self):
        p = self.last
        if p is None:
            return f"work folder {self.wd}"
        return f"work folder {self.wd}\nrc={p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}"


class Claude(Cli):
    api = "anthropic"
    name = "claude"

    def own_env(self):
        return {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}",
            "CLAUDE_CODE_TMPDIR": str(self.tmp),
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        }

    def install(self):
        """`claude plugin marketplace add` + `claude plugin install`, as the README says."""
        self.cli("plugin", "marketplace", "add", str(self.plugins / "claude-code-plugin"))
        self.cli("plugin", "install", "loopguard@loopguard")
        return self

    def command(self, prompt, args):
        return [str(CLIS / "claude"), "-p", prompt, "--allowedTools", "Bash", *args]


class Codex(Cli):
    api = "openai"
    name = "codex"

    def own_env(self):
        return {"CODEX_HOME": str(self.home / ".codex"), "FAKE_API_KEY": "dummy"}

    def config(self):
        return self.home / ".codex" / "config.toml"

    def prepare(self):
        text = self.config().read_text()
        self.config().write_text(re.sub(r'base_url = "http://127\.0\.0\.1:\d+/v1"', f'base_url = "http://127.0.0.1:{self.port}/v1"', text))

    def install(self):
        """`codex plugin marketplace add` + `codex plugin add`, then the trust step (what the TUI's
        /hooks does: app-server `hooks/list`, then `config/batchWrite` of `hooks.state`)."""
        self.config().parent.mkdir(parents=True, exist_ok=True)
        self.config().write_text(CODEX_CONFIG.replace("PORT", str(self.port)))
        self.cli("plugin", "marketplace", "add", str(self.plugins / "codex-plugin"))
        self.cli("plugin", "add", "loopguard@loopguard")
        listed = self.app_server({"method": "hooks/list", "params": {"cwds": [str(self.proj)]}})
        hooks = [h for d in listed["result"]["data"] for h in d["hooks"] if h["key"].startswith("loopguard@loopguard:")]
        assert hooks, f"no loopguard hooks listed: {listed}"
        value = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks if h["trustStatus"] != "trusted"}
        self.app_server({"method": "config/batchWrite", "params": {
            "edits": [{"keyPath": "hooks.state", "value": value, "mergeStrategy": "upsert"}],
            "filePath": None, "expectedVersion": None, "reloadUserConfig": True}})
        listed = self.app_server({"method": "hooks/list", "params": {"cwds": [str(self.proj)]}})
        status = {h["key"]: h["trustStatus"] for d in listed["result"]["data"] for h in d["hooks"] if h["key"].startswith("loopguard@")}
        assert set(status.values()) == {"trusted"}, status
        return self

    def app_server(self, request):
        lines = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "loopguard-tests", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, **request},
        ]
        proc = subprocess.Popen([str(CLIS / "codex"), "app-server"], env=self.env(), cwd=self.proj, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.flush()
        # An app-server that never answers is killed (its stdout then ends): a hang's limit.
        killer = threading.Timer(120, proc.kill)
        killer.start()
        try:
            for line in proc.stdout:
                msg = json.loads(line)
                if msg.get("id") == 2:
                    assert "error" not in msg, msg
                    return msg
        finally:
            killer.cancel()
            proc.kill()
            proc.wait()
        raise AssertionError(f"codex app-server gave no answer to {request}")

    def command(self, prompt, args):
        return [str(CLIS / "codex"), "exec", "--skip-git-repo-check", "--json", *args, prompt]


CODEX_CONFIG = """model = "gpt-5.4"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:PORT/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false
"""


class Gemini(Cli):
    api = "gemini"
    name = "gemini"

    def own_env(self):
        return {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{self.port}",
                "GEMINI_CLI_NO_RELAUNCH": "true"}

    def install(self):
        """`gemini extensions install DIR --consent`; the CLI's own loop detection is switched off,
        so that the decisions are loopguard's."""
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "model": {"disableLoopDetection": True},
        }
        (self.home / ".gemini").mkdir(parents=True, exist_ok=True)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        self.cli("extensions", "install", str(self.plugins / "gemini-extension"), "--consent")
        return self

    def command(self, prompt, args):
        return [str(CLIS / "gemini"), "-p", prompt, "--approval-mode", "yolo", *args]

class Copilot(Cli):
    """GitHub Copilot CLI 1.0.102 with BYOK against the fake model (COPILOT_OFFLINE: no GitHub
    sign-in, no telemetry); loopguard's hooks installed by the packed `copilot-hooks/install.sh`
    into ~/.copilot/settings.json."""

    api = "chat"
    name = "copilot"
    # The native runtime the npm package unpacks on first start (~235 MB): one copy for every
    # test, not one per HOME.
    CACHE = HERE / "node_modules" / ".copilot-cache"

    def own_env(self):
        return {"COPILOT_OFFLINE": "1", "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{self.port}/v1",
                "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_API_KEY": "dummy", "COPILOT_MODEL": "fake",
                "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_CACHE_HOME": str(self.CACHE)}

    def install(self):
        p = run(["bash", str(self.plugins / "copilot-hooks" / "install.sh")], self.env(), self.proj)
        assert p.returncode == 0, f"install.sh: {p.stdout}\n{p.stderr}"
        subprocess.run(["git", "init", "-q"], cwd=self.proj, check=True)
        return self

    def command(self, prompt, args):
        return [str(CLIS / "copilot"), "-p", prompt, "--allow-all-tools", *args]


class Qwen(Cli):
    """Qwen Code 0.24.4 with loopguard's Claude Code plugin, installed with `qwen extensions
    install` (Qwen Code runs a Claude Code plugin's hooks, in Claude Code's protocol)."""

    api = "chat"
    name = "qwen"

    def own_env(self):
        return {"OPENAI_BASE_URL": f"http://127.0.0.1:{self.port}/v1", "OPENAI_API_KEY": "dummy",
                "OPENAI_MODEL": "fake", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}

    def install(self):
        self.cli("extensions", "install", str(self.plugins / "claude-code-plugin" / "plugin"), "--consent")
        return self

    def command(self, prompt, args):
        return [str(CLIS / "qwen"), "-p", prompt, "--auth-type", "openai", "--approval-mode", "yolo", *args]

    def last_session_id(self):
        """The id of the newest chat Qwen Code recorded (~/.qwen/projects/<folder>/chats/<id>.jsonl),
        what `--resume` takes."""
        chats = sorted((self.home / ".qwen" / "projects").glob("*/chats/*.jsonl"), key=lambda f: f.stat().st_mtime)
        assert chats, f"Qwen Code recorded no chat\n{self.describe()}"
        return chats[-1].stem
