"""The one output writer: reports, baselines and stdout, escaped for their sink.

- `-` (and /dev/stdout, /dev/fd/1) is standard output.
- Anything that exists and is not a regular file (a device such as /dev/null or /dev/full, a
  FIFO, a terminal) is written through: opened without creating or truncating, never replaced.
- A regular file (or a new one) is written to a temp file made with tempfile.mkstemp in the
  target's own directory, then os.replace'd over it: readers never see half a report, and no
  predictable temp name exists to plant a symlink on. A symlink is followed: its target is
  replaced and the link kept. The file keeps its mode (new files get 0666 & ~umask).
- An output equal to an input of the run, or to another output of the same run, is refused
  (exit 2) before anything is linted; a write error (ENOSPC from /dev/full, EBADF from a
  read-only stdout) is a one-line usage error, exit 2.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from auditor.errors import UsageError
from auditor.reporting import escape

STDOUT_NAMES = {"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}
PLAIN_KINDS = {"text", "suggest", "verify"}  # human text: terminal escaping


def sink_text(text: str, kind: str, colour: bool = False) -> str:
    """Escape a rendered report for where it goes (see auditor.reporting.escape)."""
    if kind in PLAIN_KINDS:
        return escape.terminal(text, colour)
    if kind == "github":
        # every interpolated value is already workflow-escaped; controls still never reach the log
        return escape.terminal(text, commands=False)
    return text


def encode_text(text: str) -> bytes:
    """The bytes written for `text`: UTF-8, with a lone surrogate (an undecodable file name) as
    `\\udcff`: readable, and in JSON a valid escape; never an encoding crash."""
    return text.encode("utf-8", "backslashreplace")


def _masked(report: str | bytes, kind: str) -> str | bytes:
    """`report` with every registered credential masked (auditor.redaction): a JSON document
    inside its strings, so it stays valid JSON; anything else as text."""
    from auditor import redaction

    if not redaction.secrets() or not redaction.holds_secret(report):
        return report
    import json

    document, parsed = None, False
    if kind == "json":
        try:
            document, parsed = json.loads(report), True
        except (ValueError, RecursionError):
            pass
    if parsed:  # the JSON writer's form (auditor.reporting.json_text), from the masked document
        masked = json.dumps(
            escape.strict_json(redaction.redact_value(document)),
            indent=2,
            ensure_ascii=False,
            allow_nan=False,
        )
        return encode_text(masked + "\n") if isinstance(report, bytes) else masked + "\n"
    text = report.decode("utf-8", "surrogateescape") if isinstance(report, bytes) else report
    for secret in redaction.secrets():
        text = text.replace(json.dumps(secret)[1:-1], redaction.MASK)
    text = redaction.redact(text)
    return text.encode("utf-8", "surrogateescape") if isinstance(report, bytes) else text


class Chunks:
    """A report's bytes in pieces (a JSON report whose rows stream from disk,
    auditor.eval.spill): written one piece at a time, never joined in memory."""

    def __init__(self, pieces: Iterable[bytes]):
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.pieces)


def _masked_pieces(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """Each piece of a streamed JSON report with every registered credential masked. The pieces
    are cut between JSON values (auditor.reporting.json_stream: a row a piece), never inside a
    string, so a key written in a string is whole within one piece and masked there."""
    from auditor import redaction

    for piece in pieces:
        if redaction.secrets() and redaction.holds_secret(piece):
            masked = _masked(piece, "text")
            yield masked if isinstance(masked, bytes) else encode_text(masked)
        else:
            yield piece


def _sink_bytes(report: str | bytes | Chunks, kind: str, colour: bool) -> Any:
    """A rendered report's bytes for its sink; a formatter's own bytes (auditor.reporting
    `render_output`: JSON and SARIF, which are written unescaped) are written as they are.
    Every registered credential is masked first (auditor.redaction), in a streamed report
    piece by piece."""
    if isinstance(report, Chunks):
        if kind in PLAIN_KINDS or kind == "github":
            raise TypeError(f"{kind} output is escaped for its sink: render it as text")
        return Chunks(_masked_pieces(report))
    report = _masked(report, kind)
    if isinstance(report, bytes):
        if kind in PLAIN_KINDS or kind == "github":
            raise TypeError(f"{kind} output is escaped for its sink: render it as text")
        return report
    return encode_text(sink_text(report, kind, colour))


def _identity(path: Path) -> tuple | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _replaceable(target: str) -> bool:
    """Whether the target is (or would become) a regular file we replace."""
    if target in STDOUT_NAMES:
        return False
    try:
        return stat.S_ISREG(Path(target).stat().st_mode)
    except OSError:
        return True  # does not exist yet: it will be a new regular file


def _same(a: str, b: str) -> bool:
    ida, idb = _identity(Path(a)), _identity(Path(b))
    if ida is not None and ida == idb:
        return True
    return Path(a).resolve() == Path(b).resolve()


def check_outputs(outputs: list[tuple[str, str]], inputs: list[str]) -> None:
    """Refuse an output (flag, path) that is an input or another output of the same run."""
    seen: list[tuple[str, str]] = []
    for flag, target in outputs:
        if not _replaceable(target):
            continue
        for given in inputs:
            if _same(target, given):
                raise UsageError(f"{flag} {target}: refusing to overwrite an input file")
        for other_flag, other in seen:
            if _same(target, other):
                raise UsageError(
                    f"{flag} {target}: same file as {other_flag}; each output needs its own path"
                )
        seen.append((flag, target))


def write_stdout(text: str | bytes | Chunks, kind: str = "text", colour: bool = False) -> None:
    """Print to standard output; a closed, read-only or full stdout is a usage error."""
    data = _sink_bytes(text, kind, colour)
    stream = sys.stdout
    if stream is None:
        raise UsageError("standard output is closed; use -o FILE")
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        for piece in data if isinstance(data, Chunks) else (data,):
            if buffer is not None:
                buffer.write(piece)
            else:
                stream.write(piece.decode("utf-8"))
        if buffer is not None:
            buffer.flush()
        else:
            stream.flush()
    except OSError as exc:
        _silence_stdout()
        raise UsageError(f"standard output: cannot write ({exc.strerror or exc})") from None


def _silence_stdout() -> None:
    """After a failed write, point fd 1 at /dev/null so the exit-time flush cannot fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def write_error(message: str) -> None:
    """One line on stderr: control characters (CR/LF included) escaped, never a command."""
    from auditor import redaction

    line = encode_text(escape.one_line(redaction.redact(message))).decode("utf-8") + "\n"
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass  # nowhere left to report to


