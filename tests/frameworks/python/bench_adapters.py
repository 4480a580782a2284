#!/usr/bin/env python3
"""The Python framework adapters' own cost per tool call: the check and the outcome through each
adapter's hook functions, called directly with stand-in framework objects (no model, no agent
loop), against the bare LoopGuard calls for the same call in the same run. A session is 200
distinct calls (read of a new path each, every one allowed and recorded); the figure is p50/p99
over all calls of all sessions. Floor (issue 59): adapter p99 <= 0.5 ms. "glue alone" is the
adapter with a stand-in guard that answers at once: the adapter's own code, without the policy.

Run it with a framework's venv (each adapter needs its framework); adapters whose framework is
missing are skipped:

    PYTHONPATH=packages/python/python .venv/fw/langchain/bin/python tests/frameworks/python/bench_adapters.py
    for n in langchain openai-agents pydantic-ai strands; do PYTHONPATH=… .venv/fw/$n/bin/python …; done

``--check`` exits 1 when an adapter's p99 is over the floor.
"""
import argparse
import json
import sys
import time
from types import SimpleNamespace

from loopguard import LoopGuard, OutcomeVerdict, ToolVerdict
from loopguard._gate import agent_config

FLOOR_MS = 0.5


def result_of(i):
    return f"contents of /src/{i}.py"


# -- one factory per adapter: (name, make(session) -> step(i) running check + outcome) ---------

def langchain(guard):
    from langchain.messages import ToolMessage
    from langgraph.prebuilt.tool_node import ToolCallRequest

    from loopguard.langchain import LoopGuardMiddleware

    middleware = LoopGuardMiddleware(guard=guard)

    def session(sid, calls):
        runtime = SimpleNamespace(config={"configurable": {"thread_id": sid}})
        prepared = []
        for i in range(calls):
            call = {"name": "read", "args": {"path": f"/src/{i}.py"}, "id": f"{sid}-{i}", "type": "tool_call"}
            message = ToolMessage(content=result_of(i), tool_call_id=call["id"], name="read")
            prepared.append((ToolCallRequest(tool_call=call, tool=None, state={"messages": []}, runtime=runtime),
                             lambda _request, m=message: m))
        return lambda i: middleware.wrap_tool_call(*prepared[i])
    return session


def openai_agents(guard):
    from agents import RunConfig

    from loopguard.openai_agents import LoopGuardGuardrail

    guardrail = LoopGuardGuardrail(guard=guard)
    check, record = guardrail.input_guardrail.guardrail_function, guardrail.output_guardrail.guardrail_function
    agent = SimpleNamespace(name="ops")

    def session(sid, calls):
        run_config = RunConfig(group_id=sid)
        prepared = []
        for i in range(calls):
            ctx = SimpleNamespace(run_config=run_config, tool_name="read", tool_call_id=f"{sid}-{i}",
                                  tool_arguments=json.dumps({"path": f"/src/{i}.py"}))
            prepared.append((SimpleNamespace(context=ctx, agent=agent),
                             SimpleNamespace(context=ctx, agent=agent, output=result_of(i))))

        def step(i):
            before, after = prepared[i]
            check(before)
            record(after)
        return step
    return session


def pydantic_ai(guard):
    from pydantic_ai.messages import ToolCallPart

    from loopguard.pydantic_ai import LoopGuardCapability

    capability = LoopGuardCapability(guard=guard)

    def session(sid, calls):
        ctx = SimpleNamespace(conversation_id=sid, run_id=sid, enqueue=lambda *a, **k: None, cancel=lambda: None)
        prepared = []
        for i in range(calls):
            args = {"path": f"/src/{i}.py"}

            async def handler(_args, r=result_of(i)):
                return r
            prepared.append((ToolCallPart(tool_name="read", args=args, tool_call_id=f"{sid}-{i}"), args, handler))

        def step(i):  # the hook is a coroutine that never suspends here: drive it without a loop
            call, args, handler = prepared[i]
            coroutine = capability.wrap_tool_execute(ctx, call=call, tool_def=None, args=args, handler=handler)
            try:
                coroutine.send(None)
            except StopIteration:
                return
            raise RuntimeError("wrap_tool_execute suspended")
        return step
    return session


