"""Three loopguard replicas sharing a real Valkey/Redis Cluster (docs/SCALING.md, "Cluster").

  parity    the seeded storm of storm.py through `redis+cluster://` (3 primaries, 3 replicas of
            `redis-server` on loopback, made by `redis-cli --cluster create`): every key's
            versions distinct, each verdict one node's replay in commit order.
  reshard   the same while the slots of the storm's keys move to another primary, one by one
            (the MIGRATING/IMPORTING protocol `redis-cli --cluster reshard` uses): the replicas
            follow MOVED and ASK; every decision on the store, verdicts one node's.
  hosts     one conversation decided in turn by the CLI, the Node package and the Python package
            on the cluster (their conformance hosts, tests/store-conformance): they share its pair
            budget, so the 4th message is suppressed whichever host decides it.
  failover  a primary holding storm keys is killed mid-storm and its replica promoted: every
            event gets exactly one decision, on the store or on local state within the deadline,
            the store is used again after the failover, and the counters say what happened.

usage: cluster.py --bin target/debug/loopguard --node NODE --python PYTHON [--seed N]
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import storm  # noqa: E402


class Cluster:
    """Six redis-servers in cluster mode on loopback (persistence off), three primaries with one
    replica each; `url` is the store URL of all six, `cli` runs on the first node (-c: follows
    redirections)."""

    def __init__(self, folder):
        self.folder, self.certs = folder, None
        self.nodes = [harness.Redis() for _ in range(6)]

    def start(self):
        for n in self.nodes:
            n.proc = subprocess.Popen(
                ["redis-server", "--port", str(n.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--cluster-enabled", "yes", "--cluster-config-file", os.path.join(self.folder, f"nodes-{n.port}.conf"),
                 # the bus port by default is port + 10000, past 65535 for an ephemeral port
                 "--cluster-port", str(harness.free_port()), "--cluster-node-timeout", "1000", "--loglevel", "warning", "--dir", self.folder],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for n in self.nodes:
            self._wait(lambda n=n: n.cli("PING") == "PONG", f"node {n.port} answers")
        hosts = [f"127.0.0.1:{n.port}" for n in self.nodes]
        out = subprocess.run(["redis-cli", "--cluster", "create", *hosts, "--cluster-replicas", "1", "--cluster-yes"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        self._wait(self.healthy, "the cluster is ok on every node")
        return self

    def healthy(self):
        return all("cluster_state:ok" in n.cli("CLUSTER", "INFO") for n in self.nodes if n.proc.poll() is None)

    @staticmethod
    def _wait(ok, what, seconds=60):
        end = time.time() + seconds
        while time.time() < end:
            try:
                if ok():
                    return
            except (OSError, subprocess.SubprocessError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"timed out waiting until {what}")

    @property
    def url(self):
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def tls_args(self):
        return ()

    def cli(self, *args):
        out = subprocess.run(["redis-cli", "-c", "-p", str(self.live().port), "--raw", *args], capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip()

    def live(self):
        return next(n for n in self.nodes if n.proc.poll() is None)

    def topology(self):
        """{node id: (node, role, slots)} from CLUSTER NODES."""
        by_port = {n.port: n for n in self.nodes}
        out = {}
        for line in self.live().cli("CLUSTER", "NODES").splitlines():
            f = line.split()
            port = int(f[1].split(":")[1].split("@")[0])
            slots = set()
            for r in f[8:]:
                if r.startswith("["):
                    continue
                lo, _, hi = r.partition("-")
                slots.update(range(int(lo), int(hi or lo) + 1))
            out[f[0]] = (by_port[port], "master" if "master" in f[2] else "slave", slots, "fail" in f[2])
        return out

    def owner(self, slot):
        return next(i for i, (_, role, slots, failed) in self.topology().items()
                    if role == "master" and slot in slots and not failed)

    def move_slot(self, slot, to):
        """Moves one slot and its keys to primary `to`, as `redis-cli --cluster reshard` does."""
        topo = self.topology()
        src_id = self.owner(slot)
        src, dst = topo[src_id][0], topo[to][0]
        assert dst.cli("CLUSTER", "SETSLOT", str(slot), "IMPORTING", src_id) == "OK"
        assert src.cli("CLUSTER", "SETSLOT", str(slot), "MIGRATING", to) == "OK"
        while keys := src.cli("CLUSTER", "GETKEYSINSLOT", str(slot), "100").split():
            out = src.cli("MIGRATE", "127.0.0.1", str(dst.port), "", "0", "5000", "KEYS", *keys)
            assert out in ("OK", "NOKEY"), out
        for _, (n, role, _, _) in topo.items():
            if role == "master":
                n.cli("CLUSTER", "SETSLOT", str(slot), "NODE", to)

    def stop(self):
        for n in self.nodes:
            n.kill()


def storm_slots(cluster, prefix, events):
    """The slots of the storm's keys (each key's hash tag is its state key)."""
    keys = set()
    for e in events:
        ev = json.loads(e)
        keys.add(f'bot["T1","{ev["conversation"]}"]' if ev["kind"] == "bot_message" else f'session["{ev["session"]}"]')
    return sorted({int(cluster.live().cli("CLUSTER", "KEYSLOT", prefix + "{" + k + "}")) for k in keys})


def reshard(binary, cfg, cluster, seed, tmp):
    events, tags = harness.storm(seed)
    routed = harness.route(events, tags, "random", seed)
    plain = [[line for _, line in r] for r in routed]
    prefix = f"lg:reshard{seed}:"
    slots = storm_slots(cluster, prefix, events)
    moved = []

    def during(replica, j):
        # From a tenth of the way in, replica 0's feeder moves one storm slot every few lines.
        if replica == 0 and j >= len(plain[0]) // 10 and j % 5 == 0 and len(moved) < len(slots):
            slot = slots[len(moved)]
            masters = [i for i, (_, role, _, _) in cluster.topology().items() if role == "master"]
            to = next(m for m in masters if m != cluster.owner(slot))
            cluster.move_slot(slot, to)
            moved.append((slot, to))

    replicas = harness.run_replicas(binary, cfg, plain, cluster.url, prefix, pace=0.004, during=during,
                                    extra=storm.PATIENT)
    assert len(moved) == len(slots), f"moved {len(moved)} of the storm's {len(slots)} slots"
    rows = storm.deliveries(routed, replicas)
    vias = collections.Counter(d["store"]["via"] for _, _, d, _ in rows)
    # A slot's new owner is told to each primary in turn: a client that reads the slots from one
    # not told yet is sent back and forth, and after its retries that decision is made on local
    # state (said once per episode). Those are few; the store's own history stays one node's.
    said = [line for r in replicas for line in r.err if line.startswith("loopguard:") and "failed" in line]
    assert vias["refused"] == 0 and vias["local"] <= 0.05 * len(rows), f"{vias}; the replicas said: {said[:6]}"
    for k, r in enumerate(replicas):
        tail = [d["store"]["via"] for d in r.decisions()[-10:]]
        assert tail == ["store"] * 10, f"replica {k} is on the store at the end: {tail}"
    storm.check_commit_order(binary, cfg, [row for row in rows if row[2]["store"]["via"] == "store"], tmp)
    retries = sum(r.stats()["cas_retries"] for r in replicas)
    reasons = sorted({line.split("(store ")[1].split(":")[0] for line in said if "(store " in line})
    print(f"reshard: {len(rows)} deliveries while {len(slots)} slots moved primary: {dict(vias)} (local: {reasons}), "
          f"{retries} CAS retries; the store's decisions equal one node's replay in commit order")


def hosts(binary, node, python, cluster, tmp):
    cfg = os.path.join(tmp, "pair3.json")
    with open(cfg, "w") as f:
        json.dump({"channels": {"defaults": {"botLoopProtection": {"maxEventsPerWindow": 3}}}}, f)
    conformance = os.path.join(harness.ROOT, "tests", "store-conformance")
    store = ("--store", cluster.url, "--store-prefix", "lg:hosts:", "--store-deadline-ms", "2000")
    commands = {
        "cli": [binary, "replay", "--config", cfg, *store, "-"],
        "node": [node, os.path.join(conformance, "node-host.mjs"), "--config", cfg, *store],
        "python": [python, os.path.join(conformance, "python-host.py"), "--config", cfg, *store],
    }
    turns = ["cli", "node", "python", "cli", "node", "python"]
    got = []
    for i, host in enumerate(turns):
        event = json.dumps(harness.bot("shared", "ab"[i % 2], "ba"[i % 2], 1_000_000 + i * 1000))
        out = subprocess.run(commands[host], input=event + "\n", capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, f"{host}: {out.stderr[-2000:]}"
        first = json.loads(out.stdout.splitlines()[0])
        line = first["decision"] if host != "cli" else json.dumps(first)
        via = {"cli": lambda: first["store"]["via"], "node": lambda: first["via"],
               "python": lambda: "store" if first["health"]["store_on_store"] == 1 else "not store"}[host]()
        got.append((host, json.loads(line)["action"], via))
    actions = [a for _, a, _ in got]
    assert actions == ["allow", "allow", "allow", "suppress", "suppress", "suppress"], got
    assert all(v == "store" for _, _, v in got), got
    print(f"hosts: one conversation on the cluster, decided in turn by {', '.join(turns)}: {actions}")


def failover(binary, cfg, cluster, seed):
    events, tags = harness.storm(seed, per_pair=200, per_burst=150, per_session=80)
    routed = harness.route(events, tags, "random", seed)
    plain = [[line for _, line in r] for r in routed]
    prefix = f"lg:failover{seed}:"
    slots = storm_slots(cluster, prefix, events)
    by_owner = collections.Counter(cluster.owner(s) for s in slots)
    victim_id = by_owner.most_common(1)[0][0]
    victim = cluster.topology()[victim_id][0]
    # its replica: the node whose CLUSTER NODES line names the victim as its primary
    heir = next(line.split()[1].split(":")[1].split("@")[0] for line in cluster.live().cli("CLUSTER", "NODES").splitlines()
                if line.split()[3] == victim_id)
    killed = []

    def during(replica, j):
        if replica == 0 and j == len(plain[0]) // 3 and not killed:
            victim.kill()
            killed.append(time.time())

    replicas = harness.run_replicas(binary, cfg, plain, cluster.url, prefix, pace=0.01, during=during,
                                    extra=("--store-deadline-ms", "500"))
    assert killed, "the primary was killed"
    promoted = {n.port: s for n, role, s, failed in cluster.topology().values() if role == "master" and not failed}
    assert int(heir) in promoted and set(slots) & promoted[int(heir)], f"replica {heir} took over the killed primary's slots"
    rows = storm.deliveries(routed, replicas)
    vias = collections.Counter(d["store"]["via"] for _, _, d, _ in rows)
    stats = [r.stats() for r in replicas]
    for k, (r, s) in enumerate(zip(replicas, stats)):
        assert s["decisions"] == len(plain[k]), s
        tail = [d["store"]["via"] for d in r.decisions()[-20:]]
        assert tail == ["store"] * 20, f"replica {k} is back on the store at the end: {tail}"
    assert vias["refused"] == 0 and vias["store"] + vias["local"] == len(rows), vias
    print(f"failover: primary {victim.port} ({by_owner[victim_id]} of {len(slots)} storm slots) killed; "
          f"{len(rows)} deliveries, each decided once: {dict(vias)}; episodes per replica "
          f"{[s['episodes'] for s in stats]}; p99 of a decision {[s['p99_us'] for s in stats]} us; its replica {heir} "
          f"was promoted and serves them")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--node", default=os.environ.get("NODE", "node"))
    ap.add_argument("--python", default=sys.executable, help="a Python with the loopguard package installed")
    ap.add_argument("--seed", type=int, default=61)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = harness.write_config(tmp)
        cluster = Cluster(tmp).start()
        try:
            print(f"cluster of 6 redis-servers on {','.join(str(n.port) for n in cluster.nodes)} (3 primaries, 3 replicas)")
            storm.parity(binary, cfg, cluster, a.seed, "random", tmp)
            reshard(binary, cfg, cluster, a.seed + 1, tmp)
            hosts(binary, a.node, a.python, cluster, tmp)
            failover(binary, cfg, cluster, a.seed + 2)
        finally:
            cluster.stop()
    print(f"cluster: all passed in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
