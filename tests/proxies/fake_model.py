#!/usr/bin/env python3
"""A scripted OpenAI-compatible model on 127.0.0.1 (`/v1/chat/completions`, streaming and not).

    fake_model.py PORT LOG

The user's first message picks the script: "poll" asks for `exec {"command": "gh run view 42"}`
forever (an agent stuck polling); "build" asks for `exec {"command": "step N"}` with N the number
of tool results so far, and answers "done" after 5. Each request's messages go to LOG (JSON Lines)
so that the tests see what reached the model (the guardrail's notes)."""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]
counter = [0]


def reply(messages):
    script = next((m["content"] for m in messages if m.get("role") == "user"), "")
    results = sum(1 for m in messages if m.get("role") == "tool")
    if "build" in script:
        if results >= 5:
            return None, "done"
        return {"command": f"step {results}"}, None
    return {"command": "gh run view 42"}, None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps({"messages": body.get("messages", [])}) + "\n")
        counter[0] += 1
        args, text = reply(body.get("messages", []))
        cid, created = f"call_{counter[0]}", int(time.time())
        call = {"index": 0, "id": cid, "type": "function", "function": {"name": "exec", "arguments": json.dumps(args)}} if args else None
        if not body.get("stream"):
            msg = {"role": "assistant", "content": text}
            if call:
                msg["tool_calls"] = [{k: v for k, v in call.items() if k != "index"}]
            out = {"id": f"chatcmpl-{counter[0]}", "object": "chat.completion", "created": created, "model": body.get("model"),
                   "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if call else "stop"}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        base = {"id": f"chatcmpl-{counter[0]}", "object": "chat.completion.chunk", "created": created, "model": body.get("model")}
        chunks = [{"index": 0, "delta": {"role": "assistant", "content": text} if text else {"role": "assistant"}, "finish_reason": None}]
        if call:
            a = call["function"]["arguments"]
            chunks.append({"index": 0, "delta": {"tool_calls": [dict(call, function={"name": "exec", "arguments": a[:10]})]}, "finish_reason": None})
            chunks.append({"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": a[10:]}}]}, "finish_reason": None})
        chunks.append({"index": 0, "delta": {}, "finish_reason": "tool_calls" if call else "stop"})
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        events = [dict(base, choices=[c]) for c in chunks]
        events.append(dict(base, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}))
        for e in events:
            self._chunk(f"data: {json.dumps(e)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data):
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
