"""The decision request a server is sent is the request pcdlint read: checked before any request.

``verify`` and ``eval --backend systemone`` turn each request (any of the three shapes, or a
schema's enum fields) into a System One body. Before anything is sent, ``sendable`` checks that
nothing of what was written is lost or changed on the way, and refuses (one line, exit 2,
naming them) what would be:

- a key the source writes twice in one object (JSON keeps the last: the first is never sent);
- two questions with one name (a list-shaped request, or two schema fields of one name): a map
  of questions holds one of them;
- two options that are one key once sent: a System One choice's options are the keys of an
  object, so a non-string option is sent as its JSON text (``true``, ``null``, ``1.5``, never a
  Python repr) and ``true`` beside ``"true"`` would collapse;
- a choice whose criteria are not a non-empty object, a score whose criteria are not a non-empty
  list of levels, a noul whose criteria are neither null nor an object;
- text that no UTF-8 request can carry (a lone surrogate, written as a ``\\ud800`` escape).

``check_route`` bounds ``--route``: a path of at most ``MAX_ROUTE_CHARS`` URL path characters.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from auditor.errors import UsageError

MAX_ROUTE_CHARS = 1024
# RFC 3986 path characters (pchar and "/"), percent-escapes included
_ROUTE = re.compile(r"/?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")


def _shown(value: object, limit: int = 40) -> str:
    from auditor.decoder.decision_answers import shown

    return shown(value, limit)


def check_route(route: str) -> str:
    """``--route`` as a path under the base URL (a leading ``/`` added), or one UsageError line."""
    if len(route) > MAX_ROUTE_CHARS:
        raise UsageError(f"--route: {len(route)} characters; a route is a path of at most {MAX_ROUTE_CHARS}")
    if _ROUTE.fullmatch(route) is None or route.startswith("//") or "://" in route:
        raise UsageError(
            f"--route {_shown(route)}: not a URL path (letters, digits, -._~!$&'()*+,;=:@/ and %XX; "
            "no query, fragment, space or scheme)"
        )
    return route if route.startswith("/") else "/" + route


def _repeats(names: list[str]) -> list[str]:
    return [name for name, count in Counter(names).items() if count > 1]


def _listed(names: list[str]) -> str:
    return ", ".join(_shown(name) for name in names[:5]) + (", …" if len(names) > 5 else "")


def check_written(label: str, names: list[str], options: dict[str, list]) -> None:
    """Refuse repeated question names and options that collapse once sent (``options``: the
    options of each choice as written, any JSON type)."""
    from auditor.schema.decisions import option_key

    repeated = _repeats(names)
    if repeated:
        raise UsageError(
            f"{label}: question name(s) {_listed(repeated)} asked more than once; a System One "
            "request holds each name once, so one would not be sent: rename them"
        )
    for name, written in options.items():
        keys = [option_key(option) for option in written]
        for key in _repeats(keys):
            same = [option for option in written if option_key(option) == key]
            kinds = ", ".join(f"{_shown(option)} ({type(option).__name__})" for option in same[:3])
            raise UsageError(
                f"{label}: question {_shown(name)}: options {kinds} are one key {_shown(key)} once sent; "
                "one would be dropped: make them distinct"
            )


def check_duplicates(label: str, duplicates: list, pointer: str) -> None:
    """Refuse a key written twice inside the request at ``pointer`` (``Document.duplicates``)."""
    inside = [
        d for d in duplicates if not pointer or d.pointer == pointer or d.pointer.startswith(pointer + "/")
    ]
    if inside:
        first = inside[0]
        raise UsageError(
            f"{label}: key {_shown(first.key)} is written {len(first.spans)} times at {_shown(first.pointer, 80)}"
            f"{f' (and {len(inside) - 1} more repeated keys)' if len(inside) > 1 else ''}; only the last "
            "would be sent: remove the repeats"
        )


def sendable(label: str, body: dict) -> dict:
    """``body`` with its question names and choice keys as sent (strings: a YAML file's ``true:``
    or ``1:`` keys as their JSON text), every question's criteria checked; one UsageError line
    naming the question otherwise."""
    from auditor.schema.decisions import option_key

    questions = body.get("questions")
    if not isinstance(questions, dict):
        raise UsageError(f'{label}: a System One request has a "questions" object (name -> question)')
    names = [option_key(name) for name in questions]
    written_options = {
        option_key(name): list(q["criteria"])
        for name, q in questions.items()
        if isinstance(q, dict) and q.get("type") == "choice" and isinstance(q.get("criteria"), dict)
    }
    check_written(label, names, written_options)
    out = {}
    for name, question in questions.items():
        key = option_key(name)
        if not isinstance(question, dict):
            raise UsageError(f"{label}: question {_shown(key)} is not an object")
        criteria = question.get("criteria")
        kind = question.get("type")
        if kind == "choice":
            if not isinstance(criteria, dict) or not criteria:
                raise UsageError(
                    f"{label}: question {_shown(key)}: a choice's criteria are a non-empty object "
                    f"(option -> description or null); got {_what(criteria)}"
                )
            question = {**question, "criteria": {option_key(k): v for k, v in criteria.items()}}
        elif kind == "score":
            if not isinstance(criteria, list) or not criteria:
                raise UsageError(
                    f"{label}: question {_shown(key)}: a score's criteria are a non-empty list of levels; "
                    f"got {_what(criteria)}"
                )
        elif kind == "noul" and criteria is not None and not isinstance(criteria, dict):
            raise UsageError(
                f"{label}: question {_shown(key)}: a noul's criteria are null or an object "
                f"{{true: …, false: …}}; got {_what(criteria)}"
            )
        out[key] = question
        _utf8(label, f"question {_shown(key)}", {key: question})
    sent = {**body, "questions": out}
    _utf8(label, "the state", sent.get("state"))
    return sent


def _utf8(label: str, what: str, value: Any) -> None:
    """Refuse text no UTF-8 request can carry (a lone surrogate, from a ``\\ud800`` escape)."""
    import json

    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        point = ord(exc.object[exc.start]) if isinstance(exc.object, str) else 0
        raise UsageError(
            f"{label}: {what} holds a lone surrogate (U+{point:04X}), which no UTF-8 request can carry"
        ) from None
    except (TypeError, ValueError):
        pass  # not JSON at all: the HTTP client says so


def _what(value: Any) -> str:
    if isinstance(value, dict):
        return "an empty object" if not value else "an object"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    return "null" if value is None else f"{type(value).__name__} {_shown(value)}"
