#!/usr/bin/env python3
"""A wire tap for stdio MCP: `tap.py LOG -- <command…>` runs the command and copies its stdin and
stdout line by line, appending each line to LOG as {"dir": "in"|"out", "b64": <the bytes>}.

The scenarios put one tap between the SDK client and `loopguard mcp` and one between the proxy
and server-everything, then compare the bytes on both sides of the proxy."""
import base64
import json
import subprocess
import sys
import threading

log_path, cmd = sys.argv[1], sys.argv[3:]
assert sys.argv[2] == "--", "usage: tap.py LOG -- <command…>"
lock = threading.Lock()
log = open(log_path, "a", encoding="utf-8")


def note(direction, line):
    with lock:
        log.write(json.dumps({"dir": direction, "b64": base64.b64encode(line).decode()}) + "\n")
        log.flush()


child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pump_in():
    for line in sys.stdin.buffer:
        note("in", line)
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()


threading.Thread(target=pump_in, daemon=True).start()
for line in child.stdout:
    note("out", line)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
