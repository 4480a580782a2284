#!/usr/bin/env python3
"""The proxies' overhead (docs/PROXIES.md), measured side by side in one run.

    .venv/mcp/bin/python scripts/bench-proxies.py mcp [N]        # N tools/call per round (300)
    .venv/litellm/bin/python scripts/bench-proxies.py litellm [N]  # N requests per side (200)
    .venv/litellm/bin/python scripts/bench-proxies.py hooks [N]    # the guardrail's hooks alone
    .venv/litellm/bin/python scripts/bench-proxies.py hooks2 [N]   # two workers sharing a redis-server

mcp: the MCP SDK 2.3.0 client calls server-everything's `echo` (distinct arguments, so never
blocked) directly and through `loopguard mcp` (stdio), both sessions open at once and the calls
alternating, so both see the same machine load; p50/p99 per side and of the paired differences.
litellm: two LiteLLM 1.108.7 proxies (1 worker each) in front of the same scripted model, one with
the loopguard guardrail and one without; each request carries a history of 1,000 tool calls and
results (distinct, so nothing is blocked), growing by one per request as an agent's does, and
goes to both, alternating which goes first; once with LiteLLM's session id, once without.
hooks: the guardrail's pre-call and post-call hooks in process, on the same growing history, each
request a fresh copy of it as a proxy parses it (parsing and collecting its garbage not timed);
with and without session id. hooks2: the same with two guardrails (two workers) on one
redis-server started here (LOOPGUARD_STORE), the requests dealt to them in turn, so that each
request's worker did not serve the turn before it.
Needs scripts/setup-proxies.sh, target/debug/loopguard (or LOOPGUARD) and, for litellm, the
loopguard wheel installed in .venv/litellm (tests/proxies/run.sh does it)."""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROXIES = os.path.join(ROOT, "tests", "proxies")


def summary(name, xs):
    xs = sorted(xs)
    p = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    print(f"{name:<28} n={len(xs)} p50={statistics.median(xs):.3f} ms p90={p(.9):.3f} ms p99={p(.99):.3f} ms")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mcp(n):
    import anyio
    from mcp import Client, StdioServerParameters

    node = os.path.join(ROOT, ".venv", "node24", "bin", "node")
    everything = os.path.join(PROXIES, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
    loopguard = os.environ.get("LOOPGUARD", os.path.join(ROOT, "target", "debug", "loopguard"))
    direct = StdioServerParameters(command=node, args=[everything, "stdio"])
    proxied = StdioServerParameters(command=loopguard, args=["mcp", "--", node, everything, "stdio"])

    async def run():
        lat = {"direct": [], "proxy": []}
        async with Client(direct, mode="legacy") as d, Client(proxied, mode="legacy") as p:
            for i in range(50):  # warm-up
                await d.call_tool("echo", {"message": f"w{i}"})
                await p.call_tool("echo", {"message": f"w{i}"})
            for i in range(n):
                order = [("direct", d), ("proxy", p)] if i % 2 else [("proxy", p), ("direct", d)]
                for name, c in order:
                    t = time.perf_counter()
                    r = await c.call_tool("echo", {"message": f"m{i}"})
                    lat[name].append((time.perf_counter() - t) * 1000)
                    assert not r.is_error
        return lat

    lat = anyio.run(run)
    print(f"loopguard mcp (stdio) vs direct, echo via the MCP SDK 2.3.0, {n} paired calls")
    summary("direct", lat["direct"])
    summary("through loopguard mcp", lat["proxy"])
    summary("paired difference", [b - a for a, b in zip(lat["direct"], lat["proxy"])])


def litellm(n):
    import urllib.request

    work = tempfile.mkdtemp(prefix="loopguard-bench-")
    model_port, with_port, without_port = free_port(), free_port(), free_port()
    model = subprocess.Popen([sys.executable, os.path.join(PROXIES, "fake_model.py"), str(model_port), os.devnull])
    procs = [model]
    model_entry = (f"model_list:\n  - model_name: fake-agent\n    litellm_params: {{model: openai/fake-agent, "
                   f"api_base: \"http://127.0.0.1:{model_port}/v1\", api_key: fake-key}}\n"
                   "general_settings: {master_key: sk-bench}\n")
    guard = ("guardrails:\n  - guardrail_name: loopguard\n    litellm_params:\n      guardrail: loopguard.litellm.LoopGuardrail\n"
             "      mode: [pre_call, post_call]\n      default_on: true\n")
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    log = open(os.path.join(work, "litellm.log"), "w")
    try:
        for port, text in ((with_port, model_entry + guard), (without_port, model_entry)):
            cfg = os.path.join(work, f"{port}.yaml")
            open(cfg, "w").write(text)
            procs.append(subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "litellm"), "--config", cfg,
                                           "--host", "127.0.0.1", "--port", str(port)], env=env, stdout=log, stderr=log))
        for port in (with_port, without_port):
            for _ in range(240):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health/liveliness", timeout=2).read()
                    break
                except Exception:
                    time.sleep(0.5)
        def history(pairs):
            messages = [{"role": "user", "content": "build: bench"}]
            for i in range(pairs):
                messages.append({"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
                                 "function": {"name": "exec", "arguments": json.dumps({"command": f"step {i}"})}}]})
                messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"step {i}: ok, 12 lines of output"})
            return messages

        def once(port, pairs, session):
            body = json.dumps({"model": "fake-agent", "messages": history(pairs)}).encode()
            headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
            if session:
                headers["x-litellm-session-id"] = session
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body, headers=headers)
            t = time.perf_counter()
            urllib.request.urlopen(req, timeout=60).read()
            return (time.perf_counter() - t) * 1000

        for i in range(20):  # warm-up
            once(with_port, 1000, None), once(without_port, 1000, None)
        # An agent session: the history grows by one call and result per request (1,000 to
        # 1,000 + N), with LiteLLM's session id; then the same without a session id (the
        # conversation is then told by its opening).
        for session in ("bench-session", None):
            lat = {"with": [], "without": []}
            for i in range(n):
                order = [("with", with_port), ("without", without_port)] if i % 2 else [("without", without_port), ("with", with_port)]
                for name, port in order:
                    lat[name].append(once(port, 1000 + i, session))
            print(f"LiteLLM proxy 1.108.7, history of 1,000+ tool calls, {n} paired requests, "
                  f"{'session id sent' if session else 'no session id'}")
            summary("without the guardrail", lat["without"])
            summary("with loopguard.litellm", lat["with"])
            summary("paired difference", [b - a for a, b in zip(lat["without"], lat["with"])])
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)


