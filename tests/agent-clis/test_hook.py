"""`loopguard hook` on its own, as the CLIs call it: concurrent processes on one session, the
state folder's bounds, the fail modes and the deadline. No CLI needed."""

import fcntl
import json
import os
import subprocess
import time

import pytest

import clis
import scenarios as sc

SESSION = "11111111-2222-3333-4444-555555555555"


def event(name, call_id, **more):
    return {"session_id": SESSION, "hook_event_name": name, "tool_name": "Bash",
            "tool_input": {"command": sc.POLL}, "tool_use_id": call_id, **more}


def start(state, payload, *args, env=None):
    p = subprocess.Popen([str(clis.BIN), "hook", "claude-code", "--state-dir", str(state), *args],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, **(env or {})})
    p.stdin.write(json.dumps(payload) if isinstance(payload, dict) else payload)
    p.stdin.close()
    p.stdin = None  # sent and closed: finish's communicate() must not flush it again
    return p


def finish(p, limit=60):
    """The hook's exit code, stdout and stderr. A hook still running after `limit` seconds is
    killed and fails the test: the limit is a hang's, far past any deadline under test."""
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"the hook did not answer within {limit} s")
    return p.returncode, out, err


@pytest.mark.parametrize("parallel", [3, 10])
def test_concurrent_hook_processes_on_one_session_lose_no_count(tmp_path, parallel):
    rounds = 30 // parallel
    state = tmp_path / "state"
    config = tmp_path / "config.json"
    config.write_text(sc.ENABLED)
    env = {"LOOPGUARD_CONFIG": str(config)}
    denied_per_round = []
    n = 0
    for _ in range(rounds):
        ids = [f"t{n + i}" for i in range(parallel)]
        n += parallel
        pres = [finish(p) for p in [start(state, event("PreToolUse", i), env=env) for i in ids]]
        for rc, out, err in pres:
            assert rc == 0 and err == "", (rc, out, err)
        denied = [i for i, (_, out, _) in zip(ids, pres) if '"permissionDecision":"deny"' in out]
        denied_per_round.append(len(denied))
        ran = [i for i in ids if i not in denied]
        posts = [finish(p) for p in [start(state, event("PostToolUse", i, tool_response=sc.RESULT), env=env) for i in ran]]
        for rc, out, err in posts:
            assert rc == 0 and err == "", (rc, out, err)
    decisions = sc.replay(tmp_path, sc.DEFAULT, [[("Bash", {"command": sc.POLL})] * parallel] * rounds)
    expected = [sum(d.action == "block" for d in decisions[r * parallel:(r + 1) * parallel]) for r in range(rounds)]
    assert denied_per_round == expected
    files = sorted(p.name for p in state.iterdir())
    assert [f for f in files if f.endswith(".state")] and not [f for f in files if f.endswith((".bad", ".log")) or ".tmp" in f], files
    for f in state.glob("*.state"):
        assert f.read_bytes().startswith(b"loopguard-hook-state 1\n")


OFF = json.dumps({"tools": {"loopDetection": {"enabled": False}}, "loopguard": {"preset": "off"}})


def denied_calls(tmp_path, config, calls=30):
    """Runs `calls` identical polls one after the other through the hook, a config file given or
    none: the calls it denied, each as (call number, reason, whether the answer ends the
    session)."""
    env = {"LOOPGUARD_CONFIG": ""}
    if config is not None:
        (tmp_path / "config.json5").write_text(config)
        env["LOOPGUARD_CONFIG"] = str(tmp_path / "config.json5")
    denied = []
    for n in range(1, calls + 1):
        rc, out, err = finish(start(tmp_path / "state", event("PreToolUse", f"t{n}"), env=env))
        assert rc == 0 and err == "", (rc, out, err)
        answer = json.loads(out)
        if answer.get("hookSpecificOutput", {}).get("permissionDecision") == "deny":
            denied.append((n, answer["hookSpecificOutput"]["permissionDecisionReason"], answer.get("continue") is False))
        else:
            finish(start(tmp_path / "state", event("PostToolUse", f"t{n}", tool_response=sc.RESULT), env=env))
    return denied


@pytest.mark.parametrize("config, as_read", [(None, sc.DEFAULT), (sc.RECOMMENDED, sc.RECOMMENDED_FILLED),
                                             (sc.PRESET_OFF, sc.PRESET_OFF_FILLED), (OFF, OFF)],
                         ids=["no config", "preset recommended", "preset off", "all off"])
def test_the_cautious_preset_is_the_default_and_the_other_documents_hold(tmp_path, config, as_read):
    """No config: detection on with the cautious preset (blocks, never ends the session);
    `loopguard: {preset: "recommended"}`: the ladder ends the session, every later call denied;
    `loopguard: {preset: "off"}`: OpenClaw's rules only; with `enabled: false` too, nothing is
    denied. Each run is checked against the replay of the document the hook must read it as."""
    denied = denied_calls(tmp_path, config)
    decisions = sc.as_the_hook_ends(sc.replay(tmp_path, as_read, [[("Bash", {"command": sc.POLL})]] * 30))
    end = sc.the_end(decisions)
    assert denied == [(d.call, d.message, end is not None and d.call >= end.call) for d in decisions if d.action == "block"]


