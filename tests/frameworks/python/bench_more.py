"""The adapter's own cost per tool call (check + outcome through its hook functions, the framework
excluded) against the bare LoopGuard calls, in the same run: loopguard.adk, .claude_agent_sdk and
.crewai, each called with fake framework objects, 200-call sessions of distinct calls, interleaved
with the bare calls; and the adapter over a stub guard that answers at once, which leaves only
its own code (the bare guard's p99 on a busy 2-core machine is noise larger than the adapter). Run with the framework's venv (the adapter imports its framework):

    PYTHONPATH=packages/python/python .venv/fw/adk/bin/python tests/frameworks/python/bench_more.py adk
"""
import sys
import time
from types import SimpleNamespace as NS

from loopguard import LoopGuard
from loopguard._gate import agent_config

SESSIONS, CALLS = 10, 200


class StubGuard:
    """Answers at once: what is left is the adapter's own code (and ToolGate's)."""

    def before_tool_call(self, call):
        return NS(action="allow", notify=False, message=None, detector=None)

    def after_tool_outcome(self, call, **outcome):
        return NS(action="recorded", message=None)


ADAPTERS: dict = {}


def sync(coro):
    """Runs a coroutine that never awaits (the adapters' callbacks do not)."""
    try:
        coro.send(None)
    except StopIteration as e:
        return e.value
    raise RuntimeError("the callback awaited")


def adk(guard, session, i):
    from loopguard.adk import LoopGuardPlugin
    plugin = ADAPTERS.setdefault(("adk", id(guard)), LoopGuardPlugin(guard=guard))
    tool = NS(name="read")
    ctx = NS(session=NS(id=session), function_call_id=f"{session}-{i}", invocation_id=session, agent_name="a")
    args = {"path": f"/src/{i}.py"}

    def one():
        sync(plugin.before_tool_callback(tool=tool, tool_args=args, tool_context=ctx))
        sync(plugin.after_tool_callback(tool=tool, tool_args=args, tool_context=ctx, result={"result": f"text {i}"}))
    return one


def claude_agent_sdk(guard, session, i):
    from loopguard.claude_agent_sdk import LoopGuardHooks
    hooks = ADAPTERS.setdefault(("claude", id(guard)), LoopGuardHooks(guard=guard))
    pre = {"session_id": session, "tool_name": "Read", "tool_input": {"file_path": f"/src/{i}.py"},
           "hook_event_name": "PreToolUse"}
    post = dict(pre, hook_event_name="PostToolUse", tool_response=f"text {i}")
    call_id = f"{session}-{i}"

    def one():
        sync(hooks.pre_tool_use(pre, call_id, None))
        sync(hooks.post_tool_use(post, call_id, None))
    return one


def crewai(guard, session, i):
    from loopguard.crewai import LoopGuardHooks
    hooks = ADAPTERS.setdefault(("crewai", id(guard)), LoopGuardHooks(guard=guard))
    ctx = NS(tool_name="read", tool_input={"path": f"/src/{i}.py"}, agent=NS(id="agent", role="worker"),
             crew=NS(id=session), task=None, tool_result=f"text {i}")

    def one():
        hooks.before_tool_call(ctx)
        hooks.after_tool_call(ctx)
    return one


def bare(guard, session, i):
    call = {"session": session, "tool": "read", "args": {"path": f"/src/{i}.py"}}

    def one():
        guard.before_tool_call(call)
        guard.after_tool_outcome(call, result=f"text {i}")
    return one


def timed(fn):
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1e6


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def main(name):
    adapter = {"adk": adk, "claude-agent-sdk": claude_agent_sdk, "crewai": crewai}[name]
    guard, mine, stub = LoopGuard(agent_config(None)), LoopGuard(agent_config(None)), StubGuard()
    for i in range(50):  # warm all three
        adapter(mine, "warm", i)()
        adapter(stub, "warm", i)()
        bare(guard, "warm", i)()
    ours, theirs, alone = [], [], []
    for s in range(SESSIONS):
        for i in range(CALLS):
            ours.append(timed(adapter(mine, f"s{s}", i)))
            theirs.append(timed(bare(guard, f"s{s}", i)))
            alone.append(timed(adapter(stub, f"s{s}", i)))
    print(f"{name}: {SESSIONS} sessions x {CALLS} calls, ms per call (check + outcome)")
    for label, xs in (("adapter", ours), ("bare", theirs), ("adapter over a stub guard (its own cost)", alone)):
        print(f"  {label:8} p50 {pct(xs, 50):.3f}  p99 {pct(xs, 99):.3f}")


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["adk"]:
        main(arg)
