#!/usr/bin/env python3
"""`loopguard mcp` with the official MCP Python SDK (mcp 2.3.0) as the client and the real
`@modelcontextprotocol/server-everything` 2026.8.31 as the server, over stdio and streamable HTTP.

    mcp_scenarios.py stdio|http|modern LOOPGUARD NODE EVERYTHING_INDEX_JS WORKDIR

The proxy runs without --config, so with the agent-facing hosts' one default (host/src/agent.rs
`AGENT_DEFAULTS`: detection on, the `cautious` preset): the same `echo` answered the same way
back to back carries the policy's warning once at its 3rd call, and its 4th and later calls are
answered by the proxy with `isError: true` and the policy's text; everything else (discovery and
its -32601 fallback, tools/list and its list_changed notifications, progress, cancellation,
server-initiated sampling and elicitation, ping) works through it. What each call must get comes
from the policy (policy.py: the spec's levels pinned, `loopguard replay` under the default written
out by hand and, over stdio, `loopguard hook` without a config), never from the proxy. Over stdio,
two wire taps (tap.py) around the proxy check that every message except the guarded ones crosses
it byte for byte, ids never renumbered. The 2026-07-28 run also runs the proxy with `--config`
`{"loopguard":{"preset":"off"}}`: OpenClaw's rules alone (the 11th identical call warned, the 21st
blocked), `enabled` filled in from the default. Exit 0 = all held.
"""
import base64
import json
import os
import socket
import subprocess
import sys
import time

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters

import policy

TRANSPORT, LOOPGUARD, NODE, EVERYTHING, WORK = sys.argv[1:6]
HERE = os.path.dirname(os.path.abspath(__file__))
# The polling loop: the same echo, answered the same way each time (server-everything's echo
# result, as the proxy records it), then one echo with other arguments.
POLL, OTHER = {"message": "gh run view 42"}, {"message": "something else"}
POLLS = 6  # under the default: 2 pass, the 3rd warned, the 4th to 6th blocked (policy.pinned_cautious)


def echo_result(args):
    return {"content": [{"type": "text", "text": f"Echo: {args['message']}"}]}


def exec_result(args):
    """modern_server.py's `exec`."""
    return {"content": [{"type": "text", "text": f"{args['command']}: status=in_progress"}]}


seen = {"sampling": 0, "elicitation": 0, "progress": []}
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


async def sampling(ctx, params: types.CreateMessageRequestParams):
    seen["sampling"] += 1
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="sampled-by-client"),
                                     model="fake-llm", stop_reason="endTurn")


async def elicitation(ctx, params):
    seen["elicitation"] += 1
    return types.ElicitResult(action="decline")


def texts(result):
    return [c.text for c in result.content if c.type == "text"]


def expected(config, tool, result_of, calls, pinned):
    """What the policy decides for `calls` ((tool, args) one after the other) under `config`:
    the replay's decisions, checked against the levels and texts pinned from the spec."""
    want = policy.replay(LOOPGUARD, config, [(tool, args, result_of(args)) for args in calls])
    check(want == pinned, f"the replay under {json.dumps(config)} agrees with the spec's levels and texts: "
          f"{policy.summary(want)} (pinned: {policy.summary(pinned)})")
    return want


def check_call(r, want, result_text, what):
    """One tools/call's result as the client got it, against the policy's decision `want`."""
    action, message = want
    if action == "block":
        check(r.is_error and texts(r) == [message], f"{what} blocked with the policy's text: {texts(r)}")
    elif action == "warn":
        check(not r.is_error and texts(r) == [result_text, message], f"{what} carries the policy's warning once: {texts(r)}")
    else:
        check(not r.is_error and texts(r) == [result_text], f"{what} passes untouched")


# The echo loop under the default (no --config), then one echo with other arguments.
ECHO_CALLS = [POLL] * POLLS + [OTHER]
ECHO_WANT = []
if TRANSPORT != "modern":
    ECHO_WANT = expected(policy.DEFAULT, "echo", echo_result, ECHO_CALLS, policy.pinned_cautious("echo", POLLS) + [policy.PASS])
