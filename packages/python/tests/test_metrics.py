"""Metrics through OpenTelemetry (docs/METRICS.md, issue 62): with the SDK's in-memory reader, a
scripted loop shows the table's instruments with its attributes, and the decisions counted are the
ones the caller saw; without OpenTelemetry nothing is imported and nothing recorded."""

import re
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT
from loopguard import BotMessage, LoopGuard, ToolCall

otel_sdk = pytest.importorskip("opentelemetry.sdk.metrics", reason="opentelemetry-sdk (requirements-dev.txt)")
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402

TIGHT = {"tools": {"loopDetection": {"enabled": True, "warningThreshold": 3, "criticalThreshold": 5}}}
SAME = {"content": [{"type": "text", "text": "no results"}]}


def collected(reader):
    """{instrument name: [(attributes, value or histogram count)]} of one collection."""
    out = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                out[m.name] = [(dict(p.attributes), getattr(p, "value", None) if hasattr(p, "value") else p.count)
                               for p in m.data.data_points]
    return out


def table_names():
    """The OpenTelemetry column of docs/METRICS.md's table."""
    text = (ROOT / "docs" / "METRICS.md").read_text()
    return {m.group(1) for m in re.finditer(r"^\| `[a-z_]+` \| `(loopguard\.[a-z_.]+)`", text, re.M)}


@pytest.fixture
def every_decision_timed(monkeypatch):
    """Time every decision (the package times one in DURATION_SAMPLE, for its cost)."""
    from loopguard import _metrics

    monkeypatch.setattr(_metrics, "DURATION_SAMPLE", 1)


def test_a_scripted_loop_shows_the_tables_instruments_and_the_decisions_the_caller_saw(every_decision_timed):
    reader = InMemoryMetricReader()
    guard = LoopGuard(TIGHT, meter_provider=MeterProvider(metric_readers=[reader]), metrics_host="python")
    seen = {}
    for i in range(12):
        call = ToolCall("s1", "web_search", {"q": "nightly build red"})
        v = guard.before_tool_call(call)
        seen[("tool_call", v.action, v.detector or "none")] = seen.get(("tool_call", v.action, v.detector or "none"), 0) + 1
        if v.action != "block":
            o = guard.after_tool_outcome(call, result=SAME)
            seen[("tool_result", o.action, "none")] = seen.get(("tool_result", o.action, "none"), 0) + 1
    guard.on_bot_message(BotMessage(channel="discord", account="a", conversation="c", sender="bot-b", receiver="bot-a", ts_ms=1000))
    assert any(k[:2] == ("tool_call", "block") for k in seen), seen

    got = collected(reader)
    # The table's instruments, no more, no fewer; the store's only where there is a store.
    assert set(got) == {n for n in table_names() if not n.startswith("loopguard.store.")}
    decisions = {(a["kind"], a["action"], a["detector"]): v for a, v in got["loopguard.decisions"]}
    bot = {k: v for k, v in decisions.items() if k[0] == "bot_message"}
    assert {k: v for k, v in decisions.items() if k[0] != "bot_message"} == seen
    assert sum(bot.values()) == 1 and all(a["host"] == "python" for a, _ in got["loopguard.decisions"])
    durations = {a["kind"]: n for a, n in got["loopguard.decision.duration"]}
    assert durations == {
        "tool_call": 12, "tool_result": sum(v for k, v in seen.items() if k[0] == "tool_result"), "bot_message": 1}
    for name in ("loopguard.policy.swaps", "loopguard.policy.traps", "loopguard.policy.timeouts",
                 "loopguard.policy.recoveries"):
        assert got[name] == [({"host": "python"}, 0)], name


def test_the_store_counters_are_the_store_loops_own(every_decision_timed):
    reader = InMemoryMetricReader()
    guard = LoopGuard(TIGHT, store="memory", meter_provider=MeterProvider(metric_readers=[reader]), metrics_host="replica")
    for _ in range(3):
        call = ToolCall("s1", "read", {"path": "/a"})
        guard.before_tool_call(call)
        guard.after_tool_outcome(call, result=SAME)
    health = guard.health()
    got = collected(reader)
    assert set(got) == table_names()
    on = {a["on"]: v for a, v in got["loopguard.store.decisions"]}
    assert on == {"store": health["store_on_store"], "local": health["store_on_local"], "refused": 0}
    assert on["store"] >= 6, on
    assert got["loopguard.store.cas_retries"] == [({"host": "replica"}, health["store_cas_retries"])]
    assert got["loopguard.store.fallback_episodes"] == [({"host": "replica"}, 0)]


def test_one_decision_in_duration_sample_is_timed():
    from loopguard import _metrics

    reader = InMemoryMetricReader()
    guard = LoopGuard({}, meter_provider=MeterProvider(metric_readers=[reader]))
    for i in range(3 * _metrics.DURATION_SAMPLE):
        guard.before_tool_call(ToolCall("s", "read", {"path": f"/{i}"}))
    got = collected(reader)
    assert got["loopguard.decisions"] == [
        ({"host": "python", "kind": "tool_call", "action": "allow", "detector": "none"}, 3 * _metrics.DURATION_SAMPLE)]
    assert got["loopguard.decision.duration"] == [({"host": "python", "kind": "tool_call"}, 3)]


def run(code):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_without_opentelemetry_nothing_is_imported_and_nothing_recorded():
    out = run("""
        import sys
        from loopguard import LoopGuard, ToolCall
        g = LoopGuard({"tools": {"loopDetection": {"enabled": True}}})
        for _ in range(5):
            c = ToolCall("s", "read", {"path": "/a"})
            g.before_tool_call(c)
            g.after_tool_outcome(c, result={"ok": 1})
        print(g._metrics, sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """)
    assert out.strip() == "None []"


def test_the_global_provider_is_used_when_the_application_set_opentelemetry_up():
    out = run("""
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        from loopguard import LoopGuard, ToolCall
        g = LoopGuard({})
        g.before_tool_call(ToolCall("s", "read", {"path": "/a"}))
        for rm in reader.get_metrics_data().resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == "loopguard.decisions":
                        print([(dict(p.attributes), p.value) for p in m.data.data_points])
    """)
    assert out.strip() == "[({'host': 'python', 'kind': 'tool_call', 'action': 'allow', 'detector': 'none'}, 1)]"


def test_the_litellm_guardrails_verdicts_are_counted_once_never_the_replayed_history():
    """The guardrail's replay decides the history in batches: only its verdicts on the model's
    calls are decisions, each counted once however often the history is replayed."""
    from loopguard._replay import HistoryReplay
    from test_history_nosession import TIGHT as LOOPY, Conversation

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    replays = [HistoryReplay(LoopGuard(LOOPY, meter_provider=provider, metrics_host="litellm")) for _ in range(2)]
    conv, seen = Conversation("m", seed=3), {}
    for turn in range(30):
        replay, data = replays[turn % 2], conv.request()  # two workers: each replays what it missed
        replay.start(f"r{turn}", None, data)
        calls = conv.calls()
        verdicts = replay.decide(f"r{turn}", data, calls)
        for v in verdicts:
            key = (v["action"], v["detector"] or "none")
            seen[key] = seen.get(key, 0) + 1
        conv.answer(calls, verdicts)
    assert any(a == "block" for a, _ in seen) and any(a == "warn" for a, _ in seen), seen
    got = collected(reader)["loopguard.decisions"]
    assert {(a["action"], a["detector"]): v for a, v in got if a["kind"] == "tool_call"} == seen
    assert all(a["host"] == "litellm" and a["kind"] == "tool_call" for a, _ in got), got
