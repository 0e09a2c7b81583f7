"""The fields verify scores, and the loader for PCD preset files.

Plain JSON Schemas are parsed by the core linter, which hands over ``FieldSpec``
objects; this module only reads the preset format the PCD engines ship:
``{"context": ..., "schema": {"<field>": {"type": "enum"|"boolean", "choices": [...]}}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from auditor.decoder.errors import DecoderError


@dataclass
class FieldSpec:
    """One enum-like field: its options are JSON scalars in schema order."""

    name: str
    options: list
    description: str = ""
    flagged_codes: tuple[str, ...] = ()


def load_preset_fields(path: str | Path) -> tuple[list[FieldSpec], str]:
    """Read a PCD preset and return its fields (schema order) and its context."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DecoderError(f"preset not found: {path}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise DecoderError(f"cannot read preset {path}: {exc}") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(schema, dict):
        raise DecoderError(f"{path} is not a PCD preset: no 'schema' object of fields")
    fields = []
    for name, spec in schema.items():
        kind = spec.get("type")
        if kind == "boolean":
            options = [True, False]
        elif kind == "enum":
            options = list(spec.get("choices") or [])
            if not options:
                raise DecoderError(f"{path}: enum field {name!r} has no choices")
        else:
            continue  # free-text and other kinds are not decided by PCD scoring
        fields.append(FieldSpec(name, options, spec.get("description", "")))
    return fields, str(data.get("context", ""))
