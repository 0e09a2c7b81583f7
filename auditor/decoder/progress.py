"""Progress of verify's stages on stderr: one tqdm bar per stage, off when not wanted.

``Progress(enabled)`` gives ``with progress.stage(name, total, unit) as tick: ... tick(n)``;
disabled (not a TTY, ``--quiet``), every call is a no-op and tqdm is not imported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO


class Progress:
    def __init__(self, enabled: bool | None = None, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled

    @contextmanager
    def stage(
        self, name: str, total: int | None = None, unit: str = "step"
    ) -> Iterator[Callable[..., object]]:
        if not self.enabled:
            yield lambda amount=1: None
            return
        import shutil

        from tqdm import tqdm

        # a pseudo-terminal without a size reports 0 columns and 0 lines; tqdm then hides every
        # bar as "below the screen" and prints nothing, so both get a fallback
        size = shutil.get_terminal_size((100, 20))
        bar = tqdm(
            total=total,
            desc=name,
            unit=unit,
            file=self.stream,
            leave=True,
            ncols=size.columns or 100,
            nrows=size.lines or 20,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit} [{elapsed}]"
            if total
            else "{desc}: {elapsed}",
        )
        try:
            yield bar.update
            if total:
                bar.n = total
        finally:
            bar.close()

    def note(self, text: str) -> None:
        if self.enabled:
            print(text, file=self.stream, flush=True)
