"""``LoopGuard(store=...)``: two guards (two replicas) share one budget through a real
redis-server on 127.0.0.1 (docs/SCALING.md); with the store down a decision is made on local state.
Fails, never skips, when redis-server is not installed (scripts/setup-redis.sh installs it)."""

import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time

import pytest

from loopguard import LoopGuard, LoopGuardError

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ROOT = pathlib.Path(__file__).resolve().parents[3]


def _redis(port, *extra):
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed: run scripts/setup-redis.sh")
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc


def _wait_for(port):
    """Until redis-server listens; a busy machine may take its time, one that never listens fails."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"redis-server did not listen on port {port} within 30 s")


# Where a test is not about the deadline, one that a loaded machine cannot miss by chance (the
# default is 20 ms): a slow answer must not turn a decision on the store into a local one.
PATIENT = {"store_deadline_ms": 2000}


@pytest.fixture
def redis_url():
    port = _free_port()
    proc = _redis(port)
    try:
        _wait_for(port)
        yield f"redis://127.0.0.1:{port}"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def _msg(i, event_id=None):
    m = {"channel": "slack", "account": "T1", "conversation": "C1", "sender": "a" if i % 2 else "b",
         "receiver": "b" if i % 2 else "a", "ts_ms": 1_000 + i * 100}
    if event_id:
        m["event_id"] = event_id
    return m


def test_two_replicas_share_one_pair_budget(redis_url):
    with LoopGuard(store=redis_url, store_prefix="lg:py:", **PATIENT) as one, \
            LoopGuard(store=redis_url, store_prefix="lg:py:", **PATIENT) as two:
        actions = [(one if i % 2 else two).on_bot_message(_msg(i)).action for i in range(30)]
        # The default pair budget is 20 per 60 s: the 21st message overall trips it, not the 41st.
        assert actions[:20] == ["allow"] * 20
        assert actions[20:] == ["suppress"] * 10
        health = dict(one.health())
        assert health["store_on_store"] == 15 and health["store_on_local"] == 0


def test_a_retry_on_another_replica_takes_no_second_slot(redis_url):
    with LoopGuard(store=redis_url, store_prefix="lg:retry:", **PATIENT) as one, \
            LoopGuard(store=redis_url, store_prefix="lg:retry:", **PATIENT) as two:
        for i in range(19):
            assert one.on_bot_message(_msg(i, f"e{i}")).action == "allow"
        assert two.on_bot_message(_msg(18, "e18")).action == "allow"  # a Slack retry
        assert two.on_bot_message(_msg(19, "e19")).action == "allow"  # the 20th distinct event
        assert one.on_bot_message(_msg(20, "e20")).action == "suppress"


def test_tool_calls_of_one_session_on_two_replicas_are_seen_whole(redis_url):
    config = {"tools": {"loopDetection": {"enabled": True}}}
    call = {"session": "s1", "tool": "read", "args": {"path": "/same"}}
    with LoopGuard(config, store=redis_url, **PATIENT) as one, LoopGuard(config, store=redis_url, **PATIENT) as two, \
            LoopGuard(config) as alone:
        shared = [(one if i % 2 else two).before_tool_call(call) for i in range(12)]
        local = [alone.before_tool_call(call) for _ in range(12)]
        assert [v.action for v in shared] == [v.action for v in local]
        assert shared[-1].action == "warn" and shared[-1].count == local[-1].count


def test_a_store_that_is_down_decides_on_local_state(caplog):
    url = f"redis://127.0.0.1:{_free_port()}"  # nothing listens there
    with caplog.at_level("INFO", logger="loopguard.store"):
        with LoopGuard(store=url, store_deadline_ms=5) as g:
            assert [g.on_bot_message(_msg(i)).action for i in range(21)][-2:] == ["allow", "suppress"]
            health = dict(g.health())
            assert health["store_on_local"] == 21 and health["store_episodes"] == 1 and health["store_degraded"] == 1
    # The episode is reported once, through Python's logging (the library's `log` records).
    said = [r for r in caplog.records if r.name == "loopguard.store"]
    assert [r.levelname for r in said] == ["WARNING"], [r.getMessage() for r in said]
    assert url in said[0].getMessage() and "deciding on local state" in said[0].getMessage()
    with LoopGuard(store=url, store_deadline_ms=5, store_fail_closed=True) as g:
        with pytest.raises(LoopGuardError, match="store_fail_closed") as e:
            g.on_bot_message(_msg(0))
        assert e.value.kind == "store"  # as in Node: the store failed, not the policy


def test_a_bad_store_url_names_the_option():
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store="http://example")
    assert e.value.path == "store"


@pytest.fixture
def tls_store(tmp_path):
    """A redis-server that also speaks TLS and asks clients for a certificate: (rediss URL, certs)."""
    subprocess.run(["bash", str(ROOT / "tests" / "replicas" / "make-certs.sh"), str(tmp_path)], check=True, timeout=60)
    port, tls_port = _free_port(), _free_port()
    proc = _redis(port, "--tls-port", str(tls_port), "--tls-cert-file", str(tmp_path / "server.pem"),
                  "--tls-key-file", str(tmp_path / "server.key"), "--tls-ca-cert-file", str(tmp_path / "ca.pem"),
                  "--tls-auth-clients", "yes")
    try:
        _wait_for(tls_port)
        yield f"rediss://127.0.0.1:{tls_port}", tmp_path
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def test_two_replicas_share_one_budget_over_tls(tls_store):
    url, certs = tls_store
    tls = {"store_ca": certs / "ca.pem", "store_cert": certs / "client.pem", "store_key": certs / "client.key"}
    with LoopGuard(store=url, store_prefix="lg:tls:", store_deadline_ms=2000, **tls) as one, \
            LoopGuard(store=url, store_prefix="lg:tls:", store_deadline_ms=2000, **tls) as two:
        actions = [(one if i % 2 else two).on_bot_message(_msg(i)).action for i in range(30)]
        assert actions == ["allow"] * 20 + ["suppress"] * 10
        assert dict(one.health())["store_on_store"] == 15 and dict(two.health())["store_on_local"] == 0


def test_a_wrong_tls_setup_decides_on_local_state(tls_store):
    url, certs = tls_store
    # no client certificate: the server refuses the handshake
    with LoopGuard(store=url, store_deadline_ms=500, store_ca=certs / "ca.pem") as g:
        assert [g.on_bot_message(_msg(i)).action for i in range(21)][-2:] == ["allow", "suppress"]
        health = dict(g.health())
        assert health["store_on_local"] == 21 and health["store_episodes"] == 1


def test_tls_files_that_cannot_work_name_the_file(tls_store, tmp_path):
    url, certs = tls_store
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store=url, store_ca=tmp_path / "missing.pem")
    assert e.value.path == "store" and "missing.pem" in e.value.reason
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store=url, store_ca=certs / "ca.key")
    assert "holds no PEM certificate" in e.value.reason
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store=url.replace("rediss:", "redis:"), store_ca=certs / "ca.pem")
    assert "rediss://" in e.value.reason
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store=url, store_cert=certs / "client.pem")
    assert "key" in e.value.reason
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store="rediss://u:hunter2@127.0.0.1:1", store_ca=42)
    assert e.value.path == "store_ca"
    with pytest.raises(LoopGuardError) as e:
        LoopGuard(store="rediss://u:hunter2@127.0.0.1:1", store_ca=tmp_path / "missing.pem")
    assert "hunter2" not in str(e.value)
