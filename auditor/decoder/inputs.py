"""The decision requests `verify` and `eval` ask: every request in the files named, as the System
One body a server is sent.

A file may hold requests in any of the three shapes (System One, OpenAI Decisions, SGLang) or
none: then its schema's enum and boolean fields are asked as choice questions. Each body is
checked (`check_body`; what is sent is what was read: auditor.decoder.decision_request) before
anything is sent; a file that holds neither is a usage error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from auditor.errors import UsageError


@dataclass
class DecisionInput:
    """One request to ask: the file, where in it the request sits, and its System One body."""

    path: str
    pointer: str  # "" for a file that is one request, or a schema's fields
    body: dict

    @property
    def label(self) -> str:
        return self.path if not self.pointer else f"{self.path}#{self.pointer}"


def load_requests(paths: list[str], context: str | None) -> list[DecisionInput]:
    """Every decision request in the files (any of the three shapes), as a System One body; a file
    with none asks its schema's enum fields as choice questions. ``--context`` is the state of a
    request that has none."""
    from auditor.decoder.decision_request import check_duplicates, check_written, sendable
    from auditor.decoder.systemone import check_body
    from auditor.schema.cache import analyse_file
    from auditor.schema.decisions import (
        LocatedRequest,
        locate_requests,
        request_questions,
        system_one_body,
    )
    from auditor.schema.documents import resolve_pointer

    inputs = []
    for name in paths:
        model = analyse_file(Path(name), name)
        data = model.document.data
        located = locate_requests(data)
        for request in located:
            node = resolve_pointer(data, request.pointer)
            pointer = request.pointer if len(located) > 1 else ""
            label = DecisionInput(name, pointer, {}).label
            # what is sent is what was read: no repeated key, name or option lost on the way
            check_duplicates(label, model.document.duplicates, request.pointer)
            if request.shape != "systemone":
                read = [q for q in request_questions(LocatedRequest("", request.shape), node) if q.kind]
                check_written(
                    label, [q.name for q in read], {q.name: q.options for q in read if q.kind == "choice"}
                )
            body = system_one_body(node, context if context is not None else "")
            inputs.append(DecisionInput(name, pointer, sendable(label, body)))
        if located:
            continue
        if not model.sites:
            raise UsageError(
                f"{name}: no decision request and no enum or boolean fields (format: {model.format})"
            )
        for site in model.sites:
            check_duplicates(name, model.document.duplicates, site.pointer)
        check_written(
            name,
            [site.question_name or site.name for site in model.sites],
            {site.question_name or site.name: list(site.options) for site in model.sites},
        )
        questions: dict = {}
        for site in model.sites:
            questions.update(system_one_body(site, context or "")["questions"])
        body = {"state": context or "", "questions": questions}
        inputs.append(DecisionInput(name, "", sendable(name, body)))
    for item in inputs:
        try:
            check_body(item.body)
        except Exception as exc:  # DecoderError: the body's outline
            raise UsageError(f"{item.label}: {exc}") from None
    return inputs


CONTEXT_MAX_BYTES = 4 * 1024 * 1024  # --context @FILE: far more than any model's context holds


def read_context(context_arg: str | None) -> str | None:
    """``--context``: the text itself, or ``@FILE`` read as every input is (auditor.limits.read_regular:
    a regular file of at most ``CONTEXT_MAX_BYTES``, never a FIFO or device opened; UTF-8)."""
    from auditor.limits import Unreadable, read_regular
    from auditor.paths import resolve_path
    from auditor.shown import shorten

    if context_arg is None or not context_arg.startswith("@"):
        return context_arg
    name = context_arg[1:]
    shown = shorten(name)
    path = resolve_path(name, "--context")  # ~user, names too long, NUL: one line
    try:
        data = read_regular(path, CONTEXT_MAX_BYTES)
    except Unreadable as exc:
        raise UsageError(f"--context @{shown}: {exc.reason}") from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--context @{shown}: not UTF-8 (byte {exc.start})") from None
