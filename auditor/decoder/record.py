"""Recorded answers: every request a run sends to a decision server and what it answered, as JSONL.

``--record answers.jsonl`` wraps the engine in ``RecordingBackend``: each request the run sends
is written with the server's answer (or its refusal), keyed by ``request_key`` — a SHA-256 of
the body as sent (the model name included) and, where two sides of a comparison would
otherwise share a key, the side — never of the URL (CI replays what a laptop recorded against
another host) and never of the API key. ``--replay answers.jsonl`` puts ``ReplayBackend`` in
the server's place: it answers from the file with no network, and a request the file does not
hold raises ``NotRecorded`` (exit 2) naming what differs from the nearest recorded request.

The file is readable and diffable: a header line (format, when it was recorded, pcdlint's
version, the model name and version each server reported), then one line per request sorted
by key, each with the request, the model asked for and the server's answer (its random
response ``id`` dropped so that two recordings of the same answers are the same file).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from auditor.decoder.systemone import DecisionRefused
from auditor.errors import UsageError
from auditor.redaction import masked_by
from auditor.shown import shorten

FORMAT = "pcdlint-answers"
FORMAT_VERSION = 1
MAX_BYTES = 512 * 1024 * 1024  # the largest recording read
_VOLATILE = ("id",)  # response fields that change on every request (llm2jev: "jev-<random>")
# fields a server may use for the build of the model it serves (OpenAI: system_fingerprint)
_VERSION_FIELDS = ("system_fingerprint", "model_version", "version", "revision")


def request_key(body: dict, model: str | None, side: str | None = None) -> str:
    """What an answer is recorded under: the body and the model identity, never the URL or key."""
    material: dict[str, Any] = {"body": {k: v for k, v in body.items() if k != "model"}, "model": model}
    if side:
        material["side"] = side
    # key order kept: an engine reads the options in the order they are sent (the order probe)
    text = json.dumps(material, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class NotRecorded(UsageError):
    """A replayed run asked for a request the recording does not hold (exit 2)."""

    def __init__(self, path: str, detail: str) -> None:
        self.path, self.detail = path, detail
        super().__init__(
            f"--replay {path}: no recorded answer for {detail}; record the run again with --record"
        )


def _first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The JSON path where ``a`` and ``b`` first differ (None: equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{where}.{key}".lstrip(".")
            found = _first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        if list(a) != list(b):
            return f"{where} (the order of its keys)".lstrip(". ") or "(the order of keys)"
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{where}[{index}]")
            if found:
                return found
        return None
    return None if a == b else (where.lstrip(".") or "(the whole body)")


def _excerpt(value: Any, size: int = 48) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return json.dumps(shorten(text, size), ensure_ascii=False)


@dataclass
class Recording:
    """The recorded requests by key, and what the header says about when and from where."""

    entries: dict[str, dict] = field(default_factory=dict)
    header: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def load(cls, path: str) -> Recording:
        """Read a recording; a file that is not one is a usage error naming the line."""
        from auditor.limits import Unreadable, read_regular

        try:
            raw = read_regular(path, MAX_BYTES)
        except Unreadable as exc:
            raise UsageError(f"--replay {path}: {exc}") from None
        except OSError as exc:
            raise UsageError(f"--replay {path}: cannot read file ({exc.strerror or exc})") from None
        try:
            lines = raw.decode("utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise UsageError(f"--replay {path}: not UTF-8 text (byte {exc.start})") from None
        recording = cls()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            where = f"--replay {path}:{number}"
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                raise UsageError(f"{where}: not a JSON line") from None
            if not isinstance(entry, dict):
                raise UsageError(f"{where}: a line is a JSON object")
            if number == 1 or not recording.header:
                if entry.get("format") != FORMAT or entry.get("version") != FORMAT_VERSION:
                    raise UsageError(
                        f"{where}: not a pcdlint answers file (its first line has no "
                        f'"format": "{FORMAT}", "version": {FORMAT_VERSION})'
                    )
                recording.header = entry
                continue
            key, request = entry.get("key"), entry.get("request")
            answered = isinstance(entry.get("response"), dict) or isinstance(entry.get("refused"), dict)
            if not (isinstance(key, str) and isinstance(request, dict) and answered):
                raise UsageError(f'{where}: a recorded line has "key", "request" and "response" or "refused"')
            if key != request_key(request, entry.get("model"), entry.get("side")):
                raise UsageError(f"{where}: its key is not the fingerprint of its request (edited by hand?)")
            recording.entries[key] = entry
        if not recording.header:
            raise UsageError(f"--replay {path}: empty (no header line)")
        return recording

    def add(
        self, body: dict, model: str | None, side: str | None, response: dict | None, refused: Any
    ) -> None:
        entry: dict[str, Any] = {
            "key": request_key(body, model, side),
            "model": model,
            "request": {k: v for k, v in body.items() if k != "model"},
        }
        if side:
            entry["side"] = side
        if refused is not None:
            entry["refused"] = {"status": refused.status, "message": refused.message}
        else:
            entry["response"] = {k: v for k, v in (response or {}).items() if k not in _VOLATILE}
        with self.lock:
            self.entries[entry["key"]] = entry

    def servers(self) -> list[dict]:
        """Each distinct (model asked for, model and version the server reported), in key order."""
        seen: list[dict] = []
        for key in sorted(self.entries):
            entry = self.entries[key]
            response = entry.get("response") or {}
            version = next((response[f] for f in _VERSION_FIELDS if isinstance(response.get(f), str)), None)
            server = {
                "requested": entry.get("model"),
                "model": response.get("model") if isinstance(response.get("model"), str) else None,
                "version": version,
            }
            if entry.get("side"):
                server["side"] = entry["side"]
            if server not in seen:
                seen.append(server)
        return seen

    def dumps(self, tool_version: str, redact: Any = None) -> str:
        """The file's text: the header, then every entry by key; ``redact`` masks a credential."""
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "recorded": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tool": {"name": "pcdlint", "version": tool_version},
            "servers": self.servers(),
            "requests": len(self.entries),
        }
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps(self.entries[key], ensure_ascii=False) for key in sorted(self.entries)]
        text = "\n".join(lines) + "\n"
        return redact(text) if redact is not None else text

    def when(self) -> str:
        """A replay's one line on what it replays: when, with which pcdlint, from which models."""
        models = sorted(
            {
                f"{s['model']}{' ' + s['version'] if s.get('version') else ''}"
                for s in self.header.get("servers", [])
                if isinstance(s, dict) and isinstance(s.get("model"), str)
            }
        )
        tool = self.header.get("tool", {}) if isinstance(self.header.get("tool"), dict) else {}
        return (
            f"answers recorded {self.header.get('recorded', '(no date)')} by pcdlint "
            f"{tool.get('version', '?')}"
            + (f" from model {', '.join(models)}" if models else " (the server named no model)")
        )

    def miss(self, body: dict, model: str | None, side: str | None) -> str:
        """What a replay names when ``body`` is not recorded: the nearest recorded request's first
        difference (same state first, else same questions), or the state never recorded."""
        body = {k: v for k, v in body.items() if k != "model"}
        state = _excerpt(body.get("state", ""))

        def shape(request: dict) -> list:
            questions = request.get("questions")
            if not isinstance(questions, dict):
                return []
            return [
                (q, list(v.get("criteria") or []) if isinstance(v, dict) else None)
                for q, v in questions.items()
            ]

        # the nearest first: the same questions, then the same options in the same order
        same_state = sorted(
            (e for e in self.entries.values() if e["request"].get("state") == body.get("state")),
            key=lambda e: (
                list(e["request"].get("questions", {})) != list(body.get("questions", {})),
                shape(e["request"]) != shape(body),
            ),
        )
        for entry in same_state:
            if entry.get("model") != model or entry.get("side") != side:
                continue
            where = _first_difference(entry["request"], body)
            return f"the request with state {state}: {where} differs from the recorded one"
        if same_state:
            entry = same_state[0]
            if entry.get("model") != model:
                return (
                    f"the request with state {state} for model {model!r} "
                    f"(recorded for model {entry.get('model')!r})"
                )
            return f"the request with state {state} on side {side or 'a'} (recorded on another side)"
        questions = [sorted(body.get("questions", {}))]
        recorded = any(
            sorted(e["request"].get("questions", {})) == questions[0] for e in self.entries.values()
        )
        return f"the request with state {state} (no request with this state was recorded" + (
            ")" if recorded else f"; questions {', '.join(questions[0])})"
        )


