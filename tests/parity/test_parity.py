"""Parity: every example trace (examples/traces/*/: tool, bot and group events) replayed by every
host, all loading the one built policy, target/policy/wasm32-wasip2/release/loopguard_policy.wasm:

- the Rust host CLI (target/debug/loopguard, else `cargo run -p loopguard-cli`) with --policy,
- the stock wasmtime CLI (`wasmtime run --invoke 'replay("…", "…")'`),
- Node (examples/node-gateway/replay.mjs, which imports the npm `loopguard` package built from
  that .wasm: packages/node/generated/),
- Python (examples/python-gateway/replay.py, which imports the installed `loopguard` wheel: the
  Rust host through PyO3, with that .wasm shipped inside).

Node's and Python's policies are checked to be that very file (its blake3 digest).

Their decisions must be byte-identical, and equal to the trace's expected.jsonl. A trace over
100 KiB is skipped for the wasmtime CLI only (its one --invoke argument must stay under the OS
limit of 128 KiB per argument), with a message.

Run: .venv/bin/python -m pytest tests/parity (scripts/test.sh does).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WASM = ROOT / "target/policy/wasm32-wasip2/release/loopguard_policy.wasm"
TRACES = ROOT / "examples/traces"
EXAMPLES = sorted(p.name for p in TRACES.iterdir() if (p / "trace.jsonl").is_file())
WASMTIME_CLI_LIMIT = 100 * 1024
BUILD = "cargo build -p loopguard-policy --release --target wasm32-wasip2 --target-dir target/policy"


def _run(cmd: list[str], stdin: bytes | None = None) -> bytes:
    """Runs a host; on failure the assertion shows command, cwd, status, stdout and stderr."""
    run = subprocess.run(cmd, cwd=ROOT, input=stdin, capture_output=True)
    assert run.returncode == 0, (
        f"command: {shlex.join(cmd)}\ncwd: {ROOT}\nstatus: {run.returncode}\n"
        f"stdout: {run.stdout.decode(errors='replace')[:2000]}\nstderr: {run.stderr.decode(errors='replace')[:2000]}"
    )
    return run.stdout


def _tool(name: str, hint: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} not found on PATH; {hint}")
    return found


@pytest.fixture(scope="session", autouse=True)
def _policy_built() -> None:
    if not WASM.is_file():
        pytest.fail(f"{WASM} missing; build it with `{BUILD}`")
    manifest = ROOT / "packages/node/generated/policy.json"
    if not manifest.is_file():
        pytest.fail("packages/node/generated/ missing; run `npm ci && npm run build` in packages/node")


def test_node_and_python_run_the_one_built_policy() -> None:
    import json

    digest = _run([str(ROOT / "target/debug/loopguard"), "inspect", str(WASM)]).decode()
    want = next(line.split(": ", 1)[1] for line in digest.splitlines() if line.startswith("digest: "))
    node_digest = json.loads((ROOT / "packages/node/generated/policy.json").read_text("utf-8"))["blake3"]
    py = ROOT / ".venv/bin/python"
    py_digest = _run([str(py), "-c", "import loopguard; print(loopguard.versions()['blake3'])"]).decode().strip()
    assert (node_digest, py_digest) == (want, want), "Node and Python must ship the policy cargo built"


# ---- the four hosts ----


def rust_host(config: Path, trace: Path) -> bytes:
    binary = ROOT / "target/debug/loopguard"
    prefix = [str(binary)] if binary.is_file() else [_tool("cargo", "install Rust"), "run", "-q", "-p", "loopguard-cli", "--"]
    return _run([*prefix, "replay", "--config", str(config), "--policy", str(WASM), str(trace)])


def wasmtime_cli(config: Path, trace: Path) -> bytes:
    call = f"replay({wave_string(config.read_text('utf-8'))}, {wave_string(trace.read_text('utf-8'))})"
    out = _run([_tool("wasmtime", "run `bash scripts/setup.sh`"), "run", "--invoke", call, str(WASM)]).decode("utf-8")
    text, rest = parse_wave_ok_string(out)
    assert rest.strip() == "", f"unexpected output after ok(…): {rest[:200]!r}"
    return text.encode("utf-8")


#: Node 24 from the project's setup (scripts/node24.sh); the system `node` may be an unsupported release.
NODE24 = ROOT / ".venv/node24/bin/node"


def node(config: Path, trace: Path) -> bytes:
    if not NODE24.is_file():
        pytest.fail(f"{NODE24} missing; install Node 24 with `bash scripts/node24.sh`")
    node_bin = str(NODE24)
    return _run([node_bin, str(ROOT / "examples/node-gateway/replay.mjs"), "--config", str(config), str(trace)])


def python(config: Path, trace: Path) -> bytes:
    py = ROOT / ".venv/bin/python"
    return _run([str(py if py.is_file() else sys.executable), str(ROOT / "examples/python-gateway/replay.py"), "--config", str(config), str(trace)])


HOSTS = {"rust-host": rust_host, "wasmtime-cli": wasmtime_cli, "node": node, "python": python}


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_host_gives_identical_decisions(name: str) -> None:
    config, trace = TRACES / name / "config.json5", TRACES / name / "trace.jsonl"
    expected = (TRACES / name / "expected.jsonl").read_bytes()
    outputs: dict[str, bytes] = {}
    for host, replay in HOSTS.items():
        if host == "wasmtime-cli" and trace.stat().st_size > WASMTIME_CLI_LIMIT:
            print(f"note: {name}: wasmtime CLI skipped, trace is {trace.stat().st_size} bytes (> 100 KiB)")
            continue
        outputs[host] = replay(config, trace)
    reference = outputs["rust-host"]
    differ = {h: first_difference(reference, out) for h, out in outputs.items() if out != reference}
    assert not differ, f"{name}: hosts disagree with the Rust host: {differ}"
    assert reference == expected, f"{name}: decisions differ from expected.jsonl: {first_difference(expected, reference)}"


def test_hosts_agree_on_a_config_error() -> None:
    """Not only decisions: a bad config fails on every host (exit 2 / err), naming the path."""
    bad = ROOT / "target/parity-bad-config.json5"
    bad.parent.mkdir(exist_ok=True)
    bad.write_text('{tools: {loopDetection: {historySize: "x"}}}', "utf-8")
    trace = TRACES / EXAMPLES[0] / "trace.jsonl"
    for cmd in (
        [str(ROOT / "examples/node-gateway/replay.mjs")],
        [str(ROOT / "examples/python-gateway/replay.py")],
    ):
        interp = "node" if cmd[0].endswith(".mjs") else str(ROOT / ".venv/bin/python")
        run = subprocess.run([interp, *cmd, "--config", str(bad), str(trace)], cwd=ROOT, capture_output=True)
        assert run.returncode == 2 and b"tools.loopDetection.historySize" in run.stderr, run.stderr


# ---- helpers ----


def first_difference(a: bytes, b: bytes) -> str:
    al, bl = a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines()
    for i, (x, y) in enumerate(zip(al, bl), start=1):
        if x != y:
            return f"output line {i}: expected {x!r}, got {y!r}"
    return f"{len(al)} lines vs {len(bl)} lines (or a trailing-newline difference)"


def wave_string(text: str) -> str:
    """A WAVE string literal (the WebAssembly Value Encoding the wasmtime CLI speaks)."""
    out = ['"']
    for c in text:
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0:
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def parse_wave_ok_string(out: str) -> tuple[str, str]:
    """Parses `ok("…")` as printed by `wasmtime run --invoke`; returns the text and the rest."""
    s = out.strip()
    assert s.startswith('ok("'), f"replay did not return ok(\"…\"): {s[:300]}"
    body, i, text = s[3:], 1, []
    while i < len(body):
        c = body[i]
        if c == '"':
            assert body[i + 1 : i + 2] == ")", f"bad WAVE result near {body[i:i + 20]!r}"
            return "".join(text), body[i + 2 :]
        if c == "\\":
            e = body[i + 1]
            if e == "u":
                close = body.index("}", i)
                text.append(chr(int(body[i + 3 : close], 16)))
                i = close + 1
                continue
            text.append({"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\"}[e])
            i += 2
            continue
        text.append(c)
        i += 1
    raise AssertionError("unterminated WAVE string")


if __name__ == "__main__":  # `python tests/parity/test_parity.py` works without pytest's CLI too
    sys.exit(pytest.main([__file__, "-q", *sys.argv[1:]]))
