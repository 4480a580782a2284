#!/usr/bin/env python3
"""A scripted model on 127.0.0.1 for the framework adapters' tests (Python stdlib only).

One server serves many scenarios at once: a test registers a script under a name, points the
framework's base URL at ``http://127.0.0.1:PORT/<name>/v1`` (OpenAI Chat Completions and
Responses) or ``http://127.0.0.1:PORT/<name>`` (Anthropic Messages: the SDKs add ``/v1``), then
reads back every request the model received under that name.

    PUT  /script/<name>   {"turns": [TURN, ...], "final": "text"}   register (or replace)
    GET  /log/<name>      the requests received, as a JSON list
    POST /<name>/v1/chat/completions | /<name>/v1/responses | /<name>/v1/messages
                          answered from the script, streamed (SSE) when the body asks for it

A TURN is a list of tool calls ``{"tool": NAME, "args": {...}}`` made in one assistant step (more
than one: parallel calls). The model answers turn k when the conversation already holds k
assistant steps with tool calls; after the last turn it answers ``final`` as text. A request
without tools (a title, a summary) is answered "ok" and logged as ``side``. NAME matches the
tool whose name is NAME or ends in ``__NAME`` (MCP tools of the Claude Agent SDK) or ``_NAME``.

Each log entry: api (chat/responses/messages), kind (main/side), turn (the turn answered),
results (the tool results of the request's last step: call id, text, is_error), messages (the
non-tool text the request carries, newest last: where a framework puts a note), body.

    python3 model.py --portfile FILE [--max-seconds 900]

Why a server of our own: the tests assert on what the model received, per scenario, from many
frameworks and three wire formats; a stdlib server starts in ~50 ms and has no version to pin.
"""
import argparse
import itertools
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPTS: dict = {}
LOGS: dict = {}
LOCK = threading.Lock()
IDS = itertools.count(1)


