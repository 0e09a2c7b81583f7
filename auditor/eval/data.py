"""Labeled rows for `pcdlint eval`: JSONL or CSV, labels checked against the schema's options.

JSONL: one object per line, ``{"context": "...", "labels": {"field": value, ...}}`` (an
optional ``"id"``). CSV: a ``context`` column and one column per field (an optional ``id``);
booleans as ``true``/``false``, numbers and ``null`` as their JSON text, other cells as strings;
an empty cell means "not labeled". A row may leave fields unlabeled; it then does not count for
them. A label that is not one of the field's options is an input error naming row and field.

The file is read like any input of `check` (auditor.schema.documents.read_source): a regular
file within the size limit (a FIFO or /dev/zero is refused, never read), nesting within the
depth limit, integers within Python's digit limit. JSONL lines end at `\n` only, as JSON
defines them: U+2028, U+2029 and NEL are valid inside a string. A CSV cell may be as long as
the file (Python's csv module stops at 128 KiB by default), and a header naming one column twice
is refused. Values quoted in messages are cut (auditor.shown).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import InputFileError, UsageError
from auditor.paths import resolve_path
from auditor.schema.documents import MAX_DEPTH, MAX_FILE_BYTES, check_unicode, nesting_depth, read_source
from auditor.shown import shorten, shown


@dataclass
class EvalField:
    """One enum-like field of the schema, options in schema order."""

    name: str
    options: list
    description: str = ""
    label: str = ""  # the field's path, when its key is not unique in the schema


@dataclass
class Row:
    number: int  # 1-based line (JSONL) or record (CSV) number, for messages
    id: str
    context: str
    labels: dict[str, int]  # field name -> gold option index

    @property
    def key(self) -> str:
        """The score-cache key of this row: scores depend on the context only, not on labels."""
        return context_hash(self.context)


def context_hash(context: str) -> str:
    return hashlib.sha256(context.encode("utf-8")).hexdigest()


def _option_index(field: EvalField, value) -> int | None:
    for index, option in enumerate(field.options):
        if type(option) is type(value) and option == value:
            return index
    return None


def _csv_value(cell: str):
    """A CSV cell as a JSON scalar: true/false/null/numbers by their JSON text, else the string."""
    text = cell.strip()
    if text in ("true", "false", "null"):
        return json.loads(text)
    try:
        number = json.loads(text)
    except (ValueError, RecursionError):
        return cell
    return number if isinstance(number, (int, float)) and not isinstance(number, bool) else cell


def _labels(where: str, raw: dict, fields: dict[str, EvalField], from_csv: bool) -> dict[str, int]:
    labels = {}
    for name, value in raw.items():
        if name not in fields:
            raise UsageError(
                f"{where}: label for unknown field {shorten(repr(name))} "
                f"(schema fields: {shorten(', '.join(fields))})"
            )
        if value is None or (from_csv and value == ""):
            continue
        field = fields[name]
        cell = value
        if from_csv:
            value = _csv_value(cell)
        index = _option_index(field, value)
        if index is None and from_csv:
            index = _option_index(field, cell)  # a string option that looks like a number or boolean
        if index is None:
            listed = ", ".join(shown(o, limit=40) for o in field.options[:8])
            raise UsageError(
                f"{where}: label {shown(value, limit=80)} for field {shorten(repr(name))} "
                f"is not one of its options ({listed}{', …' if len(field.options) > 8 else ''})"
            )
        labels[name] = index
    return labels


def _jsonl_rows(text: str, display: str, fields: dict[str, EvalField]) -> list[Row]:
    rows = []
    # JSON's own line rule: only \n ends a line (str.splitlines would also split at U+2028,
    # U+2029, NEL and form feed, all valid inside a JSON string)
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        where = f"{display}:{number}"
        try:
            record = json.loads(line)
            depth = nesting_depth(record)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise UsageError(f"{where}: nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as exc:  # an integer past Python's digit limit
            raise UsageError(f"{where}: invalid JSON value: {shorten(str(exc), 80)}") from None
        if depth > MAX_DEPTH:
            raise UsageError(f"{where}: nested {depth} levels deep, over the limit of {MAX_DEPTH}")
        if "\\u" in line:  # only an escape can write a lone surrogate, which no tokenizer encodes
            try:
                check_unicode(record, where)
            except InputFileError as exc:
                raise UsageError(str(exc)) from None
        if not isinstance(record, dict) or not isinstance(record.get("context"), str):
            raise UsageError(f'{where}: a row is an object with a string "context" and a "labels" object')
        raw = record.get("labels", {})
        if not isinstance(raw, dict):
            raise UsageError(f'{where}: "labels" must be an object of field: value')
        rows.append(
            Row(
                number,
                str(record.get("id", number)),
                record["context"],
                _labels(where, raw, fields, from_csv=False),
            )
        )
    return rows


def _csv_rows(text: str, display: str, fields: dict[str, EvalField]) -> list[Row]:
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(max(previous_limit, MAX_FILE_BYTES))  # a cell may be as long as the file
    try:
        return _csv_records(text, display, fields)
    finally:
        csv.field_size_limit(previous_limit)


def _csv_records(text: str, display: str, fields: dict[str, EvalField]) -> list[Row]:
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise UsageError(f"{display}:1: invalid CSV: {exc}") from None
    if "context" not in header:
        raise UsageError(f"{display}: a CSV needs a 'context' column and one column per field")
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise UsageError(
            f"{display}:1: column {shorten(repr(twice[0]))} appears more than once in the "
            "header (one column per field)"
        )
    rows: list[Row] = []
    try:
        for record in reader:
            where = f"{display}:{reader.line_num}"
            if None in record:
                raise UsageError(f"{where}: more cells than header columns")
            raw = {k: v for k, v in record.items() if k not in ("context", "id") and v is not None}
            rows.append(
                Row(
                    reader.line_num,
                    record.get("id") or str(len(rows) + 1),
                    record["context"] or "",
                    _labels(where, raw, fields, from_csv=True),
                )
            )
    except csv.Error as exc:
        raise UsageError(f"{display}:{reader.line_num}: invalid CSV: {exc}") from None
    return rows


def load_rows(path: str | Path, fields: list[EvalField]) -> list[Row]:
    """Read labeled rows (``.csv`` by suffix, otherwise JSONL); raise UsageError on bad input."""
    display = shorten(str(path))
    path = resolve_path(path, "--data")
    try:
        text = read_source(path, display).decode("utf-8-sig")
    except InputFileError as exc:
        raise UsageError(f"{exc.path}: {exc.message.removesuffix('; skipped')}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{display}: not UTF-8 text (byte {exc.start})") from None
    by_name = {field.name: field for field in fields}
    rows = (
        _csv_rows(text, display, by_name)
        if path.suffix.lower() == ".csv"
        else _jsonl_rows(text, display, by_name)
    )
    if not rows:
        raise UsageError(f"{display}: no labeled rows")
    if not any(row.labels for row in rows):
        raise UsageError(f"{display}: no row labels any field of the schema ({', '.join(by_name)})")
    return rows


def load_fields(path: str | Path) -> list[EvalField]:
    """The enum-like fields of a schema file (any format `check` reads), in document order."""
    from auditor.schema.cache import analyse_file

    model = analyse_file(resolve_path(path), shorten(str(path)))
    if not model.sites:
        raise UsageError(f"{path}: no enum or boolean fields found (format: {model.format})")
    names = [site.name for site in model.sites]
    return [
        EvalField(
            site.name,
            list(site.options),
            site.description,
            label=site.field if names.count(site.name) > 1 else "",
        )
        for site in model.sites
    ]
