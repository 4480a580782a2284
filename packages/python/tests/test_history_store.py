"""The LiteLLM guardrail's cursors in a shared store (``_cursors``): two workers, each a
``HistoryReplay`` on a ``LoopGuard(store=…)`` of a real redis-server, take the requests of one
conversation in turn. Every request is checked against a full replay of its history on a guard of
its own (the behaviour without cursors); a worker that did not serve the last turns continues the
other's record and feeds only what is new. A record that does not read, and a store that is down,
cost a replay, never a wrong decision."""
import base64
import json
import os
import signal

import pytest

from loopguard import LoopGuard
from loopguard._replay import HistoryReplay
from test_history_nosession import TIGHT, Conversation, FullReplay, counted
from test_store import PATIENT, redis_url  # noqa: F401 (a fixture)


class Workers:
    """Two workers on one store, and the reference; requests dealt to the workers in turn."""

    def __init__(self, url, sid=None):
        self.guards = [LoopGuard(TIGHT, store=url, **PATIENT) for _ in range(2)]
        self.workers = [counted(HistoryReplay(g)) for g in self.guards]
        self.reference = FullReplay(LoopGuard(TIGHT))
        self.sid, self.rid, self.decided = sid, 0, []

    def turn(self, conv, worker):
        self.rid += 1
        rid, data, replay = f"r{self.rid}", conv.request(), self.workers[worker]
        before = len(replay.sizes)
        got, want = replay.start(rid, self.sid, data), self.reference.start(rid, self.sid, data)
        assert got == want, (conv.turn, worker)
        calls = conv.calls()
        got, want = replay.decide(rid, data, calls), self.reference.decide(rid, data, calls)
        assert got == want, (conv.turn, worker)
        self.decided += [v["action"] for v in got if v]
        conv.answer(calls, got)
        return replay.sizes[before:]

    def close(self):
        for g in self.guards:
            g.close()


@pytest.mark.parametrize("sid", [None, "session-7"])
def test_two_workers_continue_each_others_conversation_from_the_store(redis_url, sid):  # noqa: F811
    w = Workers(redis_url, sid)
    conv = Conversation("two", seed=11)
    try:
        for _ in range(30):  # worker 0 alone: the conversation grows long
            w.turn(conv, 0)
        fed = w.turn(conv, 1)  # worker 1 has never seen it
        assert max(fed) <= 4, f"worker 1 continued worker 0's record, feeding only what is new: {fed}"
        for i in range(40):  # then dealt to both in turn
            fed = w.turn(conv, i % 2)
            assert max(fed) <= 8, f"request {i}: only the turns the other worker served are fed: {fed}"
        assert {"warn", "block"} <= set(w.decided), "the script loops: the policy warned and blocked"
        counts = [r.store.counts for r in w.workers]
        assert counts[1]["continued"] >= 1 and all(c["written"] > 0 and c["failed"] == 0 for c in counts), counts
    finally:
        w.close()


def test_a_record_that_does_not_read_is_replayed_from_the_start_and_named(redis_url, capfd):  # noqa: F811
    w = Workers(redis_url)
    conv = Conversation("bad", seed=12)
    try:
        for _ in range(10):
            w.turn(conv, 0)
        store = w.workers[0].store
        key = next(iter(store.versions))
        stored = w.guards[0]._live()
        written, _, _ = stored.record_cas(key, store.versions[key], b'[{"format": 1, "key": 7}]')
        assert written
        fed = w.turn(conv, 1)
        assert sum(fed) > 10, f"worker 1 replayed the whole history: {fed}"
        err = capfd.readouterr().err
        assert f"the store's record {key}[0] does not read" in err and "verdicts is not an object" in err, err
        w.turn(conv, 0)  # and the record is whole again: worker 0 wrote it anew
        assert max(w.turn(conv, 1)) <= 8
    finally:
        w.close()


def test_a_record_whose_state_the_policy_cannot_read_is_replayed_from_the_start(redis_url, capfd):  # noqa: F811
    """A record another worker wrote with a newer policy (during a rolling upgrade) or a broken
    state: the policy refuses the blob, and the history is replayed instead."""
    w = Workers(redis_url, sid="s-upgrade")
    conv = Conversation("state", seed=14)
    try:
        for _ in range(10):
            w.turn(conv, 0)
        store, stored = w.workers[0].store, w.guards[0]._live()
        key = next(iter(store.versions))
        version, value = stored.record_get(key)
        record = json.loads(bytes(value))
        record["state"] = base64.b64encode(b"LGSNAP from a policy of 2030").decode()
        assert stored.record_cas(key, version, json.dumps(record).encode())[0]
        fed = w.turn(conv, 1)  # decided as a full replay (Workers.turn compares every verdict)
        assert sum(fed) > 10, f"worker 1 replayed the whole history: {fed}"
        assert "snapshot" in capfd.readouterr().err
    finally:
        w.close()


def test_with_the_store_down_each_worker_goes_on_with_its_own_cursors(capfd):
    from test_store import _free_port, _redis, _wait_for

    port = _free_port()
    proc = _redis(port)
    _wait_for(port)
    w = Workers(f"redis://127.0.0.1:{port}")
    conv = Conversation("down", seed=13)
    try:
        for i in range(6):
            w.turn(conv, i % 2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for i in range(20):  # every decision still that of a full replay
            w.turn(conv, i % 2)
        err = capfd.readouterr().err
        assert err.count("the guardrail goes on with this worker's own cursors") == 2, err  # once per worker
        assert all(r.store.counts["failed"] > 0 for r in w.workers)
    finally:
        w.close()
        if proc.poll() is None:
            proc.kill()
