"""The alias table (aliases.toml): which model names a hosted decision engine moves, the dated
versions each has answered with, and the model an SDK sends when a request names none. Read
once from the package's data file and checked (a malformed row fails at import). Pure."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from auditor.pcd.engines.table import ENGINE_ROWS, EngineTableError


@dataclass(frozen=True)
class DatedVersion:
    version: str
    since: str  # YYYY-MM-DD
    source: str


@dataclass(frozen=True)
class MovingAlias:
    engine: str
    names: tuple[str, ...]
    why: str  # "latest" | "preview"
    versions: tuple[DatedVersion, ...]
    source: str
    read: str

    def matches(self, model: str) -> bool:
        key = model.strip().casefold()
        return any(
            key.endswith(n[1:].casefold()) if n.startswith("*") else key == n.casefold() for n in self.names
        )

    @property
    def pin(self) -> str | None:
        """The dated version to pin the name to: the newest listed, or None."""
        return self.versions[-1].version if self.versions else None


@dataclass(frozen=True)
class SdkDefault:
    engine: str
    sdk: str
    default: str
    source: str
    read: str


WHY = ("latest", "preview")


def _text(raw: dict, key: str, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise EngineTableError(f"aliases.toml {where}: {key!r} must be a non-empty string")
    return value


def load_aliases(text: str) -> tuple[list[MovingAlias], list[SdkDefault]]:
    data = tomllib.loads(text)
    aliases, defaults = [], []
    for number, raw in enumerate(data.get("alias", []), 1):
        where = f"alias row {number}"
        engine = _text(raw, "engine", where)
        if engine not in ENGINE_ROWS or not ENGINE_ROWS[engine].is_decision:
            raise EngineTableError(f"aliases.toml {where}: {engine!r} is no decision engine of engines.toml")
        names = raw.get("names")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise EngineTableError(f"aliases.toml {where}: 'names' must be a list of names")
        why = _text(raw, "why", where)
        if why not in WHY:
            raise EngineTableError(f"aliases.toml {where}: why {why!r} not in {WHY}")
        versions = []
        for entry in raw.get("versions", []):
            if not (
                isinstance(entry, list) and len(entry) == 3 and all(isinstance(e, str) and e for e in entry)
            ):
                raise EngineTableError(f"aliases.toml {where}: a version is [version, since, source]")
            versions.append(DatedVersion(*entry))
        aliases.append(
            MovingAlias(
                engine,
                tuple(names),
                why,
                tuple(versions),
                _text(raw, "source", where),
                _text(raw, "read", where),
            )
        )
    for number, raw in enumerate(data.get("sdk_default", []), 1):
        where = f"sdk_default row {number}"
        engine = _text(raw, "engine", where)
        if engine not in ENGINE_ROWS:
            raise EngineTableError(f"aliases.toml {where}: {engine!r} is no engine of engines.toml")
        defaults.append(
            SdkDefault(
                engine,
                _text(raw, "sdk", where),
                _text(raw, "default", where),
                _text(raw, "source", where),
                _text(raw, "read", where),
            )
        )
    return aliases, defaults


ALIASES, SDK_DEFAULTS = load_aliases(Path(__file__).with_name("aliases.toml").read_text(encoding="utf-8"))


def moving_alias(model: str, engines: list[str]) -> MovingAlias | None:
    """The alias row a model name matches under any of these engines (in table order), or None."""
    return next((a for a in ALIASES if a.engine in engines and a.matches(model)), None)


def sdk_default(engine: str) -> SdkDefault | None:
    """The model an SDK of this engine sends when a request names none, or None."""
    return next((d for d in SDK_DEFAULTS if d.engine == engine), None)


def alias_engines(shape: str) -> list[str]:
    """The engines the alias table has rows for whose route takes a request of this shape (a
    model name means nothing to a vendor whose API takes another shape)."""
    return [e for e in dict.fromkeys(a.engine for a in ALIASES) if shape in ENGINE_ROWS[e].shapes]