class RecordingBackend:
    """An engine whose every request and answer is also written to a ``Recording``."""

    def __init__(self, inner: Any, recording: Recording, side: str | None = None) -> None:
        self.inner, self.recording, self.side = inner, recording, side

    def _model(self) -> str | None:
        model = getattr(self.inner, "model", None)
        return model if isinstance(model, str) and model else None

    def identity(self) -> dict:
        return self.inner.identity()

    def decide(self, body: dict) -> dict:
        try:
            response = self.inner.decide(body)
        except DecisionRefused as refused:
            self.recording.add(body, self._model(), self.side, None, refused)
            raise
        self.recording.add(body, self._model(), self.side, response, None)
        return response

    def redact(self, text: str) -> str:
        return masked_by(self.inner, text)

    @property
    def stats(self) -> dict:
        return dict(getattr(self.inner, "stats", {}) or {})


class ReplayBackend:
    """Answers from a recording, with no network; an unrecorded request raises ``NotRecorded``."""

    def __init__(
        self,
        recording: Recording,
        path: str,
        *,
        model: str | None,
        endpoint: str | None,
        side: str | None = None,
    ) -> None:
        self.recording, self.path, self.model, self.side = recording, path, model or None, side
        self.endpoint = endpoint
        self.replayed = 0
        self._lock = threading.Lock()

    def identity(self) -> dict:
        return {"backend": "systemone", "endpoint": self.endpoint, "model": self.model}

    def decide(self, body: dict) -> dict:
        entry = self.recording.entries.get(request_key(body, self.model, self.side))
        if entry is None:
            raise NotRecorded(self.path, self.recording.miss(body, self.model, self.side))
        with self._lock:
            self.replayed += 1
        if "refused" in entry:
            raise DecisionRefused(
                int(entry["refused"].get("status", 400)), str(entry["refused"].get("message"))
            )
        return json.loads(json.dumps(entry["response"]))  # a copy: a reader never changes the recording

    def redact(self, text: str) -> str:
        return text

    @property
    def stats(self) -> dict:
        return {"requests": 0, "retries": 0, "by_status": {}, "replayed": self.replayed}
