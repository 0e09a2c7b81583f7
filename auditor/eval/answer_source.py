"""What answers a served decision run's requests (verify and eval on `--backend systemone`): the
server through the one HTTP client, wrapped to record every request and answer (``--record``);
or, with ``--replay``, the recording itself (no client is made, nothing is sent).

``--record`` and ``--replay`` bypass the per-row score cache: a recording holds every request the
run makes, and a replay answers every one from the file. How a run speaks to its user (one line on
stderr) and where the recording is written are the CLI's, handed in as a `RunIO`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.redaction import masked_by

if TYPE_CHECKING:
    from auditor.backends import BackendOptions


@dataclass(frozen=True)
class RunIO:
    """How a run reaches its user: ``say`` writes one line (stderr), ``quiet`` drops the lines
    that announce work (the probes' request counts; never a replay's note), and
    ``write_recording(text, path, inputs)`` writes the ``--record`` file (never over an input)."""

    say: Callable[[str], None]
    write_recording: Callable[[str, str, list[str]], None]
    quiet: bool = False

    def announce(self, line: str) -> None:
        if not self.quiet:
            self.say(line)


@dataclass(frozen=True)
class GateOptions:
    """The CI gate options of served decision runs: recorded answers (``--record`` / ``--replay``,
    verify and eval) and eval's paired comparison (``--compare``, auditor.eval.compare)."""

    record_path: str | None = None
    replay_path: str | None = None
    compare: bool = False
    request_b: str | None = None
    base_url_b: str | None = None
    model_b: str | None = None
    fail_if_worse: float | None = None
    alpha: float = 0.05


class AnswerSource:
    """What answers a run's requests: the server (recorded with ``--record``) or a recording."""

    def __init__(self, gate: GateOptions, backend: BackendOptions, route: str, io: RunIO) -> None:
        from auditor.decoder.record import Recording

        self.backend, self.route, self.io = backend, route, io
        self.record_path: str | None = gate.record_path
        self.replay_path: str | None = gate.replay_path
        self.recording = Recording() if self.record_path else None
        self.replay = Recording.load(self.replay_path) if self.replay_path else None
        self.opened: list[Any] = []  # the backends opened here, closed by close()
        self.engines: list[Any] = []

    @property
    def bypasses_cache(self) -> bool:
        return bool(self.record_path or self.replay_path)

    def engine(self, base_url: str | None, model: str | None, side: str | None = None) -> Any:
        from auditor.decoder.open import open_backend
        from auditor.decoder.record import RecordingBackend, ReplayBackend

        if self.replay is not None:
            route = self.route if self.route.startswith("/") else "/" + self.route
            endpoint = base_url.rstrip("/") + route if base_url else f"replay of {self.replay_path}"
            engine: Any = ReplayBackend(
                self.replay, str(self.replay_path), model=model, endpoint=endpoint, side=side
            )
        else:
            if not base_url:
                raise UsageError(
                    "--backend systemone needs --base-url URL (the server root, e.g. "
                    "http://127.0.0.1:8080), or --replay FILE"
                )
            engine = open_backend(
                replace(self.backend, backend="systemone", base_url=base_url, model=model, route=self.route),
                decisions=True,
            )
            self.opened.append(engine)
            if self.recording is not None:
                engine = RecordingBackend(engine, self.recording, side)
        self.engines.append(engine)
        return engine

    def answers_block(self) -> dict | None:
        """The report's ``server.answers``: where the answers came from (record or replay)."""
        if self.replay is not None:
            return {
                "mode": "replay",
                "path": self.replay_path,
                "recorded": self.replay.header.get("recorded"),
                "servers": self.replay.header.get("servers"),
                "replayed": sum(getattr(e, "replayed", 0) for e in self.engines),
                "note": self.replay.when(),
            }
        if self.recording is not None:
            return {"mode": "record", "path": self.record_path, "requests": len(self.recording.entries)}
        return None

    def replay_note(self) -> str | None:
        """The line that heads a replayed run's text report (when and from what it was recorded)."""
        return None if self.replay is None else self.replay.when()

    def announce(self) -> None:
        if self.replay is not None:
            self.io.say(f"pcdlint: replaying {self.replay_path}: {self.replay.when()}")

    def finish(self, inputs: list[str]) -> None:
        """Write the recording (also after an interruption: what was answered is kept); close."""
        from auditor.version import __version__

        try:
            if self.recording is not None and self.record_path:

                def redact(text: str) -> str:
                    for engine in self.engines:
                        text = masked_by(engine, text)
                    return text

                self.io.write_recording(self.recording.dumps(__version__, redact), self.record_path, inputs)
        finally:
            self.close()

    def close(self) -> None:
        for opened in self.opened:
            opened.close()
        self.opened = []


def name_request(error: UsageError, request_path: str) -> UsageError:
    """A replay miss with the request file named."""
    from auditor.decoder.record import NotRecorded

    return UsageError(f"{request_path}: {error}") if isinstance(error, NotRecorded) else error