def strands(guard):
    from loopguard.strands import LoopGuardHooks

    hooks = LoopGuardHooks(guard=guard)

    def session(sid, calls):
        agent = SimpleNamespace(session_id=sid, name="ops", cancel=lambda **k: None)
        prepared = []
        for i in range(calls):
            use = {"toolUseId": f"{sid}-{i}", "name": "read", "input": {"path": f"/src/{i}.py"}}
            result = {"toolUseId": use["toolUseId"], "status": "success", "content": [{"text": result_of(i)}]}
            prepared.append((SimpleNamespace(tool_use=use, agent=agent, cancel_tool=False),
                             SimpleNamespace(tool_use=use, agent=agent, result=result, exception=None,
                                             cancel_message=None)))

        def step(i):
            before, after = prepared[i]
            hooks.before_tool_call(before)
            hooks.after_tool_call(after)
        return step
    return session


class NullGuard:
    """Answers at once: what is left of a call's time is the adapter's own glue."""

    def before_tool_call(self, call):
        return ToolVerdict("allow")

    def after_tool_outcome(self, call, **outcome):
        return OutcomeVerdict("recorded")


ADAPTERS = {"langchain": langchain, "openai_agents": openai_agents, "pydantic_ai": pydantic_ai, "strands": strands}


def bare(guard):
    def session(sid, calls):
        prepared = [({"session": sid, "tool": "read", "args": {"path": f"/src/{i}.py"}, "call_id": f"{sid}-{i}"},
                     result_of(i)) for i in range(calls)]

        def step(i):
            call, result = prepared[i]
            guard.before_tool_call(call)
            guard.after_tool_outcome(call, result=result)
        return step
    return session


def measure(make_session, prefix, sessions, calls):
    samples = []
    for s in range(sessions):
        step = make_session(f"{prefix}-{s}", calls)
        for i in range(calls):
            t0 = time.perf_counter_ns()
            step(i)
            samples.append(time.perf_counter_ns() - t0)
    return samples


def quantiles(samples):
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] / 1e6, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--calls", type=int, default=200, help="calls per session")
    ap.add_argument("--check", action="store_true", help=f"exit 1 when an adapter's p99 is over {FLOOR_MS} ms")
    args = ap.parse_args()
    guard = LoopGuard(agent_config(None))
    over = []
    for name, factory in ADAPTERS.items():
        try:
            make_session, glue_session = factory(guard), factory(NullGuard())
        except ImportError as e:
            print(f"{name:14} skipped ({e.name or e} not installed)")
            continue
        adapter, plain, glue = [], [], []
        for round_ in range(args.sessions + 1):  # interleaved, so all see the same machine; round 0 warms up
            a = measure(make_session, f"{name}-{round_}", 1, args.calls)
            b = measure(bare(guard), f"bare-{name}-{round_}", 1, args.calls)
            g = measure(glue_session, f"glue-{name}-{round_}", 1, args.calls)
            if round_:
                adapter, plain, glue = adapter + a, plain + b, glue + g
        (a50, a99), (b50, b99), (g50, g99) = quantiles(adapter), quantiles(plain), quantiles(glue)
        verdict = "ok" if a99 <= FLOOR_MS else "OVER"
        print(f"{name:14} adapter p50 {a50:.3f} p99 {a99:.3f} ms | bare guard p50 {b50:.3f} p99 {b99:.3f} ms | "
              f"glue alone p50 {g50:.3f} p99 {g99:.3f} ms | {len(adapter)} calls | adapter p99 <= {FLOOR_MS} ms: {verdict}")
        if a99 > FLOOR_MS:
            over.append(name)
    return 1 if args.check and over else 0


if __name__ == "__main__":
    sys.exit(main())
