#!/usr/bin/env python3
"""A real Prometheus scrapes `loopguard mcp --listen` while the official MCP Python SDK's client
loops through it in front of the real server-everything; a PromQL query over Prometheus's HTTP
API must return the number of blocks the client saw.

    scrape.py LOOPGUARD PROMETHEUS NODE EVERYTHING_INDEX_JS WORKDIR

Each round is a new MCP session polling the same `echo` (under the agent-facing default the 4th
and later identical calls are blocked) and one other call; Prometheus scrapes every second during
the loop. The blocks counted here are the client's own (`isError` with the policy's text), never
the proxy's. Exit 0 = the query agreed; a summary line on stdout.
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import anyio
from mcp import Client

LOOPGUARD, PROMETHEUS, NODE, EVERYTHING, WORK = sys.argv[1:6]
ROUNDS, POLLS = 8, 6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"metrics: {what} exited with {proc.returncode} (logs in {WORK})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"metrics: {what} did not listen on {port}")


def query(prom, promql):
    """The value of an instant query's one sample, or None when it has none."""
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as r:
        answer = json.load(r)
    if answer.get("status") != "success":
        raise SystemExit(f"metrics: {promql}: {answer}")
    result = answer["data"]["result"]
    return float(result[0]["value"][1]) if result else None


async def loop(target, seen):
    for _ in range(ROUNDS):
        async with Client(target) as c:
            for _ in range(POLLS):
                r = await c.call_tool("echo", {"message": "gh run view 42"})
                seen["calls"] += 1
                seen["blocks"] += int(bool(r.is_error) and any("loopguard" in x.text for x in r.content if x.type == "text"))
            r = await c.call_tool("echo", {"message": "something else"})
            seen["calls"] += 1
            seen["blocks"] += int(bool(r.is_error))
        await anyio.sleep(0.5)  # a scrape or so per round


def main():
    up, mine, prom = free_port(), free_port(), free_port()
    config = os.path.join(WORK, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: loopguard\n    metrics_path: /metrics\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{mine}']\n")
    log = lambda name: open(os.path.join(WORK, name), "w")  # noqa: E731
    procs = [
        ("server-everything", up, subprocess.Popen([NODE, EVERYTHING, "streamableHttp"], env=dict(os.environ, PORT=str(up)),
                                                   stdout=log("everything.log"), stderr=subprocess.STDOUT)),
        ("loopguard mcp", mine, subprocess.Popen([LOOPGUARD, "mcp", "--listen", f"127.0.0.1:{mine}",
                                                  "--upstream", f"http://127.0.0.1:{up}/mcp"], stderr=log("proxy.log"))),
        ("prometheus", prom, subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={WORK}/tsdb",
                                               f"--web.listen-address=127.0.0.1:{prom}"], stdout=log("prometheus.log"),
                                              stderr=subprocess.STDOUT)),
    ]
    try:
        for what, port, proc in procs:
            wait_port(port, proc, what)
        seen = {"calls": 0, "blocks": 0}
        started = time.time()
        anyio.run(loop, f"http://127.0.0.1:{mine}/mcp", seen)
        looped = time.time() - started
        if seen["blocks"] == 0:
            raise SystemExit("metrics: the client saw no block; nothing to count")
        # Prometheus catches up within a scrape interval or two after the loop.
        promql = 'sum(loopguard_decisions_total{host="mcp",kind="tool_call",action="block"})'
        deadline, got = time.time() + 30, None
        while time.time() < deadline:
            got = query(prom, promql)
            if got == seen["blocks"]:
                break
            time.sleep(0.5)
        calls = query(prom, 'sum(loopguard_decisions_total{host="mcp",kind="tool_call"})')
        scrapes = query(prom, 'count_over_time(up{job="loopguard"}[5m])')
        if got != seen["blocks"] or calls != seen["calls"]:
            raise SystemExit(f"metrics: FAIL {promql} = {got} (the client saw {seen['blocks']} blocks); "
                             f"tool calls {calls} (the client made {seen['calls']})")
        print(f"metrics: Prometheus scraped loopguard mcp --listen {int(scrapes or 0)} times (1 s interval) around a "
              f"{looped:.1f} s loop; {promql} = {int(got)} = the blocks the client saw, of {seen['calls']} calls")
    finally:
        for _, _, proc in procs:
            proc.terminate()
        for _, _, proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