def write_report(
    text: str | bytes | Chunks,
    target: str,
    flag: str,
    inputs: list[str],
    kind: str = "json",
    colour: bool = False,
) -> None:
    """Write `text` to `target` (see the module docstring); `flag` names the option in errors."""
    if target in STDOUT_NAMES:
        write_stdout(text, kind, colour)
        return
    check_outputs([(flag, target)], inputs)
    data = _sink_bytes(text, kind, colour)
    path = Path(target)
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UsageError(f"{flag} {target}: cannot write ({exc.strerror or exc})") from None
    try:
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise UsageError(f"{flag} {target}: is a directory")
        if info is not None and not stat.S_ISREG(info.st_mode):
            _write_through(path, data)
        else:
            _replace(path.resolve(), data, info)
    except OSError as exc:
        raise UsageError(f"{flag} {target}: cannot write ({exc.strerror or exc})") from None


def _write_through(path: Path, data: Any) -> None:
    """Write into a device or FIFO. The open never blocks (O_NONBLOCK): a FIFO nobody reads is
    an error (ENXIO), not a hang; the writes then block as usual while a reader drains it."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, os.O_WRONLY | nonblock | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(exc.errno, "a FIFO with no reader") from None
        raise
    try:
        if nonblock:
            os.set_blocking(fd, True)
        for piece in data if isinstance(data, Chunks) else (data,):
            view = memoryview(piece)
            while view:
                written = os.write(fd, view)
                view = view[written:]
    finally:
        os.close(fd)


def _replace(real: Path, data: Any, info: os.stat_result | None) -> None:
    real.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # (only where a file is written: not at every start-up)

    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        if info is not None:
            mode = stat.S_IMODE(info.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            fd = -1
            for piece in data if isinstance(data, Chunks) else (data,):
                handle.write(piece)
        os.replace(tmp, real)
        tmp = ""
    finally:
        if fd != -1:
            os.close(fd)
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass
