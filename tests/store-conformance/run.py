"""The store conformance suite: the store faults of scenarios.json (down, slow, a conflict storm,
an unreadable value, TLS failures) driven through the three store loops by their public APIs,
each expected to give the table's decisions and counters (docs/SCALING.md):

  rust     `loopguard replay --store URL … -` (host/src/store/decide.rs)
  node     StoredLoopGuard's decide() and stats() (packages/node/lib/stored.js), via node-host.mjs
  python   LoopGuard(store=…)'s apply_events() and health() (the native StoredGuard), via python-host.py

Each host runs as a process reading one event a line and answering each before the next (the
faults act between two events); each (scenario, host) gets a fresh redis-server. The table holds
the expectations, written by hand; nothing here computes them. observe() is the one place where
the hosts' spellings of decisions and counters are brought to the docs/SCALING.md names. The
verdicts must also be the same across the hosts, field for field.

usage: run.py --bin target/debug/loopguard [--node NODE] [--python PYTHON] [--hosts rust,node,python]
              [--only SUBSTRING]
"""

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "replicas"))
import harness  # noqa: E402
from proxy import Proxy  # noqa: E402

# Far past any deadline of the table: only a host that never answers trips it.
HANG_S = 60
COUNTERS = ("on_store", "on_local", "refused", "cas_retries", "store_errors", "unreadable", "episodes", "degraded",
            "local_keys")


# --- the stores ---------------------------------------------------------------------------------

class Store:
    """The store of one run: `url`, the server (`redis`), the proxy if any, the host's TLS flags."""

    def __init__(self, scenario, certs):
        kind = scenario["store"]
        self.proxy, self.tls = None, ()
        self.redis = harness.Redis(certs=certs if kind == "tls" else None)
        if kind != "none":
            self.redis.start()
        self.url = self.redis.url
        if kind == "proxy":
            p = scenario.get("proxy", {})
            self.proxy = Proxy(self.redis.port, p.get("lose_writes"))
            self.slow_s = p.get("slow_ms", 0) / 1000
            self.url = f"redis://127.0.0.1:{self.proxy.port}"
        if kind == "tls":
            client = {"ca+cert": (certs["ca"], certs["client"], certs["client_key"]), "ca": (certs["ca"], None, None),
                      "other-ca+cert": (certs["other_ca"], certs["client"], certs["client_key"])}[scenario["client"]]
            self.tls = [x for flag, f in zip(("--store-ca", "--store-cert", "--store-key"), client) if f
                        for x in (flag, f)]
        try:
            for command in scenario.get("setup", []):
                assert self.redis.cli(*command) == "OK", command
        except BaseException:
            self.close()  # no server left running when the setup fails
            raise

    def fault(self, what):
        if what == "start":
            self.redis.start()
        elif what == "slow":
            self.proxy.delay = self.slow_s
        elif what == "fast":
            self.proxy.delay = 0.0
        elif what == "calm":
            self.proxy.lose = None
        else:
            raise ValueError(f"scenarios.json: unknown fault {what!r}")

    def close(self):
        if self.proxy:
            self.proxy.close()
        self.redis.stop()


# --- the hosts ----------------------------------------------------------------------------------