def test_the_four_configs_decide_differently(tmp_path):
    """What makes the test above tell them apart: the replays of the four documents differ, at
    the calls the presets' and OpenClaw's levels say (the first block, and the block that ends
    the session)."""
    seen = []
    for config in (sc.DEFAULT, sc.RECOMMENDED_FILLED, sc.PRESET_OFF_FILLED, OFF):
        decisions = sc.replay(tmp_path, config, [[("Bash", {"command": sc.POLL})]] * 30)
        first = next(((d.call, d.detector) for d in decisions if d.action == "block"), None)
        end = sc.the_end(decisions)
        seen.append((first, end and (end.call, end.detector)))
    assert seen == [(sc.POLL_BLOCK, None), (sc.POLL_BLOCK, sc.POLL_END_RECOMMENDED),
                    (sc.POLL_BLOCK_OPENCLAW, None), (None, None)], seen


def test_the_state_folder_keeps_at_most_max_sessions_files(tmp_path):
    state = tmp_path / "state"
    for i in range(12):
        payload = {**event("PreToolUse", "t"), "session_id": f"session-{i}"}
        rc, out, err = finish(start(state, payload, "--max-sessions", "5"))
        assert rc == 0 and err == "", err
        assert len(list(state.glob("*.state"))) <= 5


def test_the_state_folder_keeps_at_most_max_state_bytes(tmp_path):
    state = tmp_path / "state"
    finish(start(state, {**event("PreToolUse", "t"), "session_id": "session-0"}))
    # Room for three and a half sessions of one call (a session's size depends on the policy's
    # snapshot encoding, so it is measured, not assumed).
    [first] = state.glob("*.state")
    cap = first.stat().st_size * 7 // 2
    for i in range(1, 8):
        payload = {**event("PreToolUse", "t"), "session_id": f"session-{i}"}
        finish(start(state, payload, "--max-state-bytes", str(cap)))
    sizes = [f.stat().st_size for f in state.glob("*.state")]
    # The cut is made before the new session is written.
    assert len(sizes) < 8 and sum(sizes) - max(sizes) <= cap, (sizes, cap)


def test_an_expired_session_is_deleted_when_a_new_one_comes(tmp_path):
    state = tmp_path / "state"
    finish(start(state, event("PreToolUse", "t1")))
    [old] = state.glob("*.state")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    finish(start(state, {**event("PreToolUse", "t2"), "session_id": "another"}, "--expire-hours", "24"))
    assert not old.exists() and len(list(state.glob("*.state"))) == 1


@pytest.mark.parametrize("closed", [False, True])
def test_bad_stdin_answers_in_the_fail_mode_with_one_line_on_stderr(tmp_path, closed):
    args = ["--fail-closed"] if closed else []
    rc, out, err = finish(start(tmp_path, "{not json", *args))
    assert err.count("\n") == 1 and "the event on stdin is not JSON" in err, err
    assert (rc, out) == ((2, "") if closed else (0, "{}\n"))


@pytest.mark.parametrize("closed", [False, True])
def test_an_unreadable_state_file_answers_in_the_fail_mode_and_is_moved_aside(tmp_path, closed):
    finish(start(tmp_path, event("PreToolUse", "t1")))
    [path] = tmp_path.glob("*.state")
    path.write_bytes(b"torn")
    rc, out, err = finish(start(tmp_path, event("PreToolUse", "t2"), *(["--fail-closed"] if closed else [])))
    assert rc == 0 and "unreadable state file" in err and err.count("\n") == 1, err
    assert ('"permissionDecision":"deny"' in out) == closed, out
    assert path.with_suffix(".bad").exists()
    rc, out, err = finish(start(tmp_path, event("PreToolUse", "t3")))
    assert (rc, out, err) == (0, "{}\n", "")


@pytest.mark.parametrize("closed", [False, True])
def test_the_hook_answers_by_its_deadline_when_the_state_is_locked(tmp_path, closed):
    finish(start(tmp_path, event("PreToolUse", "t1")))
    with open(tmp_path / "state.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # The lock is held until the hook has answered: without its deadline it would never
        # answer (finish fails it after a minute). The deadline shows in the message and the
        # fail-mode verdict, not in a wall-clock bound a loaded machine can miss.
        rc, out, err = finish(start(tmp_path, event("PreToolUse", "t2"), "--timeout-ms", "300", *(["--fail-closed"] if closed else [])))
    assert "no answer within 300 ms" in err, err
    assert ('"permissionDecision":"deny"' in out) == closed, out


def test_an_invalid_config_is_named_by_its_path(tmp_path):
    bad = tmp_path / "config.json5"
    bad.write_text(sc.BAD_CONFIG)
    rc, out, err = finish(start(tmp_path / "state", event("PreToolUse", "t1"), "--config", str(bad)))
    assert rc == 0 and out == "{}\n" and f"invalid config {bad}" in err and "criticalThreshold" in err, err