BLOCKS = {m for a, m in ECHO_WANT if a == "block"}
WARNINGS = {m for a, m in ECHO_WANT if a == "warn"}
if TRANSPORT == "stdio":
    # The one default of the agent-facing hosts: `loopguard hook` without a config decides the same.
    check(policy.hook(LOOPGUARD, [("echo", a, echo_result(a)) for a in ECHO_CALLS]) == ECHO_WANT,
          "`loopguard hook` without a config decides these calls as the replay under AGENT_DEFAULTS "
          "(the proxy's default is the hook's)")


async def scenario(target):
    async with Client(target, sampling_callback=sampling, elicitation_callback=elicitation) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        check("echo" in names, f"tools/list through the proxy ({len(names)} tools)")
        errors = []
        for i, (args, want) in enumerate(zip(ECHO_CALLS, ECHO_WANT), 1):
            r = await c.call_tool("echo", args)
            check_call(r, want, f"Echo: {args['message']}", f"echo #{i} {json.dumps(args)}")
            errors.append(r.is_error)
        first = errors.index(True) + 1 if True in errors else None
        check(first == 4, "without --config the proxy blocks the 4th identical echo first, as the hook's default "
              f"does (AGENT_DEFAULTS: the cautious preset): the first blocked was #{first}")

        async def on_progress(progress, total, message):
            seen["progress"].append(progress)
        r = await c.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress_callback=on_progress)
        check(not r.is_error and seen["progress"] == [1, 2, 3], f"progress notifications reach the client: {seen['progress']}")
        with anyio.move_on_after(0.3):
            await c.call_tool("trigger-long-running-operation", {"duration": 3, "steps": 3})
        names = [t.name for t in (await c.list_tools()).tools]
        r = await c.call_tool("trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
        check(seen["sampling"] == 1 and "sampled-by-client" in texts(r)[0],
              "a server-initiated sampling/createMessage is answered by the client through the proxy")
        if "trigger-elicitation-request" in names:
            await c.call_tool("trigger-elicitation-request", {})
            check(seen["elicitation"] == 1, "a server-initiated elicitation/create is answered through the proxy")
        await c.session.send_ping()
        check(True, "ping")


async def modern(target, label, calls, wants):
    """2026-07-28 over stdio: no initialize, no session id; the connection is the session."""
    async with Client(target) as c:
        check(c.session.protocol_version == "2026-07-28", f"{label}: protocol {c.session.protocol_version}")
        for i, (args, want) in enumerate(zip(calls, wants), 1):
            r = await c.call_tool("exec", args)
            check_call(r, want, exec_result(args)["content"][0]["text"], f"{label}: exec #{i} (the SDK accepted the result)")


def blocked_result(msg):
    """Whether a JSON-RPC message is a tools/call result the proxy made for a blocked call."""
    result = msg.get("result") if isinstance(msg, dict) else None
    if not isinstance(result, dict) or not result.get("isError"):
        return False
    return [c.get("text") for c in result.get("content", [])] in [[m] for m in BLOCKS]


def tapped(log):
    """The messages one tap saw: (direction, bytes) in order."""
    with open(log, encoding="utf-8") as f:
        return [(m["dir"], base64.b64decode(m["b64"])) for m in map(json.loads, f)]


def compare_taps(client_log, server_log):
    """Client side: `in` = client→proxy, `out` = proxy→client. Server side: `in` = proxy→server,
    `out` = server→proxy. Every message crosses untouched except blocked calls (answered by
    the proxy) and the one response that carries the warning."""
    client, server = tapped(client_log), tapped(server_log)
    c_in = [b for d, b in client if d == "in"]
    s_in = [b for d, b in server if d == "in"]
    c_out = [b for d, b in client if d == "out"]
    s_out = [b for d, b in server if d == "out"]
    blocked_ids = [json.loads(b)["id"] for b in c_out if blocked_result(json.loads(b))]
    n_blocked = sum(a == "block" for a, _ in ECHO_WANT)
    calls = {json.loads(b).get("id"): json.loads(b) for b in c_in if json.loads(b).get("method") == "tools/call"}
    check(len(blocked_ids) == n_blocked == len(set(blocked_ids)) and all(i in calls for i in blocked_ids),
          f"the proxy answered {n_blocked} calls itself, each with its request's id (ids {blocked_ids})")
    expect_in = [b for b in c_in if json.loads(b).get("id") not in blocked_ids or "method" not in json.loads(b)]
    check(s_in == expect_in, f"client -> server: {len(s_in)} messages byte-identical, only the blocked calls held back")
    warned = [b for b in c_out if any(w.encode() in b for w in WARNINGS)]
    check(len(warned) == 1, "one response carries the warning")
    expect_out = [b for b in c_out if b not in warned and json.loads(b).get("id") not in blocked_ids]
    differ = [b for b in s_out if b not in expect_out]
    check(len(s_out) == len(expect_out) + 1 and len(differ) == 1 and b'"Echo: gh run view 42"' in differ[0],
          f"server -> client: {len(s_out)} messages byte-identical except the warned result")
    check(all(b in s_out for b in expect_out), "nothing reaches the client that the server did not send")
    methods = {json.loads(b).get("method") for b in s_out} | {json.loads(b).get("method") for b in s_in}
    for m in ["server/discover", "initialize", "notifications/initialized", "notifications/tools/list_changed",
              "notifications/progress", "notifications/cancelled", "sampling/createMessage", "ping"]:
        check(m in methods, f"{m} crossed the proxy")


def logged(client_log, server_log, limit=60):
    """Waits until the taps have logged every exchange (each is logged when it ends, which can lag
    the client on a busy machine): the client's side holds the server's plus the calls the proxy
    answered itself. At least a second, so that the streams the session's end closes are in; the
    limit is a hang's, past it compare_http says what is missing."""
    n_blocked = sum(a == "block" for a, _ in ECHO_WANT)
    time.sleep(1)

    def count(path):
        with open(path, encoding="utf-8") as f:
            return sum(1 for _ in f)
    end = time.time() + limit
    while time.time() < end and not 0 < count(client_log) == count(server_log) + n_blocked:
        time.sleep(0.1)


def compare_http(client_log, server_log):
    """The same for HTTP: every exchange the client had crossed to the server with the same method
    and body bytes, and its response came back byte for byte, except the blocked calls (answered
    by the proxy) and the one response that carries the warning."""
    from collections import Counter

    def load(path):
        with open(path, encoding="utf-8") as f:
            return [(x["method"], base64.b64decode(x["body"]), base64.b64decode(x["response"])) for x in map(json.loads, f)]
    client, server = load(client_log), load(server_log)
    n_blocked = sum(a == "block" for a, _ in ECHO_WANT)
    blocked = [x for x in client if any(m.encode() in x[2] for m in BLOCKS)]
    check(len(blocked) == n_blocked, f"the proxy answered {n_blocked} calls itself over HTTP ({len(client)} exchanges)")
    rest = [x for x in client if x not in blocked]
    check(Counter((m, b) for m, b, _ in rest) == Counter((m, b) for m, b, _ in server),
          f"client -> server: {len(server)} requests with the same method and body bytes, only the blocked calls held back")
    warned = [x for x in rest if any(w.encode() in x[2] for w in WARNINGS)]
    check(len(warned) == 1, "one HTTP response carries the warning")
    differ = Counter(r for _, _, r in server) - Counter(r for _, _, r in rest)
    check(len(differ) == 1 and b"Echo: gh run view 42" in next(iter(differ)),
          "server -> client: every response byte-identical except the warned result")
    methods = {json.loads(b).get("method") for _, b, _ in server if b.startswith(b"{")}
    for m in ["initialize", "notifications/initialized", "tools/list", "tools/call", "ping"]:
        check(m in methods, f"{m} crossed the proxy over HTTP")
    check(any(b"sampling/createMessage" in r for _, _, r in server), "a server request crossed inside an SSE stream")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on {port}")


def main():
    if TRANSPORT == "stdio":
        client_log, server_log = os.path.join(WORK, "tap-client.jsonl"), os.path.join(WORK, "tap-server.jsonl")
        for log in (client_log, server_log):
            open(log, "w").close()
        tap = [sys.executable, os.path.join(HERE, "tap.py")]
        target = StdioServerParameters(command=tap[0], args=[
            *tap[1:], client_log, "--", LOOPGUARD, "mcp", "--",
            *tap, server_log, "--", NODE, EVERYTHING, "stdio"])
        anyio.run(scenario, target)
        compare_taps(client_log, server_log)
    elif TRANSPORT == "modern":
        server = [sys.executable, os.path.join(HERE, "modern_server.py")]
        exec_poll = {"command": "gh run view 42"}
        # The default (no --config), then OpenClaw's rules alone through --config.
        calls = [exec_poll] * POLLS
        wants = expected(policy.DEFAULT, "exec", exec_result, calls, policy.pinned_cautious("exec", POLLS))
        anyio.run(modern, StdioServerParameters(command=LOOPGUARD, args=["mcp", "--", *server]),
                  "2026-07-28, default", calls, wants)
        off = os.path.join(WORK, "preset-off.json")
        with open(off, "w") as f:
            json.dump(policy.PRESET_OFF, f)
        calls = [exec_poll] * 22
        wants = expected(policy.PRESET_OFF_FILLED, "exec", exec_result, calls, policy.pinned_openclaw("exec", 22))
        anyio.run(modern, StdioServerParameters(command=LOOPGUARD, args=["mcp", "--config", off, "--", *server]),
                  "2026-07-28, --config preset off", calls, wants)
    else:
        up, mine, tap_up, tap_client = free_port(), free_port(), free_port(), free_port()
        client_log, server_log = os.path.join(WORK, "http-client.jsonl"), os.path.join(WORK, "http-server.jsonl")
        for log in (client_log, server_log):
            open(log, "w").close()
        env = dict(os.environ, PORT=str(up))
        server_log_file = open(os.path.join(WORK, "everything.log"), "w")
        tap = [sys.executable, os.path.join(HERE, "http_tap.py")]
        procs = [
            ("server-everything", up, subprocess.Popen([NODE, EVERYTHING, "streamableHttp"], env=env, stdout=server_log_file, stderr=server_log_file)),
            ("the server-side tap", tap_up, subprocess.Popen([*tap, str(tap_up), f"http://127.0.0.1:{up}/mcp", server_log])),
            ("loopguard mcp", mine, subprocess.Popen([LOOPGUARD, "mcp", "--listen", f"127.0.0.1:{mine}", "--upstream", f"http://127.0.0.1:{tap_up}/mcp"],
                                                     stderr=open(os.path.join(WORK, "proxy.log"), "w"))),
            ("the client-side tap", tap_client, subprocess.Popen([*tap, str(tap_client), f"http://127.0.0.1:{mine}/mcp", client_log])),
        ]
        try:
            for what, port, proc in procs:
                wait_port(port, proc, what)
            anyio.run(scenario, f"http://127.0.0.1:{tap_client}/mcp")
            logged(client_log, server_log)
            check(procs[2][2].poll() is None, "the proxy is still running")
            compare_http(client_log, server_log)
        finally:
            for _, _, p in reversed(procs):
                p.terminate()
                p.wait(10)
    print(f"mcp {TRANSPORT}: {'FAILED ' + str(len(failures)) if failures else 'all passed'}")
    sys.exit(1 if failures else 0)


main()
