"""The Action's check of a restored cache (action/prune-cache.sh runs it under `python -I`).

A restored cache comes from an earlier run of the same branch or of the base branch: untrusted
as to its shape. In $PCDLINT_CACHE_DIR this removes, without following any link:

- anything that is neither a regular file nor a folder (a symlink, FIFO, socket or device: a
  read of one could leave the cache, block, or never end);
- a file dated more than five minutes ahead (age pruning would never reach it);
- a file larger than pcdlint reads back (auditor.cachedir.ENTRY_MAX_BYTES);
- the analysis and encoding entries not written for PCDLINT_PRUNE_DAYS days (default 30), with
  the folders left empty. The cache is saved under a new key every run (its entries keep up
  with the repository), so without this the entries of every past version of every linted file
  would be carried from run to run; an entry of a file that has not changed is written again by
  the next run that lints it (that file alone is linted cold once). Converted tokenizers and
  rank tables, at the top of the directory, are kept.

What is left is read by pcdlint as untrusted input too (checked entries: docs/security.md).
Prints one line saying what it removed; never fails the step.
"""

from __future__ import annotations

import os
import stat
import sys
import time

ENTRY_MAX_BYTES = 256 * 1024 * 1024  # auditor.cachedir.ENTRY_MAX_BYTES
FUTURE_SLACK_S = 300
AGED = ("analysis", "encodings")


def prune(cache: str, days: int, now: float) -> dict[str, int]:
    removed = {"not a regular file": 0, "dated in the future": 0, "too large": 0, "old": 0}
    for top, folders, files in os.walk(cache, topdown=True, followlinks=False):
        for name in folders + files:
            path = os.path.join(top, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                continue  # (walked into: os.walk never follows a link)
            why = None
            if not stat.S_ISREG(info.st_mode):
                why = "not a regular file"
            elif info.st_mtime > now + FUTURE_SLACK_S:
                why = "dated in the future"
            elif info.st_size > ENTRY_MAX_BYTES:
                why = "too large"
            elif os.path.relpath(top, cache).split(os.sep)[0] in AGED and info.st_mtime < now - days * 86400:
                why = "old"
            if why is not None:
                try:
                    os.unlink(path)
                    removed[why] += 1
                except OSError:
                    pass
        folders[:] = [f for f in folders if os.path.isdir(os.path.join(top, f))]
    for folder in AGED:  # the folders left empty, deepest first
        for top, _, _ in sorted(os.walk(os.path.join(cache, folder)), key=lambda w: -len(w[0])):
            if top != os.path.join(cache, folder):
                try:
                    os.rmdir(top)
                except OSError:
                    pass
    return removed


def main() -> int:
    cache = os.environ.get("PCDLINT_CACHE_DIR", "")
    days_text = os.environ.get("PCDLINT_PRUNE_DAYS", "30")
    if not cache or not days_text.isdigit():
        return 0
    if os.path.islink(cache) or (os.path.lexists(cache) and not os.path.isdir(cache)):
        os.unlink(cache)  # (a cache directory restored as a link or a file: pcdlint makes a new one)
        print("pcdlint cache: removed the cache directory (not a folder)", file=sys.stderr)
        return 0
    if not os.path.isdir(cache):
        return 0
    removed = prune(cache, int(days_text), time.time())
    shown = ", ".join(f"{count} {why}" for why, count in removed.items() if count) or "nothing"
    print(f"pcdlint cache: removed {shown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