def hooks2(n):
    """`hooks` on two workers sharing a store (a redis-server on loopback, started here)."""
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        os.environ["LOOPGUARD_STORE"] = f"redis://127.0.0.1:{port}"
        hooks(n, workers=2)
    finally:
        server.kill()
        server.wait()


def hooks(n, workers=1):
    """The guardrail's own time per request (its pre-call and post-call hooks, in process, as
    LiteLLM calls them), at a history of 1,000+ tool calls growing by one per request. Each
    request carries a fresh copy of the history (a proxy parses every request anew; without a
    session id the guardrail compares what it carries with what it saw)."""
    import asyncio
    import gc

    from litellm.types.utils import ModelResponse
    from loopguard.litellm import LoopGuardrail

    gs = [LoopGuardrail(guardrail_name="loopguard", event_hook=["pre_call", "post_call"], default_on=True)
          for _ in range(workers)]
    gc.freeze()  # LiteLLM's own objects: the collection before each request then only sees the request's
    base = [{"role": "user", "content": "build: bench"}]

    def pair(i):
        return [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
                 "function": {"name": "exec", "arguments": json.dumps({"command": f"step {i}"})}}]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": f"step {i}: ok, 12 lines of output"}]

    async def request(g, messages, session, i):
        """One request's pre-call and post-call hooks on `g`: (wall, CPU) milliseconds."""
        data = {"messages": json.loads(json.dumps(messages)), "litellm_call_id": f"{session}-{i}"}
        gc.collect()  # the parse's garbage: its collection is not the guardrail's cost
        if session:
            data["litellm_session_id"] = session
        response = ModelResponse(choices=[{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function",
            "function": {"name": "exec", "arguments": json.dumps({"command": f"step {i}"})}}]}}])
        t, c = time.perf_counter(), time.thread_time()
        await g.async_pre_call_hook(None, None, data, "acompletion")
        await g.async_post_call_success_hook(data, None, response)
        return (time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000

    async def run(session):
        messages = list(base)
        for i in range(1000):
            messages += pair(i)
        lat, cpu = [], []
        for i in range(1000, 1000 + n + 20):
            wall, used = await request(gs[i % workers], messages, session, i)
            lat.append(wall)
            cpu.append(used)
            messages += pair(i)
        return lat[20:], cpu[20:], messages

    async def newcomer(messages, session):
        """A worker that never saw the conversation takes its next request: with the store it
        continues the record, without one it replays the whole history."""
        out = {}
        store = os.environ.pop("LOOPGUARD_STORE")
        try:
            for label, url in (("store", store), ("no store", None)):
                if url:
                    os.environ["LOOPGUARD_STORE"] = url
                g = LoopGuardrail(guardrail_name="loopguard", event_hook=["pre_call", "post_call"], default_on=True)
                os.environ.pop("LOOPGUARD_STORE", None)
                out[label] = await request(g, messages, session, 10**6)
        finally:
            os.environ["LOOPGUARD_STORE"] = store
        return out

    # Wall time is the figure; the thread's CPU time beside it leaves out the waits for a core
    # that a loaded machine adds (on 2 shared cores they make most of a p99).
    for session in ("bench-session", None):
        lat, cpu, messages = asyncio.run(run(session))
        summary(f"hooks, {workers} worker(s), {'session id' if session else 'no session id'}", lat)
        summary("  its CPU time", cpu)
        if workers > 1:
            first = asyncio.run(newcomer(messages, session))
            print(f"  a new worker's first request at {len(messages) // 2} calls: "
                  + ", ".join(f"{k} {w:.2f} ms (CPU {c:.2f})" for k, (w, c) in first.items()))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "mcp"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else (300 if what == "mcp" else 200)
    {"mcp": mcp, "litellm": litellm, "hooks": hooks, "hooks2": hooks2}[what](count)
