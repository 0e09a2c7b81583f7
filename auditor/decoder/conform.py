"""Conformance across servers: the same decision requests sent to several served engines.

A *servers file* (TOML) lists the servers, one ``[[server]]`` table each::

    [[server]]
    name = "vllm"                          # how the report names it
    base_url = "http://127.0.0.1:8000"     # the server root (auditor.decoder.http's rules)
    route = "/v1/systemone"                # the path after base_url (this default)
    engine = "vllm-systemone"              # the engine-table row it runs
    api_key_env = "VLLM_API_KEY"           # optional: the variable holding its key
    model = "served-name"                  # optional: sent as every body's model

Every request goes to every server through the one HTTP client (one ``HttpClient`` per server,
the key read from its variable and never shown): a System One body as it is written in the file
(every field, so what the server checks is what the file holds), a request in another shape as
its System One equivalent (``auditor.schema.decisions.system_one_body``). What each server did
is an ``Outcome``: answered (with each question's answer, probabilities and label mass),
refused (the HTTP status and the server's message) or failed (unreachable, 5xx, an unreadable
answer). ``question_differences`` lines the servers' answers up per question.

pcdlint's static verdict for each server's engine, and where it disagrees with what the server
did, is the reporting layer's (``auditor.reporting.conform``): the decoder speaks no lint words.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.backends import BackendOptions
from auditor.decoder.errors import DecoderError
from auditor.decoder.open import open_backend
from auditor.decoder.systemone import (
    DEFAULT_ROUTE,
    DecisionRefused,
    QuestionAnswer,
    read_answers,
)
from auditor.pcd.engines.table import EngineRow, UnknownEngineName, check_engine_name

SERVER_KEYS = ("name", "base_url", "route", "engine", "api_key_env", "model")
REQUIRED_KEYS = ("name", "base_url", "engine")
MAX_SERVERS = 32
SERVERS_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ServerSpec:
    """One server of the servers file."""

    name: str
    base_url: str
    engine: EngineRow
    route: str = DEFAULT_ROUTE
    api_key_env: str | None = None
    model: str | None = None

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + self.route

    def describe(self) -> dict:
        """What the report says of the server (the key's variable name, never the key)."""
        return {
            "name": self.name,
            "engine": self.engine.name,
            "endpoint": self.endpoint,
            "model": self.model,
            "api_key_env": self.api_key_env,
        }


def _text(entry: dict, key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise DecoderError(f"{where}: {key} must be a non-empty string")
    return value


def parse_servers(text: str, source: str) -> list[ServerSpec]:
    """The servers of a servers file's text, or DecoderError naming what is wrong (one line)."""
    from auditor.decoder.http import HttpError, parse_origin

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DecoderError(f"{source}: not TOML ({exc})") from None
    unknown = sorted(set(data) - {"server"})
    if unknown:
        raise DecoderError(f"{source}: unknown top-level key {unknown[0]!r} (servers are [[server]] tables)")
    entries = data.get("server")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise DecoderError(f"{source}: no [[server]] tables")
    if len(entries) > MAX_SERVERS:
        raise DecoderError(f"{source}: {len(entries)} servers; at most {MAX_SERVERS}")
    servers: list[ServerSpec] = []
    for index, entry in enumerate(entries, 1):
        where = f"{source}: server {index}"
        extra = sorted(set(entry) - set(SERVER_KEYS))
        if extra:
            raise DecoderError(f"{where}: unknown key {extra[0]!r} (keys: {', '.join(SERVER_KEYS)})")
        missing = [key for key in REQUIRED_KEYS if key not in entry]
        if missing:
            raise DecoderError(f"{where}: {missing[0]} is required")
        name = _text(entry, "name", where)
        assert name is not None
        where = f"{source}: server {name!r}"
        if name in {s.name for s in servers}:
            raise DecoderError(f"{where}: listed twice")
        base_url = _text(entry, "base_url", where)
        assert base_url is not None
        try:
            parse_origin(base_url, f"{where}: base_url")
        except HttpError as exc:
            raise DecoderError(str(exc)) from None
        route = _text(entry, "route", where) or DEFAULT_ROUTE
        if "://" in route or not route.startswith("/"):
            raise DecoderError(f"{where}: route must be a path that starts with / (got {route[:60]!r})")
        engine_name = _text(entry, "engine", where)
        try:
            row = check_engine_name(engine_name or "", ("decision",))
        except UnknownEngineName as error:
            raise DecoderError(f"{where}: engine: {error}") from None
        if "systemone" not in row.shapes:
            raise DecoderError(
                f"{where}: engine {row.name} takes {', '.join(row.shapes)} bodies; conform sends "
                "System One bodies and reads System One answers"
            )
        servers.append(
            ServerSpec(
                name,
                base_url,
                row,
                route,
                _text(entry, "api_key_env", where),
                _text(entry, "model", where),
            )
        )
    return servers


def load_servers(path: str) -> list[ServerSpec]:
    """The servers file at ``path`` (the one file named; nothing else is read)."""
    target = Path(path)
    try:
        if target.is_file() and target.stat().st_size > SERVERS_FILE_BYTES:
            raise DecoderError(f"{path}: larger than {SERVERS_FILE_BYTES} bytes; not a servers file")
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DecoderError(f"{path}: no such servers file") from None
    except IsADirectoryError:
        raise DecoderError(f"{path}: a directory, not a servers file") from None
    except UnicodeDecodeError:
        raise DecoderError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise DecoderError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return parse_servers(text, path)


@dataclass(frozen=True)
class ConformRequest:
    """One decision request of a file: where it is, its shape, the body as written."""

    path: str
    pointer: str
    shape: str
    body: dict

    @property
    def label(self) -> str:
        return self.path if not self.pointer else f"{self.path}#{self.pointer}"


def read_requests(paths: list[str]) -> list[ConformRequest]:
    """Every decision request in the named files, in order; DecoderError for a file with none."""
    from auditor.errors import UsageError
    from auditor.schema.cache import analyse_file
    from auditor.schema.decisions import locate_requests
    from auditor.schema.documents import resolve_pointer

    out: list[ConformRequest] = []
    for name in paths:
        try:
            data = analyse_file(Path(name), name).document.data
        except UsageError as exc:
            raise DecoderError(str(exc)) from None
        located = locate_requests(data)
        if not located:
            raise DecoderError(f"{name}: no decision request (System One, OpenAI Decisions or SGLang body)")
        for request in located:
            node = resolve_pointer(data, request.pointer)
            out.append(ConformRequest(name, request.pointer if len(located) > 1 else "", request.shape, node))
    return out


def body_for(request: ConformRequest) -> tuple[dict, str]:
    """The System One body sent for a request, and how it was made ("as written" or "converted
    from <shape>")."""
    from auditor.schema.decisions import system_one_body

    if request.shape == "systemone":
        return request.body, "as written"
    return system_one_body(request.body), f"converted from {request.shape}"


@dataclass
class Outcome:
    """What one server did with one request."""

    server: str
    status: str  # "answered" | "refused" | "failed"
    http_status: int | None = None
    message: str = ""
    answers: list[QuestionAnswer] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.status == "answered"

    def to_dict(self) -> dict:
        return {
            "server": self.server,
            "status": self.status,
            "http_status": self.http_status,
            "message": self.message or None,
            "answers": [a.to_dict() for a in self.answers],
        }


def ask(
    servers: list[ServerSpec],
    requests: list[ConformRequest],
    client_for: Callable[[ServerSpec], Any],
    concurrency: int = 4,
) -> list[list[Outcome]]:
    """Every request sent to every server: ``result[request][server]``, in the given orders.
    ``client_for(server)`` makes the server's one HTTP client (closed here when done)."""
    clients = {server.name: client_for(server) for server in servers}
    try:
        backends = {
            s.name: open_backend(
                BackendOptions("systemone", model=s.model, base_url=s.base_url, route=s.route),
                decisions=True,
                client=clients[s.name],
            )
            for s in servers
        }

        def one(pair: tuple[int, int]) -> Outcome:
            request, server = requests[pair[0]], servers[pair[1]]
            backend = backends[server.name]
            body, _how = body_for(request)
            try:
                response = backend.decide(body)
            except DecisionRefused as exc:
                return Outcome(server.name, "refused", exc.status, backend.redact(exc.message))
            except DecoderError as exc:
                return Outcome(server.name, "failed", None, backend.redact(str(exc)))
            try:
                answers = read_answers(body, response)
            except DecoderError as exc:
                return Outcome(server.name, "failed", 200, backend.redact(str(exc)))
            except (KeyError, TypeError, AttributeError, IndexError, ValueError):  # an odd body answered
                return Outcome(server.name, "failed", 200, "answered a body pcdlint cannot read answers for")
            return Outcome(server.name, "answered", 200, "", answers)

        pairs = [(r, s) for r in range(len(requests)) for s in range(len(servers))]
        with ThreadPoolExecutor(max_workers=max(1, min(len(pairs), concurrency * len(servers)))) as pool:
            flat = list(pool.map(one, pairs))
    finally:
        for client in clients.values():
            close = getattr(client, "close", None)
            if close is not None:
                close()
    width = len(servers)
    return [flat[i * width : (i + 1) * width] for i in range(len(requests))]


@dataclass
class QuestionDifference:
    """One question across the servers that answered it."""

    question: str
    kind: str
    keys: list[str]
    answers: dict[str, str | None]  # server -> its answer
    probabilities: dict[str, list[float] | None]  # server -> per key, aligned with keys
    label_mass: dict[str, float | None]
    largest_difference: float | None = None  # max over keys of (highest - lowest p)
    at_key: str | None = None

    @property
    def answers_agree(self) -> bool:
        return len(set(self.answers.values())) <= 1

    def to_dict(self) -> dict:
        return {
            "question": self.question,
            "kind": self.kind,
            "keys": self.keys,
            "answers": self.answers,
            "answers_agree": self.answers_agree,
            "probabilities": {
                server: None if probs is None else dict(zip(self.keys, probs))
                for server, probs in self.probabilities.items()
            },
            "label_mass": self.label_mass,
            "largest_difference": self.largest_difference,
            "at_key": self.at_key,
        }


def question_differences(outcomes: list[Outcome]) -> list[QuestionDifference]:
    """Per question (in the order the first answering server lists them), every answering
    server's answer, probabilities and label mass, and the largest probability difference
    between any two of them (at which key)."""
    answered = [o for o in outcomes if o.accepted]
    if not answered:
        return []
    out = []
    for first in answered[0].answers:
        by_server = {o.server: next((a for a in o.answers if a.name == first.name), None) for o in answered}
        got = {s: a for s, a in by_server.items() if a is not None}
        difference = QuestionDifference(
            first.name,
            first.kind,
            list(first.keys),
            {s: a.answer for s, a in got.items()},
            {s: a.probabilities for s, a in got.items()},
            {s: a.label_mass for s, a in got.items()},
        )
        scored = [p for p in difference.probabilities.values() if p is not None]
        if len(scored) >= 2:
            spans = [max(p[k] for p in scored) - min(p[k] for p in scored) for k in range(len(first.keys))]
            top = max(range(len(spans)), key=spans.__getitem__)
            difference.largest_difference, difference.at_key = spans[top], first.keys[top]
        out.append(difference)
    return out