def text_of(content) -> str:
    """The text of a message or tool-result content, whichever shape the wire format uses."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(p.get("text", p.get("content")) if isinstance(p, dict) else p) for p in content)
    if isinstance(content, dict):
        return text_of(content.get("text", content.get("content", json.dumps(content))))
    return str(content)


def resolve(name: str, offered: list) -> str:
    if name in offered:
        return name
    return next((t for t in offered if t.endswith("__" + name) or t.endswith("_" + name)), name)


# -- reading a request: (steps so far, last step's results, notes, offered tool names) --------

def read_chat(body):
    msgs = body.get("messages") or []
    steps = sum(1 for m in msgs if m.get("role") == "assistant" and m.get("tool_calls"))
    results = []
    for m in reversed(msgs):
        if m.get("role") == "tool":
            results.insert(0, {"id": m.get("tool_call_id"), "text": text_of(m.get("content")), "is_error": False})
        elif results or m.get("role") == "assistant":
            break
    notes = [text_of(m.get("content")) for m in msgs if m.get("role") in ("system", "user", "developer")]
    offered = [(t.get("function") or {}).get("name") or t.get("name") or "" for t in body.get("tools") or []]
    return steps, results, notes, offered


def read_responses(body):
    items = body.get("input") if isinstance(body.get("input"), list) else []
    steps, previous = 0, None
    for i in items:  # consecutive function calls are one step
        if i.get("type") == "function_call" and previous != "function_call":
            steps += 1
        previous = i.get("type")
    results = []
    for i in reversed(items):
        if i.get("type") == "function_call_output":
            results.insert(0, {"id": i.get("call_id"), "text": text_of(i.get("output")), "is_error": False})
        elif results or i.get("type") == "function_call":
            break
    notes = [text_of(i.get("content")) for i in items if i.get("role") in ("system", "user", "developer")]
    if isinstance(body.get("input"), str):
        notes.append(body["input"])
    if body.get("instructions"):
        notes.insert(0, text_of(body["instructions"]))
    offered = [t.get("name") or "" for t in body.get("tools") or []]
    return steps, results, notes, offered


def read_messages(body):
    msgs = body.get("messages") or []
    steps = sum(1 for m in msgs if m.get("role") == "assistant" and isinstance(m.get("content"), list)
                and any(c.get("type") == "tool_use" for c in m["content"]))
    results, notes = [], [text_of(body.get("system"))] if body.get("system") else []
    for m in msgs:
        if m.get("role") == "user":
            parts = m["content"] if isinstance(m.get("content"), list) else [{"type": "text", "text": m.get("content")}]
            notes.extend(text_of(p.get("text")) for p in parts if p.get("type") == "text")
    for m in reversed(msgs):
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            results = [{"id": c.get("tool_use_id"), "text": text_of(c.get("content")), "is_error": bool(c.get("is_error"))}
                       for c in m["content"] if c.get("type") == "tool_result"]
            if results:
                break
        if m.get("role") == "assistant":
            break
    offered = [t.get("name") or "" for t in body.get("tools") or []]
    return steps, results, notes, offered


READERS = {"chat": read_chat, "responses": read_responses, "messages": read_messages}


def answer(name, api, body):
    """The step the script says comes next: ("calls", [(id, tool, args)]) or ("text", str)."""
    steps, results, notes, offered = READERS[api](body)
    script = SCRIPTS.get(name) or {"turns": [], "final": "no script"}
    kind = "main" if offered else "side"
    entry = {"api": api, "kind": kind, "turn": steps, "results": results, "messages": notes, "body": body}
    with LOCK:
        LOGS.setdefault(name, []).append(entry)
    turns = script.get("turns") or []
    if kind == "side":
        return ("text", "ok")
    if steps < len(turns):
        return ("calls", [(f"call_{next(IDS)}", resolve(c["tool"], offered), c.get("args", {})) for c in turns[steps]])
    return ("text", script.get("final", "done"))


# -- writing an answer in each wire format ------------------------------------------------------

def chat_reply(h, body, step):
    kind, value = step
    model = body.get("model", "scripted")
    if kind == "calls":
        calls = [{"id": i, "type": "function", "function": {"name": t, "arguments": json.dumps(a)}} for i, t, a in value]
        msg, finish = {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
    else:
        msg, finish = {"role": "assistant", "content": value}, "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    base = {"id": f"chatcmpl_{next(IDS)}", "created": 0, "model": model}
    if not body.get("stream"):
        return h.json({**base, "object": "chat.completion", "usage": usage,
                       "choices": [{"index": 0, "message": msg, "finish_reason": finish}]})
    chunk = {**base, "object": "chat.completion.chunk"}
    delta = {"role": "assistant", "content": msg["content"]}
    if kind == "calls":
        delta["tool_calls"] = [dict(c, index=n) for n, c in enumerate(msg["tool_calls"])]
    events = [{**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
              {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}]
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append({**chunk, "choices": [], "usage": usage})
    h.sse([(None, e) for e in events] + [(None, "[DONE]")])


def responses_reply(h, body, step):
    kind, value = step
    if kind == "calls":
        items = [{"type": "function_call", "id": f"fc_{i}", "call_id": i, "name": t, "arguments": json.dumps(a),
                  "status": "completed"} for i, t, a in value]
    else:
        items = [{"type": "message", "id": f"msg_{next(IDS)}", "role": "assistant", "status": "completed",
                  "content": [{"type": "output_text", "text": value, "annotations": []}]}]
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    resp = {"id": f"resp_{next(IDS)}", "object": "response", "created_at": 0, "status": "completed",
            "model": body.get("model", "scripted"), "output": items, "usage": usage, "error": None,
            "incomplete_details": None, "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    if not body.get("stream"):
        return h.json(resp)
    events = [("response.created", {"response": dict(resp, status="in_progress", output=[])})]
    for n, item in enumerate(items):
        events.append(("response.output_item.added", {"output_index": n, "item": item}))
        if item["type"] == "message":
            events.append(("response.output_text.delta", {"output_index": n, "content_index": 0, "item_id": item["id"],
                                                          "delta": value}))
        else:
            events.append(("response.function_call_arguments.done", {"output_index": n, "item_id": item["id"],
                                                                     "arguments": item["arguments"]}))
        events.append(("response.output_item.done", {"output_index": n, "item": item}))
    events.append(("response.completed", {"response": resp}))
    h.sse([(t, dict(d, type=t, sequence_number=n)) for n, (t, d) in enumerate(events)])


def messages_reply(h, body, step):
    kind, value = step
    if kind == "calls":
        content, stop = [{"type": "tool_use", "id": i, "name": t, "input": a} for i, t, a in value], "tool_use"
    else:
        content, stop = [{"type": "text", "text": value}], "end_turn"
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    msg = {"id": f"msg_{next(IDS)}", "type": "message", "role": "assistant", "model": body.get("model", "scripted"),
           "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        return h.json(msg)
    events = [("message_start", {"message": dict(msg, content=[], stop_reason=None)})]
    for n, block in enumerate(content):
        if block["type"] == "text":
            events += [("content_block_start", {"index": n, "content_block": {"type": "text", "text": ""}}),
                       ("content_block_delta", {"index": n, "delta": {"type": "text_delta", "text": block["text"]}})]
        else:
            events += [("content_block_start", {"index": n, "content_block": dict(block, input={})}),
                       ("content_block_delta", {"index": n, "delta": {"type": "input_json_delta",
                                                                      "partial_json": json.dumps(block["input"])}})]
        events.append(("content_block_stop", {"index": n}))
    events += [("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
               ("message_stop", {})]
    h.sse([(t, dict(d, type=t)) for t, d in events])


WRITERS = {"chat": chat_reply, "responses": responses_reply, "messages": messages_reply}
ENDPOINTS = {"/v1/chat/completions": "chat", "/chat/completions": "chat", "/v1/responses": "responses",
             "/responses": "responses", "/v1/messages": "messages"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse(self, events):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        for event, data in events:
            head = f"event: {event}\n" if event else ""
            payload = data if isinstance(data, str) else json.dumps(data)
            self.wfile.write(f"{head}data: {payload}\n\n".encode())
        self.wfile.flush()

    def body(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        return json.loads(raw or b"{}")

    def do_PUT(self):
        name = self.path.removeprefix("/script/")
        with LOCK:
            SCRIPTS[name] = self.body()
            LOGS[name] = []
        self.json({"ok": True})

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.startswith("/log/"):
            with LOCK:
                return self.json(LOGS.get(path.removeprefix("/log/"), []))
        if path.endswith("/models"):
            return self.json({"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "loopguard"}]})
        self.json({"error": {"message": f"scripted model: no GET {path}"}}, 404)

    def do_POST(self):
        path = self.path.split("?")[0]
        name, _, rest = path.lstrip("/").partition("/")
        rest = "/" + rest
        if rest.endswith("/count_tokens"):
            return self.json({"input_tokens": 10})
        api = ENDPOINTS.get(rest)
        if api is None:
            return self.json({"error": {"message": f"scripted model: no POST {path}", "type": "not_found"}}, 404)
        try:
            body = self.body()
        except ValueError as e:
            return self.json({"error": {"message": f"scripted model: the body is not JSON: {e}"}}, 400)
        WRITERS[api](self, body, answer(name, api, body))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--portfile", required=True)
    ap.add_argument("--max-seconds", type=float, default=900, help="exit after this long (a test that forgets us)")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    with open(args.portfile + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.portfile + ".tmp", args.portfile)
    print(f"scripted model on http://127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    threading.Timer(args.max_seconds, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
