"""The credentials of this run, masked in everything pcdlint prints or writes.

An API key read for a server (``auditor.decoder.http.api_key_from_env``) is registered here.
The one output writer (``auditor.reporting.outputs``) masks every registered key in stdout,
stderr and every report file, whatever put it there: pcdlint's own messages, a server's answer
echoing it, or a request whose option names hold it. JSON reports are masked inside their
strings (the document is read, masked and written again, so it stays valid JSON); text and
HTML are masked as text, the key's HTML-escaped form included. ``shown`` values are masked
before they are shortened, so no prefix of a key is left either.
"""

from __future__ import annotations

import html
import threading
from typing import Any

MASK = "***"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()


def masked_by(owner: object, text: str) -> str:
    """``text`` with the key of ``owner`` (a backend, client or engine that knows its own key and
    has a ``redact``) masked; as it is when ``owner`` has none."""
    redact = getattr(owner, "redact", None)
    return redact(text) if redact is not None else text


def register(secret: str | None) -> None:
    if secret:
        with _LOCK:
            _SECRETS.add(secret)


def secrets() -> tuple[str, ...]:
    """The registered secrets, longest first (a key that holds another is masked whole)."""
    with _LOCK:
        return tuple(sorted(_SECRETS, key=len, reverse=True))


def clear() -> None:
    """Forget every registered secret (a new run in the same process: the tests)."""
    with _LOCK:
        _SECRETS.clear()


def redact(text: str) -> str:
    for secret in secrets():
        if secret in text:
            text = text.replace(secret, MASK)
        escaped = html.escape(secret)
        if escaped != secret and escaped in text:
            text = text.replace(escaped, MASK)
    return text


def redact_value(value: Any) -> Any:
    """``value`` (a JSON document) with every secret masked in its strings and keys."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_value(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def holds_secret(data: str | bytes) -> bool:
    """Whether ``data`` may hold a secret as written, HTML-escaped or JSON-escaped."""
    import json

    for secret in secrets():
        for form in {secret, html.escape(secret), json.dumps(secret)[1:-1]}:
            if isinstance(data, bytes) and form.encode("utf-8") in data:
                return True
            if isinstance(data, str) and form in data:
                return True
    return False
