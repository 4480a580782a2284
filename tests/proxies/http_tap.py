#!/usr/bin/env python3
"""A wire tap for streamable-HTTP MCP: `http_tap.py PORT UPSTREAM_URL LOG` listens on 127.0.0.1:PORT,
forwards every request to UPSTREAM_URL (method, headers, body) and streams the response back line
by line (so SSE events, and server requests inside them, pass at once). LOG gets one JSON line per
exchange, appended when it ends: {"method", "body": b64, "status", "type", "response": b64}.

The HTTP scenario puts one tap between the SDK client and `loopguard mcp` and one between the
proxy and server-everything, then compares the bytes on both sides of the proxy."""
import base64
import http.client
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, UPSTREAM, LOG = int(sys.argv[1]), urllib.parse.urlsplit(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


class Tap(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def relay(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn.request(self.command, UPSTREAM.path, body=body or None, headers=headers)
        r = conn.getresponse()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        got = bytearray()
        while True:
            line = r.readline()
            if not line:
                break
            got += line
            self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        conn.close()
        record = {"method": self.command, "body": base64.b64encode(body).decode(), "status": r.status,
                  "type": r.getheader("content-type") or "", "response": base64.b64encode(bytes(got)).decode()}
        with lock, open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    do_GET = do_POST = do_DELETE = relay


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A peer that closes its connection (the port probe, a client ending its session) is normal.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


Server(("127.0.0.1", PORT), Tap).serve_forever()
