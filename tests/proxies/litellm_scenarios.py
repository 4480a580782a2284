#!/usr/bin/env python3
"""The LiteLLM guardrail (`loopguard.litellm.LoopGuardrail`) in the real LiteLLM proxy 1.108.7 with
two workers, in front of the scripted model (fake_model.py), driven by agent.py.

    litellm_scenarios.py WORKDIR LOOPGUARD      (run with LiteLLM's venv, loopguard installed in it)

Without LOOPGUARD_CONFIG, the agent-facing hosts' one default (host/src/agent.rs `AGENT_DEFAULTS`:
detection on, the `cautious` preset): the polling agent's 3rd identical call (the same result each
time) brings the policy's warning to the model as a note on the next request, and its 4th call is
replaced by the policy's text (finish_reason stop), streaming and non-streaming, with and without
a session id (the same call either way); a healthy agent is untouched. Then a second proxy with LOOPGUARD_CONFIG naming
`{"loopguard":{"preset":"off"}}`: OpenClaw's rules alone (the 11th call warned, the 21st replaced),
`enabled` filled in from the default, over a conversation long enough to cross the workers many
times. Then a third proxy with LOOPGUARD_STORE naming a redis-server: the default's decisions
again, with the conversations' cursors (state and position) in the store, one record per session
id and per opening. What each call must get comes from the policy (policy.py: the spec's levels pinned,
`loopguard replay` of the same calls under the same document written out by hand, `loopguard hook`
without a config), never from the guardrail. Each request uses a fresh connection, so the turns of
one conversation are spread over both workers (each replays what it did not see), except in the
one-connection runs, where one worker serves every turn (and feeds only what is new: found by the
session id, or without one by the conversation's opening). Exit 0 = all held."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import policy

WORK, LOOPGUARD = sys.argv[1:3]
HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
# agent.py's `exec` (the command it runs and what it returns) and fake_model.py's scripts.
POLL = {"command": "gh run view 42"}
POLL_RESULT = "run 42: status=in_progress, jobs: build (queued)"
MAX_TURNS = 30  # agent.py's turns at most
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, proc, what, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.5)
    raise SystemExit(f"{what} did not answer {url}")


def agent(url, script, mode, session, keepalive=False):
    out = subprocess.run([PY, os.path.join(HERE, "agent.py"), url, script, mode, session, "30"] + (["keepalive"] if keepalive else []),
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        print(out.stderr[-3000:], file=sys.stderr)
    return [json.loads(line) for line in out.stdout.splitlines()]


def notes(log, marker):
    """The system notes the model received, per request of the conversation whose user text has `marker`."""
    seen = []
    with open(log, encoding="utf-8") as f:
        for rec in map(json.loads, f):
            msgs = rec["messages"]
            if any(m.get("role") == "user" and marker in str(m.get("content")) for m in msgs):
                seen.append([m["content"] for m in msgs if m.get("role") == "system" and "CI assistant" not in m["content"]])
    return seen


def start_litellm(config, label, store=None):
    """LiteLLM with 2 workers and the guardrail; LOOPGUARD_CONFIG names `config` (None: unset),
    LOOPGUARD_STORE `store` (None: unset)."""
    port = free_port()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("LOOPGUARD_CONFIG", None)
    env.pop("LOOPGUARD_STORE", None)
    if store is not None:
        env["LOOPGUARD_STORE"] = store
    if config is not None:
        path = os.path.join(WORK, f"loopguard-{label}.json")
        with open(path, "w") as f:
            json.dump(config, f)
        env["LOOPGUARD_CONFIG"] = path
    logs = open(os.path.join(WORK, f"litellm-{label}.log"), "w")
    proxy = subprocess.Popen([os.path.join(os.path.dirname(PY), "litellm"), "--config", os.path.join(WORK, "litellm.yaml"),
                              "--host", "127.0.0.1", "--port", str(port), "--num_workers", "2",
                              # uvicorn kills a worker that does not answer its health check within
                              # 5 s (its default), which LiteLLM's import misses on a loaded machine.
                              "--timeout_worker_healthcheck", "60"], env=env, stdout=logs, stderr=logs)
    return proxy, port


def stop(*procs):
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()


def expected(config, calls, pinned):
    """The policy's decisions for `calls` ((args, result) of `exec`, one after the other) under
    `config`, from the replay, checked against the levels and texts pinned from the spec."""
    want = policy.replay(LOOPGUARD, config, [("exec", args, result) for args, result in calls])
    check(want == pinned, f"the replay under {json.dumps(config)} agrees with the spec's levels and texts: "
          f"{policy.summary(want)} (pinned: {policy.summary(pinned)})")
    return want


def polls(url, model_log, tag, want):
    """The polling agent, plain and streaming, with a session id, without, and on one connection:
    every turn as the policy decided the same calls (`want`, one per call)."""
    actions = [a for a, _ in want]
    first_block = actions.index("block") + 1
    block_text = want[first_block - 1][1]
    # Request r carries the warning the policy said to tell about call r-1 (the last turn's call).
    notes_want = [[]] + [[m] if a == "warn" else [] for a, m in want[:first_block - 1]]
    stopped = []
    for mode in ("plain", "stream"):
        # Without a session id on one connection, one worker serves the whole conversation and
        # continues it from the part already seen, found by its opening (the user text has the marker).
        for session, keepalive in ((f"poll-{tag}-{mode}-session", False), ("-", False), (f"poll-{tag}-{mode}-kept", True),
                                   ("-", True)):
            marker = f"poll-{tag}-{mode}-{session}{'-kept' if keepalive else ''}"
            turns = agent(url, f"poll {marker}", mode, session, keepalive)
            stopped.append(len(turns))
            label = f"{tag}, {mode}, session {'header' if session != '-' else 'none'}{', one connection' if keepalive else ''}"
            check(len(turns) == first_block, f"{label}: the polling agent stopped at turn {len(turns)} ({first_block} expected)")
            check(all(t["tool_calls"] == [json.dumps(POLL)] for t in turns[:first_block - 1]),
                  f"{label}: turns 1-{first_block - 1} carry the model's tool call untouched")
            last = turns[-1] if turns else {}
            check(last.get("tool_calls") == [] and last.get("content") == block_text and last.get("finish") == "stop",
                  f"{label}: the identical call #{first_block} is replaced by the policy's text: {last}")
            got = notes(model_log, marker)
            warned = [r for r, n in enumerate(notes_want, 1) if n]
            check(got == notes_want, f"{label}: the model got the policy's warning as a note once, on request(s) {warned} "
                  f"(notes per request: {[len(n) for n in got]})")
    check(len(set(stopped)) == 1, f"{tag}: with a session id or without, on one connection or not, the same call is the "
          f"first one replaced: {stopped}")
    return stopped


def main():
    model_port = free_port()
    model_log = os.path.join(WORK, "model.jsonl")
    open(model_log, "w").close()
    with open(os.path.join(WORK, "litellm.yaml"), "w") as f:
        f.write(f"""model_list:
  - model_name: fake-agent
    litellm_params: {{model: openai/fake-agent, api_base: "http://127.0.0.1:{model_port}/v1", api_key: fake-key}}
