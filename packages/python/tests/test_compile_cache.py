"""The compiled policy is cached between processes under the CLI's rule (LOOPGUARD_CACHE_DIR,
empty = off), so a gateway's later processes start without compiling the component again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A fresh interpreter: the cache is chosen when the native module is imported.
FIRST_DECISION = """
from loopguard import LoopGuard, ToolCall, _native
g = LoopGuard({"tools": {"loopDetection": {"enabled": True}}})
print(_native.COMPILE_CACHE)
print(g.before_tool_call(ToolCall("s", "read", {"path": "/a"})).action)
"""


def first_decision(cache: str) -> list[str]:
    env = {**os.environ, "LOOPGUARD_CACHE_DIR": cache}
    out = subprocess.run([sys.executable, "-c", FIRST_DECISION], env=env, check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def compiled(d: Path) -> dict[Path, int]:
    """The compiled policies under `d` and their mtimes."""
    return {p: p.stat().st_mtime_ns for p in d.rglob("*.cwasm")}


def test_the_compiled_policy_is_kept_in_the_cache_directory(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert first_decision(str(cache)) == [str(cache), "allow"]
    kept = compiled(cache)
    assert kept, "the compiled policy was not written to the cache"
    # a second process takes it from there (nothing compiled and written again) and decides the same
    assert first_decision(str(cache)) == [str(cache), "allow"]
    assert compiled(cache) == kept


def test_an_empty_cache_setting_turns_the_cache_off(tmp_path: Path) -> None:
    assert first_decision("") == ["None", "allow"]


def test_an_unusable_cache_directory_only_costs_time(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    lines = first_decision(str(blocked / "cache"))
    assert lines[1] == "allow"
