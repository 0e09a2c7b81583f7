"""A System One stand-in server that answers every request after a fixed delay.

A MEASURING INSTRUMENT, not evidence that any feature works: it does not run a model, it answers
``POST /v1/systemone`` with a well-formed answer to the request it is started with (probabilities
picked by a CRC of the request body, so rows differ) after ``--delay-ms``, so that what a
benchmark measures is the client. Its own cost per request is a few tens of microseconds (an
asyncio protocol that reads the headers and the body and writes a prepared answer); ``--workers``
processes share the port (SO_REUSEPORT) so it is not what saturates. ``benchmarks/eval_scale.py``
measures its capacity before using it.

Usage: python benchmarks/systemone_standin.py REQUEST.json PORT [--delay-ms 20] [--workers 2]
Prints ``ready`` on stdout when it listens. ``GET /health`` answers at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import signal
import socket
import sys
import zlib
from pathlib import Path

VARIANTS = 8  # distinct answers, chosen per request body


def answers_for(request: dict) -> list[bytes]:
    """``VARIANTS`` full HTTP answers (status line, headers, JSON body) to ``request``'s questions."""
    out = []
    for variant in range(VARIANTS):
        answers = {}
        for qid, question in request["questions"].items():
            kind = question.get("type")
            if kind == "noul":
                answers[qid] = {"noul": round((variant + 0.5) / VARIANTS, 4)}
                continue
            if kind == "choice":
                keys = [str(k) for k in question["criteria"]]
            else:
                keys = [str(i) for i in range(len(question["criteria"]))]
            top = variant % len(keys)
            rest = 0.4 / max(1, len(keys) - 1)
            probs = {key: (0.6 if i == top else rest) if len(keys) > 1 else 1.0 for i, key in enumerate(keys)}
            block: dict = {"probabilities": probs}
            if kind == "choice":
                block["choice"] = keys[top]
            else:
                block["score"] = float(top)
            answers[qid] = block
        body = json.dumps({"answers": answers}).encode()
        head = (
            f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode()
        out.append(head + body)
    return out


HEALTH = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
BAD = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class StandIn(asyncio.Protocol):
    def __init__(self, answers: list[bytes], delay: float):
        self.answers, self.delay = answers, delay
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            if head.startswith("GET /health"):
                self._send(HEALTH, 0.0)
            elif head.startswith("POST "):
                self._send(self.answers[zlib.crc32(body) % len(self.answers)], self.delay)
            else:
                self._send(BAD, 0.0)

    def _send(self, answer: bytes, delay: float) -> None:
        loop = asyncio.get_running_loop()
        transport = self.transport

        def write() -> None:
            if transport is not None and not transport.is_closing():
                transport.write(answer)

        if delay > 0:
            loop.call_later(delay, write)
        else:
            write()


def serve(sock: socket.socket, answers: list[bytes], delay: float) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: StandIn(answers, delay), sock=sock, backlog=4096)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def listening_socket(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(4096)
    return sock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("request", type=Path)
    parser.add_argument("port", type=int)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    answers = answers_for(json.loads(args.request.read_text()))
    delay = args.delay_ms / 1000
    sockets = [listening_socket(args.port) for _ in range(args.workers)]
    workers = [
        multiprocessing.Process(target=serve, args=(sock, answers, delay), daemon=True)
        for sock in sockets[1:]
    ]
    for worker in workers:
        worker.start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so that the workers are ended too
    print("ready", flush=True)
    try:
        serve(sockets[0], answers, delay)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        for worker in workers:
            worker.terminate()


if __name__ == "__main__":
    main()
