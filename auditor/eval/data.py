"""Labeled rows for `pcdlint eval`: JSONL or CSV, labels checked against the schema's options.

JSONL: one object per line, ``{"context": "...", "labels": {"field": value, ...}}`` (an
optional ``"id"``). CSV: a ``context`` column and one column per field (an optional ``id``);
booleans as ``true``/``false``, numbers and ``null`` as their JSON text, other cells as strings;
an empty cell means "not labeled". A row may leave fields unlabeled; it then does not count for
them. A label that is not one of the field's options is an input error naming row and field.

The file is read as a stream (auditor.eval.stream; ``LabeledData``): a regular file of any
size (a FIFO or /dev/zero is refused, never read), one row at a time, a row over
``--max-row-bytes`` kept as a failed row (``Row.error``), nesting within the depth limit,
integers within Python's digit limit. JSONL lines end at `\n` only, as JSON defines them: U+2028, U+2029 and NEL are valid
inside a string. A CSV cell may be as long as the row limit (Python's csv module stops at
128 KiB by default), and a header naming one column twice is refused. Values quoted in
messages are cut (auditor.shown).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from auditor.errors import UsageError
from auditor.eval.stream import DEFAULT_MAX_ROW_BYTES, DataStream, Oversized
from auditor.paths import resolve_path
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
    error: str | None = None  # a row that could not be read (over the byte limit): a failed row

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


def _jsonl_row(number: int, record: object, where: str, fields: dict[str, EvalField]) -> Row:
    if not isinstance(record, dict) or not isinstance(record.get("context"), str):
        raise UsageError(f'{where}: a row is an object with a string "context" and a "labels" object')
    raw = record.get("labels", {})
    if not isinstance(raw, dict):
        raise UsageError(f'{where}: "labels" must be an object of field: value')
    return Row(
        number, str(record.get("id", number)), record["context"], _labels(where, raw, fields, from_csv=False)
    )


def _csv_cells(text: str, where: str) -> list[str]:
    try:
        return next(csv.reader([text]), [])
    except csv.Error as exc:
        raise UsageError(f"{where}: invalid CSV: {exc}") from None


def _csv_rows(stream: DataStream, fields: dict[str, EvalField]) -> Iterator[Row]:
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(max(previous_limit, stream.max_row_bytes))  # a cell may be as long as the row
    try:
        header: list[str] | None = None
        count = 0
        for number, record in stream.csv_records():
            where = f"{stream.display}:{number}"
            if header is None:
                if isinstance(record, Oversized):
                    raise UsageError(f"{where}: the CSV header is {record.error}")
                header = _csv_cells(record, where)
                if "context" not in header:
                    raise UsageError(
                        f"{stream.display}: a CSV needs a 'context' column and one column per field"
                    )
                twice = sorted({name for name in header if header.count(name) > 1})
                if twice:
                    raise UsageError(
                        f"{where}: column {shorten(repr(twice[0]))} appears more than once in the "
                        "header (one column per field)"
                    )
                continue
            count += 1
            if isinstance(record, Oversized):
                yield Row(number, str(count), "", {}, error=record.error)
                continue
            cells = _csv_cells(record, where)
            if not cells:
                count -= 1
                continue  # a blank line
            if len(cells) > len(header):
                raise UsageError(f"{where}: more cells than header columns")
            values = dict(zip(header, cells))
            raw = {k: v for k, v in values.items() if k not in ("context", "id")}
            yield Row(
                number,
                values.get("id") or str(count),
                values.get("context") or "",
                _labels(where, raw, fields, from_csv=True),
            )
    finally:
        csv.field_size_limit(previous_limit)


def iter_rows(stream: DataStream, fields: list[EvalField]) -> Iterator[Row]:
    """Every row of the file, read as a stream; a row over the byte limit as a Row with ``error``.
    Raises UsageError on the first row that is bad input."""
    by_name = {field.name: field for field in fields}
    if stream.csv:
        yield from _csv_rows(stream, by_name)
        return
    for number, record in stream.json_lines():
        if isinstance(record, Oversized):
            yield Row(number, str(number), "", {}, error=record.error)
        else:
            yield _jsonl_row(number, record, f"{stream.display}:{number}", by_name)


class LabeledData:
    """A labeled-data file read as a stream, twice: once at once to check every row (bad input is
    a UsageError before any scoring, and the rows are counted), then again by each iteration for
    the run (the first ``limit`` rows). ``check_unchanged`` after the run tells a file that
    changed in between (its size and time, ``DataStream.stamp``). Nothing holds the rows."""

    def __init__(
        self,
        path: str | Path,
        fields: list[EvalField],
        *,
        max_row_bytes: int = DEFAULT_MAX_ROW_BYTES,
        limit: int | None = None,
    ):
        self.stream = DataStream(path, max_row_bytes)
        self.fields, self.limit = fields, limit
        self.stamp = self.stream.stamp()
        self.total = 0
        labeled = False
        for row in self:
            self.total += 1
            labeled = labeled or bool(row.labels) or row.error is not None
        display = self.stream.display
        if not self.total:
            raise UsageError(f"{display}: no labeled rows")
        if not labeled:
            names = ", ".join(field.name for field in fields)
            raise UsageError(f"{display}: no row labels any field of the schema ({names})")

    def __iter__(self) -> Iterator[Row]:
        return islice(iter_rows(self.stream, self.fields), self.limit)

    def __len__(self) -> int:
        return self.total

    def check_unchanged(self) -> None:
        if self.stream.stamp() != self.stamp:
            raise UsageError(
                f"{self.stream.display}: the file changed during the run; its report is not written"
            )


def load_rows(
    path: str | Path,
    fields: list[EvalField],
    *,
    max_row_bytes: int = DEFAULT_MAX_ROW_BYTES,
    limit: int | None = None,
) -> list[Row]:
    """The rows of ``LabeledData`` as a list (a small set, or a test); UsageError on bad input.
    A row over ``max_row_bytes`` comes back with its ``error`` set."""
    return list(LabeledData(path, fields, max_row_bytes=max_row_bytes, limit=limit))


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
