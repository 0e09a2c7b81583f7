"""A fault-injecting proxy in front of a real server (the served-model and completions tests).

Only the faults are made here; every other answer is the real server's.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request


class FaultProxy:
    """A small HTTP proxy on 127.0.0.1 in front of the real server that answers chosen requests
    itself: ``faults`` maps the n-th request (1-based) to (status, headers) or (status, headers,
    body); ``fail_when`` is a
    substring of the body that always gets a 500 (set it to None to stop). A GET is passed
    through uncounted. It records every Authorization header seen, and every POST body
    (``bodies``, parsed). ``rewrite(request, answer) -> bytes`` replaces the real server's
    answer to a POST (both parsed) with other bytes: an answer in another shape than the server
    gives, everything else in it the real server's. ``delay``: seconds before each answer."""

    def __init__(
        self,
        upstream: str,
        faults: dict[int, tuple[int, dict]] | None = None,
        fail_when: str | None = None,
        rewrite=None,
        delay: float = 0.0,
    ):
        import sys
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        proxy = self
        self.upstream, self.faults, self.fail_when = upstream, dict(faults or {}), fail_when
        self.count, self.authorizations, self.lock = 0, [], threading.Lock()
        self.rewrite, self.delay, self.bodies = rewrite, delay, []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status: int, body: bytes, headers: dict) -> None:
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                with proxy.lock:
                    proxy.authorizations.append(self.headers.get("Authorization"))
                try:
                    with urllib.request.urlopen(proxy.upstream + self.path, timeout=600) as response:
                        return self._reply(response.status, response.read(), {})
                except urllib.error.HTTPError as exc:
                    return self._reply(exc.code, exc.read(), {})

            def do_POST(self):
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy.lock:
                    proxy.count += 1
                    number = proxy.count
                    proxy.authorizations.append(self.headers.get("Authorization"))
                    proxy.bodies.append(json.loads(data))
                if number in proxy.faults:  # (status, headers) or (status, headers, body bytes)
                    status, headers, *body = proxy.faults[number]
                    text = body[0] if body else json.dumps({"error": f"injected {status}"}).encode()
                    return self._reply(status, text, headers)
                if proxy.fail_when and proxy.fail_when.encode() in data:
                    return self._reply(500, b'{"error": "injected 500 for this row"}', {})
                request = urllib.request.Request(
                    proxy.upstream + self.path, data=data, headers={"Content-Type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=600) as response:
                        status, answer = response.status, response.read()
                except urllib.error.HTTPError as exc:
                    return self._reply(exc.code, exc.read(), {})
                if proxy.rewrite is not None and status == 200:
                    answer = proxy.rewrite(json.loads(data), json.loads(answer))
                if proxy.delay:
                    time.sleep(proxy.delay)
                return self._reply(status, answer, {})

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                # a client that hung up first (a size or time limit under test) is no error of the
                # proxy; its traceback would land in whatever test's captured stderr runs next
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