class Host:
    """One host process: a line in, one line out, in step."""

    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.out, self.err = [], []
        self.readers = [threading.Thread(target=self._read, args=(s, into), daemon=True)
                        for s, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self.readers:
            t.start()

    @staticmethod
    def _read(stream, into):
        for line in stream:
            into.append(line)

    def ask(self, line):
        want = len(self.out) + 1
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        end = time.monotonic() + HANG_S
        while len(self.out) < want:
            if time.monotonic() > end or self.proc.poll() is not None:
                raise AssertionError(f"no decision for {line}: {''.join(self.err)[-2000:]}")
            time.sleep(0.001)

    def finish(self):
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=HANG_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        for t in self.readers:
            t.join(timeout=10)
        assert code == 0, f"exited {code}: {''.join(self.err)[-2000:]}"


def command(host, paths, store, scenario, table, config_path):
    args = ["--config", config_path, "--store", store.url, "--store-prefix", table["prefix"]]
    for flag, value in scenario.get("options", {}).items():
        args += [f"--{flag}"] if value is True else [f"--{flag}", str(value)]
    args += store.tls
    return {"rust": [paths.bin, "replay", *args, "-"],
            "node": [paths.node, os.path.join(HERE, "node-host.mjs"), *args],
            "python": [paths.python, os.path.join(HERE, "python-host.py"), *args]}[host]


def verdict(line):
    """A decision line without its line number and store fields: what the gateway acts on."""
    if line is None:
        return None
    d = json.loads(line)
    return json.dumps({k: v for k, v in d.items() if k not in ("line", "store")}, sort_keys=True)


def observe(host, out, err):
    """What a host said, as ([(verdict, via)], counters by the docs/SCALING.md names): the one
    place where the hosts' spellings meet.

    rust    stdout: decision lines with "store":{"via"}; stderr's last line {"store":{counters}}
    node    {"decision","via"} a line, then {"stats":{camelCase counters}}
    python  {"decision","health"} a line (via: the store_on_store/store_on_local/store_refused
            counter that moved), then {"stats": health()}, counters prefixed `store_`, degraded 0/1
    """
    lines = [json.loads(line) for line in out]
    if host == "rust":
        decided = [(None if d["store"]["via"] == "refused" else verdict(json.dumps(d)), d["store"]["via"]) for d in lines]
        raw = next((json.loads(e)["store"] for e in reversed(err) if e.startswith('{"store"')), {})
    elif host == "node":
        decided = [(verdict(d["decision"]), d["via"]) for d in lines[:-1]]
        raw = {re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), k): v for k, v in lines[-1]["stats"].items()}
    else:
        moves = {"store_on_store": "store", "store_on_local": "local", "store_refused": "refused"}
        decided, before = [], {}
        for d in lines[:-1]:
            moved = [via for counter, via in moves.items() if d["health"][counter] > before.get(counter, 0)]
            decided.append((verdict(d["decision"]), "/".join(moved) or "none"))
            before = d["health"]
        raw = {k[len("store_"):]: v for k, v in lines[-1]["stats"].items() if k.startswith("store_")}
    counters = {k: raw[k] for k in COUNTERS if k in raw}
    if "degraded" in counters:
        counters["degraded"] = bool(counters["degraded"])
    return decided, counters


# --- one scenario -------------------------------------------------------------------------------

def server_us(store):
    """The store's clock (`TIME`) in microseconds."""
    seconds, micros = store.redis.cli("TIME").split()
    return int(seconds) * 1_000_000 + int(micros)


def run(host, paths, scenario, table, certs, config_path):
    """Runs `scenario` on `host`: (decisions, counters, stderr, problems of the store's contents)."""
    store = Store(scenario, certs)
    proc = None
    try:
        started_us = time.time_ns() // 1000  # the server runs on this machine, on its clock
        proc = Host(command(host, paths, store, scenario, table, config_path))
        for step in scenario["steps"]:
            name, _ = step.split(":", 1)
            if name == "fault":
                store.fault(step.split(":", 1)[1].strip())
                continue
            proc.ask(json.dumps(table["events"][name], separators=(",", ":")))
            time.sleep(scenario.get("pace_ms", 0) / 1000)
        proc.finish()
        problems = []
        for want in scenario.get("after", []):
            if "value" in want and (value := store.redis.cli("GET", want["key"])) != want["value"]:
                problems.append(f"the store holds {value!r} under {want['key']}, not {want['value']!r}")
            # the version header only (the blob after it is binary): the store's clock while the scenario ran
            if want.get("version") == "clock":
                v = store.redis.cli("GETRANGE", want["key"], "0", "15")
                if not (re.fullmatch(r"[0-9a-f]{16}", v) and started_us <= int(v, 16) <= server_us(store)):
                    problems.append(f"{want['key']} is at {v!r}, not a version of the store's clock since {started_us}")
        decided, counters = observe(host, proc.out, proc.err)
        return decided, counters, proc.err, problems
    finally:
        if proc and proc.proc.poll() is None:
            proc.proc.kill()
        store.close()


