#!/usr/bin/env python3
"""A small agent runtime: sends the conversation to the proxy, runs the tool calls the model asks
for (the result is scripted), appends them, and repeats until the model answers with text.

    agent.py URL poll|build stream|plain SESSION|- [MAX_TURNS] [keepalive]

Prints one JSON line per turn: {"turn", "tool_calls": [...], "content", "finish"}. Each request
uses a fresh connection, so a proxy with several workers spreads the turns over them; with
`keepalive` one connection carries them all (one worker serves the whole conversation)."""
import http.client
import json
import sys
import urllib.parse

URL, SCRIPT, MODE, SESSION = sys.argv[1:5]
MAX = int(sys.argv[5]) if len(sys.argv) > 5 else 30
KEEPALIVE = sys.argv[6:7] == ["keepalive"]
TARGET = urllib.parse.urlsplit(URL)
conn = None
messages = [{"role": "system", "content": "You are a CI assistant."},
            {"role": "user", "content": f"{SCRIPT}: wait until CI run 42 finishes."}]
tools = [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]


def ask():
    body = {"model": "fake-agent", "messages": messages, "tools": tools, "stream": MODE == "stream"}
    global conn
    headers = {"content-type": "application/json", "authorization": "Bearer sk-loopguard-test"}
    if not KEEPALIVE:
        headers["connection"] = "close"
    if SESSION != "-":
        headers["x-litellm-session-id"] = SESSION
    if conn is None or not KEEPALIVE:
        conn = http.client.HTTPConnection(TARGET.hostname, TARGET.port, timeout=60)
    conn.request("POST", TARGET.path, body=json.dumps(body).encode(), headers=headers)
    with conn.getresponse() as r:
        if r.status != 200:
            raise SystemExit(f"HTTP {r.status}: {r.read()[:500]!r}")
        if MODE != "stream":
            choice = json.loads(r.read())["choices"][0]
            return choice["message"].get("content"), choice["message"].get("tool_calls") or [], choice["finish_reason"]
        content, calls, finish = "", {}, None
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for ch in json.loads(line[6:]).get("choices", []):
                d = ch.get("delta") or {}
                content += d.get("content") or ""
                for t in d.get("tool_calls") or []:
                    c = calls.setdefault(t["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                    c["id"] = t.get("id") or c["id"]
                    fn = t.get("function") or {}
                    c["function"]["name"] += fn.get("name") or ""
                    c["function"]["arguments"] += fn.get("arguments") or ""
                finish = ch.get("finish_reason") or finish
        return content or None, [calls[i] for i in sorted(calls)], finish


for turn in range(1, MAX + 1):
    content, calls, finish = ask()
    print(json.dumps({"turn": turn, "tool_calls": [c["function"]["arguments"] for c in calls], "content": content, "finish": finish}), flush=True)
    if not calls:
        break
    messages.append({"role": "assistant", "content": content, "tool_calls": calls})
    for c in calls:
        cmd = json.loads(c["function"]["arguments"])["command"]
        result = "run 42: status=in_progress, jobs: build (queued)" if cmd == "gh run view 42" else f"{cmd}: ok"
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": result})