guardrails:
  - guardrail_name: loopguard
    litellm_params:
      guardrail: loopguard.litellm.LoopGuardrail
      mode: [pre_call, post_call]
      default_on: true
general_settings: {{master_key: sk-loopguard-test}}
""")
    model = subprocess.Popen([PY, os.path.join(HERE, "fake_model.py"), str(model_port), model_log],
                             stderr=open(os.path.join(WORK, "model.log"), "w"))
    try:
        run(model_log)
    except SystemExit as e:  # a proxy that did not start: report it with its log below
        check(False, str(e))
    finally:
        stop(model)
    print(f"litellm: {'FAILED ' + str(len(failures)) if failures else 'all passed'}")
    if failures:
        for label in ("default", "preset-off", "store"):
            log = os.path.join(WORK, f"litellm-{label}.log")
            if os.path.exists(log):
                print(f"--- {log}\n" + open(log).read()[-4000:], file=sys.stderr)
    sys.exit(1 if failures else 0)


def run(model_log):
    poll_calls = [(POLL, POLL_RESULT)] * MAX_TURNS
    default_want = expected(policy.DEFAULT, poll_calls, policy.pinned_cautious("exec", MAX_TURNS))
    # The one default of the agent-facing hosts: `loopguard hook` without a config decides the same.
    hooked = policy.hook(LOOPGUARD, [("exec", args, result) for args, result in poll_calls[:6]])
    check(hooked == default_want[:6], "`loopguard hook` without a config decides the polls as the replay under "
          "AGENT_DEFAULTS (the guardrail's default is the hook's)")
    # The healthy agent: a different command each turn, each with its own result; nothing repeats.
    healthy_calls = [({"command": f"step {i}"}, f"step {i}: ok") for i in range(5)]
    expected(policy.DEFAULT, healthy_calls, [policy.PASS] * 5)
    off_want = expected(policy.PRESET_OFF_FILLED, poll_calls, policy.pinned_openclaw("exec", MAX_TURNS))

    proxy, port = start_litellm(None, "default")
    try:
        wait_http(f"http://127.0.0.1:{port}/health/liveliness", proxy, "litellm")
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        stopped = polls(url, model_log, "default", default_want)
        check(stopped == [4] * 8, "without LOOPGUARD_CONFIG the 4th identical call is the first one replaced, as the "
              f"hook's default does (AGENT_DEFAULTS: the cautious preset): {stopped}")
        for mode in ("plain", "stream"):
            turns = agent(url, f"build healthy-{mode}", mode, f"healthy-{mode}")
            check([t["tool_calls"] for t in turns] == [[json.dumps(args)] for args, _ in healthy_calls] + [[]]
                  and turns[-1]["content"] == "done", f"default, {mode}: a healthy session is untouched ({len(turns)} turns)")
            check(notes(model_log, f"healthy-{mode}") == [[]] * 6, f"default, {mode}: the healthy session got no note")
    finally:
        stop(proxy)
    proxy, port = start_litellm(policy.PRESET_OFF, "preset-off")
    try:
        wait_http(f"http://127.0.0.1:{port}/health/liveliness", proxy, "litellm")
        polls(f"http://127.0.0.1:{port}/v1/chat/completions", model_log, "preset-off", off_want)
    finally:
        stop(proxy)
    # The two workers sharing a redis-server (LOOPGUARD_STORE): the conversations' cursors live in
    # it, and every turn is still decided as the policy decides the calls.
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no"], stdout=subprocess.DEVNULL)
    proxy, port = start_litellm(None, "store", store=f"redis://127.0.0.1:{redis_port}")
    try:
        wait_http(f"http://127.0.0.1:{port}/health/liveliness", proxy, "litellm")
        stopped = polls(f"http://127.0.0.1:{port}/v1/chat/completions", model_log, "store", default_want)
        check(stopped == [4] * 8, f"with a store, the 4th identical call is the first one replaced: {stopped}")
        keys = subprocess.run(["redis-cli", "-p", str(redis_port), "--scan", "--pattern", "lg:1:{litellm:cursor:*"],
                              capture_output=True, text=True, timeout=30).stdout.split()
        sessions = [k for k in keys if k.startswith("lg:1:{litellm:cursor:s:")]
        check(len(sessions) == 4 and len(keys) > len(sessions),
              f"the cursors live in the store: one record per session id (4), and some by opening: {len(keys)} keys")
    finally:
        stop(proxy, redis)


main()
