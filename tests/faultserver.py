"""A small fault-injecting HTTP server on 127.0.0.1, for testing pcdlint's HTTP client.

The point of these tests is the client's behaviour in front of a server that misbehaves
(redirects elsewhere, trickles, answers endlessly, returns malformed JSON), which no real
server does on demand. Each request is answered by ``respond(seen) -> Reply``; a reply's body
is bytes, or an iterable of chunks sent one by one (with an optional pause before each), so a
trickle or an endless body is a bounded generator that also stops when the client hangs up.
Every request seen is recorded (method, path, headers, body, arrival time).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() on arrival


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""
    pause: float = 0.0  # seconds before each chunk of an iterable body
    raw_head: bytes | None = None  # send these bytes byte by byte as the status line and headers


def json_reply(obj_text: str | bytes, status: int = 200, **headers: str) -> Reply:
    body = obj_text.encode() if isinstance(obj_text, str) else obj_text
    return Reply(
        status, {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers}, body
    )


class FaultServer:
    def __init__(self, respond: Callable[[Seen], Reply], host: str = "127.0.0.1"):
        self.respond = respond
        self.seen: list[Seen] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, 16 * 1024 * 1024)) if length else b""
                seen = Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    time.monotonic(),
                )
                outer.seen.append(seen)
                reply = outer.respond(seen)
                self.close_connection = True
                try:
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
                    pass

            def _send(self, reply: Reply) -> None:
                if reply.raw_head is not None:
                    for byte in reply.raw_head:
                        time.sleep(reply.pause)
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Connection", "close")
                self.end_headers()
                if isinstance(reply.body, bytes):
                    self.wfile.write(reply.body)
                    return
                for chunk in reply.body:
                    if reply.pause:
                        time.sleep(reply.pause)
                    self.wfile.write(chunk)
                    self.wfile.flush()

            do_GET = do_POST = _handle

        server_class = ThreadingHTTPServer
        if ":" in host:  # an IPv6 address, e.g. "::1"

            class server_class(ThreadingHTTPServer):  # type: ignore[no-redef]
                address_family = socket.AF_INET6

        self._server = server_class((host, 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
