"""What the Python package gets from the host crate besides decisions: a pinned policy, hot swap
with state, time limits and recovery from a broken policy with the configured failure mode, and
the health counters; each failure a LoopGuardError naming the file.

The misbehaving policy is the repository's hostile test policy (tests/hostile-policy, built by
scripts/build-hostile-policy.sh, which scripts/test.sh runs before these tests): a tool call of a
session ending in `__trap__` traps and one ending in `__loop__` never returns."""

from pathlib import Path

import pytest

from conftest import ROOT
from loopguard import DEFAULT_POLICY, LoopGuard, LoopGuardError, ToolCall, versions

HOSTILE = ROOT / "target/hostile-gateway/wasm32-wasip2/release/hostile_policy.wasm"
TIGHT = {"tools": {"loopDetection": {"enabled": True, "warningThreshold": 3, "criticalThreshold": 5}}}
POLL = ToolCall("s1", "process", {"action": "poll"})
SAME = {"content": [{"type": "text", "text": "still running"}]}


def hostile() -> Path:
    assert HOSTILE.is_file(), f"{HOSTILE} not built: run scripts/build-hostile-policy.sh"
    return HOSTILE


def _poll(guard: LoopGuard) -> str:
    v = guard.before_tool_call(POLL)
    guard.after_tool_outcome(POLL, result=SAME)
    return f"{v.action}{v.count or ''}"


def test_a_pinned_policy_loads_and_a_wrong_digest_is_refused_naming_the_file() -> None:
    digest = versions()["blake3"]
    with LoopGuard(TIGHT, policy=DEFAULT_POLICY, expect_digest=digest) as g:
        assert g.policy.blake3 == digest
    with pytest.raises(LoopGuardError) as info:
        LoopGuard(TIGHT, policy=DEFAULT_POLICY, expect_digest="0" * 64)
    assert (info.value.kind, info.value.path) == ("policy", str(DEFAULT_POLICY))
    assert "0" * 64 in info.value.reason and digest in info.value.reason


def test_a_memory_cap_the_policy_cannot_start_in_is_refused_naming_the_cap() -> None:
    with pytest.raises(LoopGuardError) as info:
        LoopGuard(TIGHT, memory_mib=1)
    assert info.value.kind == "policy"
    assert "memory cap of 1048576 bytes" in info.value.reason, info.value.reason
    # A cap too large to count in bytes is no cap at all, not a cap of zero.
    with LoopGuard(TIGHT, memory_mib=2**62) as g:
        assert g.before_tool_call(ToolCall("s", "read", {"path": "/a"})).action == "allow"


@pytest.mark.parametrize(
    "limit, value", [("deadline_ms", 0), ("deadline_ms", -5), ("memory_mib", 0), ("memory_mib", "64"), ("memory_mib", True)]
)
def test_a_limit_that_is_not_a_whole_number_from_1_is_refused_naming_it(limit: str, value: object) -> None:
    with pytest.raises(LoopGuardError) as info:
        LoopGuard(TIGHT, **{limit: value})  # type: ignore[arg-type]
    assert (info.value.kind, info.value.path) == ("config", limit)
    assert "1 or more" in info.value.reason and repr(value) in info.value.reason


def test_a_file_that_is_not_a_policy_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "policy.wasm"
    bad.write_bytes(b"\0asm not really")
    with pytest.raises(LoopGuardError) as info:
        LoopGuard(TIGHT, policy=bad)
    assert (info.value.kind, info.value.path) == ("policy", str(bad))


def test_a_hot_swap_keeps_every_count() -> None:
    with LoopGuard(TIGHT) as g:
        seen = [_poll(g) for _ in range(3)]
        report = g.swap(DEFAULT_POLICY)
        seen += [_poll(g) for _ in range(3)]
        assert seen == ["allow", "allow", "allow", "warn3", "warn4", "block5"]
        assert report["from"]["blake3"] == report["to"]["blake3"] == g.policy.blake3
        assert report["snapshot_bytes"] > 0
        assert g.health()["swaps"] == 1


def test_a_failed_swap_keeps_the_active_policy() -> None:
    with LoopGuard(TIGHT) as g:
        before = g.policy
        with pytest.raises(LoopGuardError) as info:
            g.swap(DEFAULT_POLICY, expect_digest="0" * 64)
        assert info.value.path == str(DEFAULT_POLICY)
        assert g.policy == before
        assert g.health()["swaps"] == 0  # refused while loading, before any swap began
        assert _poll(g) == "allow"


@pytest.mark.parametrize("fail_closed, action", [(False, "allow"), (True, "block")])
def test_a_trapping_policy_answers_with_the_failure_mode_and_recovers(fail_closed: bool, action: str) -> None:
    with LoopGuard(TIGHT, policy=hostile(), fail_closed=fail_closed) as g:
        v = g.before_tool_call(ToolCall("agent:main:__trap__", "exec", {"command": "x"}))
        assert v.action == action and v.message, v
        assert g.health()["traps"] == 1 and g.health()["recoveries"] == 1
        assert _poll(g) == "allow"


def test_a_policy_that_never_answers_is_stopped_at_its_deadline() -> None:
    with LoopGuard(TIGHT, policy=hostile(), deadline_ms=200) as g:
        v = g.before_tool_call(ToolCall("agent:main:__loop__", "exec", {"command": "x"}))
        assert v.action == "allow" and v.message, v
        assert g.health()["timeouts"] == 1
        assert _poll(g) == "allow"
