"""The scripted model (tests/frameworks/model.py), started once per test session, and a
`scenario` helper per test: register a script, get the base URLs, read what the model received."""
import json
import os
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "model.py"


class Scenario:
    def __init__(self, port: int, name: str):
        self.name = name
        self.root = f"http://127.0.0.1:{port}"
        self.openai_base = f"{self.root}/{name}/v1"  # Chat Completions and Responses
        self.anthropic_base = f"{self.root}/{name}"  # the SDKs add /v1/messages

    def script(self, turns, final="done"):
        """turns: a list of steps, each a list of {"tool": NAME, "args": {...}} (parallel calls)."""
        body = json.dumps({"turns": turns, "final": final}).encode()
        request = urllib.request.Request(f"{self.root}/script/{self.name}", data=body, method="PUT",
                                         headers={"content-type": "application/json"})
        urllib.request.urlopen(request, timeout=10).read()
        return self

    def requests(self, kind="main"):
        """What the model received, oldest first (`kind=None`: side requests too)."""
        with urllib.request.urlopen(f"{self.root}/log/{self.name}", timeout=10) as r:
            log = json.loads(r.read())
        return [e for e in log if kind is None or e["kind"] == kind]

    def results(self):
        """Every tool result the model read, in order: (turn, text, is_error) per call."""
        return [(e["turn"], r["text"], r["is_error"]) for e in self.requests() for r in e["results"]]


@pytest.fixture(scope="session")
def model_port(tmp_path_factory):
    portfile = tmp_path_factory.mktemp("model") / "port"
    proc = subprocess.Popen([sys.executable, str(MODEL), "--portfile", str(portfile)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not portfile.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the scripted model did not start: {proc.stderr.read().decode()}")
            time.sleep(0.02)
        yield int(portfile.read_text())
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def scenario(model_port):
    return Scenario(model_port, f"s{uuid.uuid4().hex[:12]}")


@pytest.fixture(autouse=True)
def offline_env(monkeypatch):
    """No telemetry, no network but loopback: a framework that phones home fails here, not later."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(key, "test-key")
    for key, value in {"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true", "DO_NOT_TRACK": "1",
                       "NO_PROXY": "127.0.0.1,localhost"}.items():
        monkeypatch.setenv(key, value)
    if os.environ.get("LOOPGUARD_TEST_HOME"):
        monkeypatch.setenv("HOME", os.environ["LOOPGUARD_TEST_HOME"])
