#!/usr/bin/env python3
"""The LiteLLM guardrail (`loopguard.litellm.LoopGuardrail`) in the real LiteLLM proxy 1.108.7 with
two workers, in front of the scripted model (fake_model.py), driven by agent.py.

    litellm_scenarios.py WORKDIR      (run with LiteLLM's venv, loopguard installed in it)

With the default config (OpenClaw's thresholds 10/20): the polling agent's 11th identical call
brings the policy's warning to the model as a note on the next request, and its 21st call is
replaced by the policy's text (finish_reason stop), streaming and non-streaming, with and without
a session id; a healthy agent is untouched. Each request uses a fresh connection, so the turns of
one conversation are spread over both workers (each replays what it did not see), except in the
one-connection runs, where one worker serves every turn (and feeds only what is new). Exit 0 = all held."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

WORK = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
WARNING = ("WARNING: You have called exec 10 times with identical arguments. If this is not making "
           "progress, stop retrying and report the task as failed.")
BLOCK = ("CRITICAL: Called exec with identical arguments and identical outcomes 20 times. Session "
         "execution blocked to prevent runaway loops.")
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


def main():
    model_port, proxy_port = free_port(), free_port()
    model_log = os.path.join(WORK, "model.jsonl")
    open(model_log, "w").close()
    config = os.path.join(WORK, "litellm.yaml")
    with open(config, "w") as f:
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
    logs = open(os.path.join(WORK, "litellm.log"), "w")
    model = subprocess.Popen([PY, os.path.join(HERE, "fake_model.py"), str(model_port), model_log], stderr=logs)
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    proxy = subprocess.Popen([os.path.join(os.path.dirname(PY), "litellm"), "--config", config, "--host", "127.0.0.1",
                              "--port", str(proxy_port), "--num_workers", "2"], env=env, stdout=logs, stderr=logs)
    try:
        wait_http(f"http://127.0.0.1:{proxy_port}/health/liveliness", proxy, "litellm")
        url = f"http://127.0.0.1:{proxy_port}/v1/chat/completions"
        for mode in ("plain", "stream"):
            for session, keepalive in ((f"poll-{mode}-session", False), ("-", False), (f"poll-{mode}-kept", True)):
                marker = f"poll-{mode}-{session}"
                turns = agent(url, f"poll {marker}", mode, session, keepalive)
                label = f"{mode}, session {'header' if session != '-' else 'none'}{', one connection' if keepalive else ''}"
                check(len(turns) == 21, f"{label}: the polling agent stopped at turn {len(turns)} (21 expected)")
                check(all(t["tool_calls"] == ['{"command": "gh run view 42"}'] for t in turns[:20]),
                      f"{label}: turns 1-20 carry the model's tool call untouched")
                last = turns[-1] if turns else {}
                check(last.get("tool_calls") == [] and last.get("content") == BLOCK and last.get("finish") == "stop",
                      f"{label}: the 21st identical call is replaced by the policy's text: {last}")
                got = notes(model_log, marker)
                expected = [[] for _ in range(11)] + [[WARNING]] + [[] for _ in range(9)]
                check(got == expected, f"{label}: the model got the warning as a note once, on request 12 "
                      f"(notes per request: {[len(n) for n in got]})")
            turns = agent(url, f"build healthy-{mode}", mode, f"healthy-{mode}")
            check([t["tool_calls"] for t in turns] == [[json.dumps({"command": f"step {i}"})] for i in range(5)] + [[]]
                  and turns[-1]["content"] == "done", f"{mode}: a healthy session is untouched ({len(turns)} turns)")
            check(notes(model_log, f"healthy-{mode}") == [[]] * 6, f"{mode}: the healthy session got no note")
    finally:
        for p in (proxy, model):
            p.terminate()
        for p in (proxy, model):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
    print(f"litellm: {'FAILED ' + str(len(failures)) if failures else 'all passed'}")
    if failures:
        print(open(os.path.join(WORK, "litellm.log")).read()[-4000:], file=sys.stderr)
    sys.exit(1 if failures else 0)


main()
