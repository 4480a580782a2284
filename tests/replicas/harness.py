"""The pieces of the multi-replica tests (docs/SCALING.md): a real redis-server on 127.0.0.1, loopguard
replicas reading events on stdin, and a seeded storm of bot and tool events.

Used by tests/replicas/storm.py (the tests) and scripts/bench-store.py (the figures). Standard
library only; the server is Debian's redis-server (scripts/setup-redis.sh).
"""

import json
import os
import random
import signal
import socket
import subprocess
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certs(folder):
    """Test certificates in `folder` (tests/replicas/make-certs.sh says which): their paths."""
    subprocess.run(["bash", os.path.join(ROOT, "tests", "replicas", "make-certs.sh"), folder], check=True, timeout=60)
    files = {"ca": "ca.pem", "server": "server.pem", "server_key": "server.key", "client": "client.pem",
             "client_key": "client.key", "other_ca": "other-ca.pem"}
    return {k: os.path.join(folder, name) for k, name in files.items()}


class Redis:
    """A redis-server of our own: loopback, persistence off, stopped by PID. With `certs` (from
    make_certs) it speaks TLS only and asks every client for a certificate."""

    def __init__(self, port=None, certs=None):
        self.port = port or free_port()
        self.proc = None
        self.certs = certs

    def start(self):
        listen = ["--port", str(self.port)]
        if self.certs:
            c = self.certs
            listen = ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", c["server"], "--tls-key-file",
                      c["server_key"], "--tls-ca-cert-file", c["ca"], "--tls-auth-clients", "yes"]
        self.proc = subprocess.Popen(
            ["redis-server", *listen, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--protected-mode", "yes", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30  # a busy machine starts it slowly; only one that never answers fails
        while time.time() < deadline:
            try:
                if self.cli("PING") == "PONG":
                    return self
            except (OSError, subprocess.SubprocessError):
                pass
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    @property
    def url(self):
        return f"{'rediss' if self.certs else 'redis'}://127.0.0.1:{self.port}"

    def tls_args(self):
        """The replica's options for this server's TLS: its CA and the client certificate."""
        c = self.certs
        return ("--store-ca", c["ca"], "--store-cert", c["client"], "--store-key", c["client_key"]) if c else ()

    def cli(self, *args):
        tls = []
        if self.certs:
            c = self.certs
            tls = ["--tls", "--cacert", c["ca"], "--cert", c["client"], "--key", c["client_key"]]
        out = subprocess.run(["redis-cli", "-p", str(self.port), *tls, "--raw", *args], capture_output=True, text=True,
                             timeout=5)
        return out.stdout.strip()

    def signal(self, sig):
        os.kill(self.proc.pid, sig)

    def kill(self):
        """Kills the server (SIGKILL, by PID) and waits for it."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    stop = kill


class Replica:
    """One `loopguard replay --store … -` process; lines go in one at a time, decisions come out."""

    def __init__(self, binary, config_path, store, prefix, extra=()):
        args = [binary, "replay", "--config", config_path, "--store", store, "--store-prefix", prefix, *extra, "-"]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.out = []
        self.err = []
        self._threads = [threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True)]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(stream, into):
        for line in stream:
            into.append(line)

    def feed(self, lines, pace=0.0, on_line=None):
        """Writes lines (pace seconds apart), then closes stdin."""
        for i, line in enumerate(lines):
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            if on_line:
                on_line(i)
            if pace:
                time.sleep(pace)
        self.proc.stdin.close()

    def finish(self, timeout=120):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # not left running after the run failed
            raise
        for t in self._threads:
            t.join(timeout=10)
        return code

    def decisions(self):
        return [json.loads(line) for line in self.out]

    def stats(self):
        for line in reversed(self.err):
            if line.startswith('{"store"'):
                return json.loads(line)["store"]
        return None


def run_replicas(binary, config_path, routed, store, prefix, extra=(), pace=0.0, during=None):
    """Feeds routed[i] (lists of event lines) to replica i, all at once; returns the replicas.

    `during(replica_index, line_index)` is called after each line written (for fault injection)."""
    replicas = [Replica(binary, config_path, store, prefix, extra) for _ in routed]
    feeders = [threading.Thread(target=r.feed, args=(lines, pace, (lambda j, i=i: during(i, j)) if during else None))
               for i, (r, lines) in enumerate(zip(replicas, routed))]
    for f in feeders:
        f.start()
    for f in feeders:
        f.join()
    codes = [r.finish() for r in replicas]
    for i, (r, code) in enumerate(zip(replicas, codes)):
        if code != 0:
            raise AssertionError(f"replica {i} exited {code}: {''.join(r.err)[-2000:]}")
    return replicas


def run_lockstep(binary, config_path, routed, store, prefix, extra=()):
    """Delivers routed[k] = [(event index, line)] one event at a time in event order, each to its
    replica, waiting for its decision before the next: the commit order is the storm's order."""
    replicas = [Replica(binary, config_path, store, prefix, extra) for _ in routed]
    order = sorted((i, n, k, line) for k, lines in enumerate(routed) for n, (i, line) in enumerate(lines))
    for _, _, k, line in order:
        r, want = replicas[k], len(replicas[k].out) + 1
        r.proc.stdin.write(line + "\n")
        r.proc.stdin.flush()
        deadline = time.time() + 30
        while len(r.out) < want:
            if time.time() > deadline or r.proc.poll() is not None:
                raise AssertionError(f"replica {k} gave no decision: {''.join(r.err)[-2000:]}")
            time.sleep(0.0002)
    for r in replicas:
        r.proc.stdin.close()
    for k, r in enumerate(replicas):
        if r.finish() != 0:
            raise AssertionError(f"replica {k} failed: {''.join(r.err)[-2000:]}")
    return replicas


# --- the storm -------------------------------------------------------------------------------------

CONFIG = {
    "channels": {"defaults": {"botLoopProtection": {"maxConversationBotEvents": 30}}},
    "tools": {"loopDetection": {"enabled": True}},
}


def write_config(folder, doc=None):
    """The storm's config (or `doc`) as a file in `folder`: its path."""
    path = os.path.join(folder, "config.json")
    with open(path, "w") as f:
        json.dump(CONFIG if doc is None else doc, f)
    return path


def bot(conv, sender, receiver, ts, event_id=None):
    e = {"kind": "bot_message", "channel": "slack", "account": "T1", "conversation": conv, "sender": sender,
         "receiver": receiver, "ts_ms": ts}
    if event_id:
        e["event_id"] = event_id
    return e


def storm(seed, pairs=6, bursts=3, sessions=4, per_pair=120, per_burst=90, per_session=45, skew_ms=1500):
    """A seeded storm: (events, tags) where tags[i] says what event i is ('pair', 'burst', 'tool').

    Pair storms: two bots answering each other every ~400 ms (timestamps jittered by up to
    `skew_ms`, so they arrive out of order). Burst storms: three senders to one receiver. Tool
    sessions: the same call over and over. About one event in eight carries an event id that a
    second replica receives again (a Slack retry)."""
    rng = random.Random(seed)
    streams = []
    for p in range(pairs):
        conv, base = f"pair-{p}", 1_000_000 + rng.randrange(10_000)
        s = [bot(conv, "botA" if i % 2 == 0 else "botB", "botB" if i % 2 == 0 else "botA",
                 base + 400 * i + rng.randrange(-skew_ms, skew_ms + 1), f"{conv}-e{i}") for i in range(per_pair)]
        streams.append([("pair", e) for e in s])
    for b in range(bursts):
        conv, base = f"burst-{b}", 2_000_000 + rng.randrange(10_000)
        s = [bot(conv, ["p", "q", "r"][i % 3], "me", base + 400 * i + rng.randrange(-skew_ms, skew_ms + 1),
                 f"{conv}-e{i}") for i in range(per_burst)]
        streams.append([("burst", e) for e in s])
    for t in range(sessions):
        s = [{"kind": "tool_call", "session": f"sess-{t}", "tool": "read",
              "args": {"path": "/same" if i % 5 else f"/other{i}"}} for i in range(per_session)]
        streams.append([("tool", e) for e in s])
    # Interleave the streams at random, keeping each stream's own order.
    events, cursors = [], [0] * len(streams)
    while any(c < len(s) for c, s in zip(cursors, streams)):
        live = [i for i, s in enumerate(streams) if cursors[i] < len(s)]
        i = rng.choice(live)
        events.append(streams[i][cursors[i]])
        cursors[i] += 1
    return [json.dumps(e, separators=(",", ":")) for _, e in events], [t for t, _ in events]


def route(events, tags, mode, seed, replicas=3):
    """Assigns events to replicas: 'random' (a load balancer) or 'hash' (sticky by conversation);
    tool sessions alternate replicas call by call in both modes; an event with an id is delivered
    a second time, to another replica, with probability 1/8. Returns routed lists of (index, line)."""
    rng = random.Random(seed * 7 + 1)
    routed = [[] for _ in range(replicas)]
    calls = {}
    for i, (line, tag) in enumerate(zip(events, tags)):
        e = json.loads(line)
        if tag == "tool":
            n = calls.get(e["session"], 0)
            calls[e["session"]] = n + 1
            target = (n + hash_of(e["session"])) % replicas
        elif mode == "hash":
            target = hash_of(e["conversation"]) % replicas
        else:
            target = rng.randrange(replicas)
        routed[target].append((i, line))
        if "event_id" in e and rng.randrange(8) == 0:
            routed[(target + 1 + rng.randrange(replicas - 1)) % replicas].append((i, line))
    return routed


def hash_of(s):
    return sum(s.encode()) * 2654435761 % 4294967296
