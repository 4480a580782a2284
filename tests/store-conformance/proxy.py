"""A TCP proxy on loopback in front of a redis-server, for the store conformance suite (run.py):
a slow store (every command held a while) and a store where another writer wins races on a key
(a competing write lands just before the host's compare-and-set), both deterministic, so that
the table's counters can be exact. Standard library only.
"""

import contextlib
import socket
import threading
import time

# Run before the host's compare-and-set at version ARGV[1] when that version is still the key's:
# writes the same state at version + 1 (an absent key: an empty state at version 1), as another
# replica (a 1.0 one, counting versions) would, so that the host's write conflicts and its retry
# reads the same state. The proxy runs it before N writes of each decision and lets the next one
# through, so that each decision loses exactly N races.
COMPETE = """
local cur = redis.call('GET', KEYS[1])
local ver = cur and tonumber(string.sub(cur, 1, 16), 16) or 0
if ver ~= tonumber(ARGV[1], 16) then return 0 end
redis.call('SET', KEYS[1], string.format('%016x', ver + 1) .. (cur and string.sub(cur, 17) or ''), 'KEEPTTL')
return 1
"""


def resp_command(buf):
    """(arguments, rest) of the first whole command a client sent in `buf`, or (None, buf)."""
    end = buf.find(b"\r\n")
    if end < 0:
        return None, buf
    if not buf.startswith(b"*"):  # an inline command
        return [buf[:end]], buf[end + 2:]
    pos, args = end + 2, []
    for _ in range(int(buf[1:end])):
        j = buf.find(b"\r\n", pos)
        if j < 0:
            return None, buf
        start = j + 2
        stop = start + int(buf[pos + 1:j])
        if len(buf) < stop + 2:
            return None, buf
        args.append(buf[start:stop])
        pos = stop + 2
    return args, buf[pos:]


def resp_encode(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of a redis-server, command by command: each held
    `delay` seconds (a slow store), and with `lose` (N or 'all') the COMPETE write before each
    compare-and-set (EVAL/EVALSHA of one key)."""

    def __init__(self, upstream, lose=None):
        self.upstream, self.delay, self.lose = upstream, 0.0, lose
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.lock = threading.Lock()
        self.side = None
        self.sockets = []
        # key -> races its current decision has lost so far
        self.lost = {}
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        for s in [self.server, self.side, *self.sockets]:
            if s is not None:
                with contextlib.suppress(OSError):
                    s.close()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
                upstream = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                if self.server.fileno() < 0:
                    return
                continue
            self.sockets += [client, upstream]
            threading.Thread(target=self._to_server, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._to_client, args=(upstream, client), daemon=True).start()

    @staticmethod
    def _to_client(upstream, client):
        with contextlib.suppress(OSError):
            while data := upstream.recv(65536):
                client.sendall(data)
        for s in (upstream, client):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def _to_server(self, client, upstream):
        buf = b""
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                buf += data
                while True:
                    args, rest = resp_command(buf)
                    if args is None:
                        break
                    raw, buf = buf[:len(buf) - len(rest)], rest
                    if self.delay:
                        time.sleep(self.delay)
                    if self.lose is not None and args[0].upper() in (b"EVAL", b"EVALSHA") and args[2:3] == [b"1"]:
                        self._compete(args[3], args[4])
                    upstream.sendall(raw)
        for s in (upstream, client):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def _compete(self, key, version):
        with self.lock:
            if self.lose != "all" and self.lost.get(key, 0) >= self.lose:
                self.lost[key] = 0  # this write goes through: the next decision loses N again
                return
            if self.side is None:
                self.side = socket.create_connection(("127.0.0.1", self.upstream))
            self.side.sendall(resp_encode("EVAL", COMPETE, 1, key, version))
            reply = b""
            while not reply.endswith(b"\r\n"):
                reply += self.side.recv(4096)
            assert reply.startswith(b":"), f"the competing write failed: {reply!r}"
            self.lost[key] = self.lost.get(key, 0) + int(reply[1:].strip() == b"1")
