"""Cache of parsed and crawled files, keyed by content, so unchanged schemas skip the slow part.

Parsing with source positions and checking a schema against its draft's meta-schema cost far
more than tokenizing its options. Both depend only on the file's bytes and on pcdlint's own
parsing code, so the resulting FileModel is pickled under the user cache directory, keyed by the
sha256 of the bytes, the file suffix, and a digest of the modules that produce it (an edit to
the crawler invalidates every entry). Entries are written atomically; a broken or unreadable
entry is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path

from auditor import __version__
from auditor.cachedir import cache_dir
from auditor.schema.documents import parse_document, read_source
from auditor.schema.sites import FileModel, analyse


@lru_cache(maxsize=1)
def _code_key() -> str:
    from importlib.metadata import version

    digest = hashlib.sha256(f"{__version__}|{version('jsonschema')}".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):  # every module of auditor.schema
        digest.update(source.name.encode() + source.read_bytes())
    return digest.hexdigest()[:16]


def analyse_file(path: Path, display: str, use_cache: bool = True) -> FileModel:
    raw = read_source(path, display)
    if not use_cache:
        return analyse(parse_document(raw, path.suffix, display))
    key = hashlib.sha256(raw + path.suffix.lower().encode() + _code_key().encode()).hexdigest()
    entry = cache_dir() / "analysis" / f"{key[:40]}.pickle"
    try:
        with entry.open("rb") as handle:
            model = pickle.load(handle)
        _rebind(model, display)
        return model
    except Exception:  # missing, truncated or from another Python: rebuild it
        pass
    model = analyse(parse_document(raw, path.suffix, display))
    _store(entry, model)
    return model


def _rebind(model: FileModel, display: str) -> None:
    model.document.path = display
    for site in model.sites:
        site.path = display


def _store(entry: Path, model: FileModel) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(model, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except OSError:
        pass  # a read-only cache only costs speed
