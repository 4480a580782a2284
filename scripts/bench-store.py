#!/usr/bin/env python3
"""The shared-store figures (docs/SCALING.md), against a real redis-server on loopback.

  decisions  three replicas (`loopguard replay --store redis://…`, each its own trace file) deciding
             at once over many conversations and sessions: p50/p99 of one decision (as each
             replica measures it: decide, compare-and-set, again on a conflict) and decisions per
             second each.
  round trips  the commands clients sent per decision, as the server's MONITOR shows them,
             with each replica on keys of its own (sticky routing, or keys spread by the balancer)
             and with all three on the same keys (every key's events dealt to any replica).
  one key    three replicas hammering one conversation: CAS retries per decision (the worst case).
  cluster    (--cluster) the decisions figure on a Valkey/Redis Cluster of six redis-servers.
  memory     store memory per active conversation (a pair at a full default window; a burst bucket
             of three senders) and per active session (a full default tool history), from
             `INFO memory` over 1,000 keys and `MEMORY USAGE` of one.

usage: scripts/bench-store.py [--bin target/release/loopguard] [--events N] [--runs 2] [--round-trips | --cluster]
Needs redis-server (scripts/setup-redis.sh). Prints one JSON line per figure and a summary.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "replicas"))
import harness  # noqa: E402

TOOL_CONFIG = {"tools": {"loopDetection": {"enabled": True}}}
BURST_CONFIG = {"channels": {"defaults": {"botLoopProtection": {"maxConversationBotEvents": 30}}}}


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def config(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def run_three(binary, cfg, traces, url, prefix, *extra):
    """Runs one replica per trace file, all at once; returns their stats lines."""
    procs = [subprocess.Popen([binary, "replay", "--config", cfg, "--store", url, "--store-prefix", prefix, *extra, t],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for t in traces]
    stats = []
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        stats.append(json.loads([line for line in err.splitlines() if line.startswith('{"store"')][-1])["store"])
    return stats


def mixed_trace(seed, n, own=""):
    """n events: bot messages over 2,000 conversations and tool calls over 500 sessions (named
    with `own` in front: keys no other replica's trace has)."""
    import random
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if rng.randrange(4) == 0:
            out.append(json.dumps({"kind": "tool_call", "session": f"{own}s{rng.randrange(500)}", "tool": "read",
                                   "args": {"path": f"/f{rng.randrange(20)}"}}))
        else:
            a, b = rng.sample(["b1", "b2", "b3", "b4"], 2)
            out.append(json.dumps(harness.bot(f"{own}c{rng.randrange(2000)}", a, b, 1_000_000 + i * 10)))
    return out


def decisions(binary, tmp, url, events, run):
    cfg = config(tmp, "tool.json", TOOL_CONFIG)
    traces = []
    for r in range(3):
        path = os.path.join(tmp, f"mixed{r}.jsonl")
        write(path, mixed_trace(100 * run + r, events))
        traces.append(path)
    stats = run_three(binary, cfg, traces, url, f"lg:bench{run}:")
    row = {"figure": "decisions", "run": run, "replicas": [
        {k: s[k] for k in ("decisions", "p50_us", "p99_us", "per_s", "cas_retries", "on_local")} for s in stats]}
    print(json.dumps(row))
    return stats


def monitored(redis, run):
    """Runs `run()` while the server's MONITOR is read; returns (its result, the commands clients
    sent: every line MONITOR shows but the ones a script ran)."""
    out = tempfile.TemporaryFile()
    mon = subprocess.Popen(["redis-cli", "-p", str(redis.port), "MONITOR"], stdout=out, stderr=subprocess.DEVNULL)
    try:
        result = run()
        # MONITOR's last lines may still be on their way.
        redis.cli("PING")
        time.sleep(0.5)
    finally:
        mon.terminate()
        mon.wait()
    out.seek(0)
    lines = out.read().decode("utf-8", "replace").splitlines()
    return result, sum(1 for line in lines if " [" in line and "lua]" not in line and '"PING"' not in line)


def round_trips(binary, tmp, redis, events):
    cfg = config(tmp, "tool.json", TOOL_CONFIG)
    rows = []
    for layout in ("own keys", "shared keys"):
        traces = []
        for r in range(3):
            path = os.path.join(tmp, f"rt{r}.jsonl")
            write(path, mixed_trace(7 + r, events, f"r{r}" if layout == "own keys" else ""))
            traces.append(path)
        # MONITOR slows the server: a generous deadline keeps every decision on the store.
        stats, sent = monitored(redis, lambda: run_three(binary, cfg, traces, redis.url, f"lg:rt:{layout[0]}:",
                                                         "--store-deadline-ms", "2000"))
        total = sum(s["decisions"] for s in stats)
        row = {"figure": "round trips", "layout": layout, "decisions": total,
               "commands_per_decision": round(sent / total, 3),
               "cas_retries": sum(s["cas_retries"] for s in stats), "on_local": sum(s["on_local"] for s in stats)}
        print(json.dumps(row))
        rows.append(row)
    return rows


def one_key(binary, tmp, url, events):
    cfg = config(tmp, "default.json", {})
    traces = []
    for r in range(3):
        path = os.path.join(tmp, f"onekey{r}.jsonl")
        write(path, [json.dumps(harness.bot("hot", "b1", "b2", 1_000_000 + 3 * i + r, f"r{r}-{i}"))
                     for i in range(events)])
        traces.append(path)
    stats = run_three(binary, cfg, traces, url, "lg:onekey:")
    total = sum(s["decisions"] for s in stats)
    retries = sum(s["cas_retries"] for s in stats)
    row = {"figure": "one key", "decisions": total, "cas_retries": retries, "retries_per_decision":
           round(retries / total, 3), "p50_us": [s["p50_us"] for s in stats], "p99_us": [s["p99_us"] for s in stats],
           "on_local": sum(s["on_local"] for s in stats)}
    print(json.dumps(row))
    return row


def memory(binary, tmp, redis):
    """Bytes per key: (used_memory after − before) / 1000 keys, and MEMORY USAGE of one key."""
    cases = {
        "conversation, one pair at a full default window (20 events)": (
            {}, lambda k: [json.dumps(harness.bot(f"m{k}", ["x", "y"][i % 2], ["y", "x"][i % 2], 1000 + i, f"e{i}"))
                           for i in range(20)], 'bot["T1","m{}"]'),
        "conversation, burst budget 30 with three senders (30 events)": (
            BURST_CONFIG, lambda k: [json.dumps(harness.bot(f"m{k}", "pqr"[i % 3], "me", 1000 + i, f"e{i}"))
                                     for i in range(30)], 'bot["T1","m{}"]'),
        "session, a full default tool history (30 calls)": (
            TOOL_CONFIG, lambda k: [json.dumps({"kind": "tool_call", "session": f"m{k}", "tool": "exec",
                                                "args": {"command": f"ls /tmp/{i}"}}) for i in range(30)],
            'session["m{}"]'),
    }
    rows = []
    for n, (name, (doc, lines, key)) in enumerate(cases.items()):
        cfg = config(tmp, f"mem{n}.json", doc)
        redis.cli("FLUSHALL")
        before = int(redis.cli("INFO", "memory").split("used_memory:")[1].split()[0])
        path = os.path.join(tmp, f"mem{n}.jsonl")
        write(path, [line for k in range(1000) for line in lines(k)])
        # A generous deadline: every key must land in the store to be measured.
        out = subprocess.run([binary, "replay", "--config", cfg, "--store", redis.url, "--store-prefix", "lg:1:",
                              "--store-deadline-ms", "2000", path], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        after = int(redis.cli("INFO", "memory").split("used_memory:")[1].split()[0])
        one = "lg:1:{" + key.format(7) + "}"
        row = {"figure": "memory", "case": name, "keys": int(redis.cli("DBSIZE")),
               "bytes_per_key": round((after - before) / 1000), "memory_usage_one_key": int(redis.cli(
                   "MEMORY", "USAGE", one)), "value_bytes": int(redis.cli("STRLEN", one))}
        print(json.dumps(row))
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(harness.ROOT, "target", "release", "loopguard"))
    ap.add_argument("--events", type=int, default=20_000, help="events per replica")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--round-trips", action="store_true", help="only the round-trips figure")
    ap.add_argument("--cluster", action="store_true",
                    help="only the decisions figure, on a cluster of six redis-servers (tests/replicas/cluster.py)")
    a = ap.parse_args()
    if a.cluster:
        import cluster  # tests/replicas, on the path above
        with tempfile.TemporaryDirectory() as tmp:
            c = cluster.Cluster(tmp).start()
            try:
                runs = [decisions(a.bin, tmp, c.url, a.events, run) for run in range(a.runs)]
            finally:
                c.stop()
        for r, stats in enumerate(runs):
            print(f"  cluster, run {r + 1}: p50 {[s['p50_us'] for s in stats]} us, p99 {[s['p99_us'] for s in stats]} us, "
                  f"{[s['per_s'] for s in stats]} decisions/s per replica, CAS retries {[s['cas_retries'] for s in stats]}, "
                  f"local {[s['on_local'] for s in stats]}")
        return
    if a.round_trips:
        redis = harness.Redis().start()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for t in round_trips(a.bin, tmp, redis, a.events):
                    print(f"  round trips, {t['layout']}: {t['commands_per_decision']} commands per decision")
        finally:
            redis.stop()
        return
    redis = harness.Redis().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runs = [decisions(a.bin, tmp, redis.url, a.events, run) for run in range(a.runs)]
            trips = round_trips(a.bin, tmp, redis, a.events)
            hot = one_key(a.bin, tmp, redis.url, a.events // 4)
            mem = memory(a.bin, tmp, redis)
    finally:
        redis.stop()
    print("summary (3 replicas, loopback redis-server "
          f"{subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]}):")
    for r, stats in enumerate(runs):
        print(f"  run {r + 1}: p50 {[s['p50_us'] for s in stats]} us, p99 {[s['p99_us'] for s in stats]} us, "
              f"{[s['per_s'] for s in stats]} decisions/s per replica")
    for t in trips:
        print(f"  round trips, {t['layout']}: {t['commands_per_decision']} commands per decision "
              f"({t['cas_retries']} CAS retries in {t['decisions']} decisions)")
    print(f"  one key: {hot['retries_per_decision']} CAS retries per decision, p50 {hot['p50_us']} us, "
          f"p99 {hot['p99_us']} us")
    for m in mem:
        print(f"  {m['case']}: {m['bytes_per_key']} B per key (MEMORY USAGE {m['memory_usage_one_key']} B, "
              f"value {m['value_bytes']} B)")


if __name__ == "__main__":
    main()