def check(scenario, decided, counters, err):
    """How a host's decisions and counters differ from the table."""
    problems = []
    events = [s for s in scenario["steps"] if not s.startswith("fault:")]
    if len(decided) != len(events):
        return [f"{len(events)} events in, {len(decided)} decisions out"]
    for step, (v, via) in zip(events, decided):
        name, want = (x.strip() for x in step.split(":", 1))
        got = "refused" if via == "refused" and v is None else f"{json.loads(v)['action'] if v else None} {via}"
        if got != want:
            problems.append(f"{name}: {got}, the table says {want}")
    for k, want in scenario["counters"].items():
        if k not in counters:
            problems.append(f"no counter {k}")
        elif isinstance(want, dict) and not counters[k] >= want["min"]:
            problems.append(f"{k} = {counters[k]!r}, the table says at least {want['min']}")
        elif not isinstance(want, dict) and counters[k] != want:
            problems.append(f"{k} = {counters[k]!r}, the table says {want!r}")
    if os.environ.get("CONFORMANCE_DEBUG"):  # the hosts' own words, when a scenario needs reading
        problems.append("stderr: " + "".join(err)[-3000:])
    if "panicked" in "".join(err):
        problems.append("panicked: " + "".join(err)[-1000:])
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the loopguard CLI")
    ap.add_argument("--node", default=os.environ.get("NODE", "node"))
    ap.add_argument("--python", default=sys.executable, help="a Python with the loopguard package installed")
    ap.add_argument("--hosts", default="rust,node,python")
    ap.add_argument("--only", default="", help="only the scenarios whose name contains this")
    paths = ap.parse_args()
    paths.bin = os.path.abspath(paths.bin)
    hosts = paths.hosts.split(",")
    with open(os.path.join(HERE, "scenarios.json")) as f:
        table = json.load(f)
    started, failures = time.time(), []
    with tempfile.TemporaryDirectory() as tmp:
        certs = harness.make_certs(tmp)
        config_path = os.path.join(tmp, "config.json")
        with open(config_path, "w") as f:
            json.dump(table["config"], f)
        for scenario in table["scenarios"]:
            if paths.only not in scenario["name"]:
                continue
            t0, verdicts, failed = time.time(), {}, set()
            for host in hosts:
                try:
                    decided, counters, err, problems = run(host, paths, scenario, table, certs, config_path)
                    problems += check(scenario, decided, counters, err)
                    verdicts[host] = [v for v, _ in decided]
                except AssertionError as e:
                    problems, counters = [str(e)], {}
                if problems:
                    failures.append((scenario["name"], host, problems, counters))
                    failed.add(host)
            # The verdicts field for field (a suppression's cooldown and budget too), host by host.
            first = next(iter(verdicts), None)
            for host, vs in verdicts.items():
                if diff := [i for i, (a, b) in enumerate(zip(vs, verdicts[first])) if a != b]:
                    failures.append((scenario["name"], host, [f"event {i}: {vs[i]} where {first} says "
                                                              f"{verdicts[first][i]}" for i in diff], {}))
                    failed.add(host)
            said = [f"{host} {'FAILED' if host in failed else 'ok'}" for host in hosts]
            print(f"{scenario['name']}: {', '.join(said)} ({time.time() - t0:.1f} s)", flush=True)
    for name, host, problems, counters in failures:
        print(f"FAILED {name} on {host}:\n  " + "\n  ".join(problems) + (f"\n  counters: {counters}" if counters else ""))
    print(f"store conformance: {'all passed' if not failures else f'{len(failures)} failures'} in "
          f"{time.time() - started:.1f} s ({', '.join(hosts)})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
