"""The engine table: one row per engine a user may name with `--engine`, read from engines.toml.

The data file documents its columns; this module reads and checks them (a malformed row fails
at import, loudly) and answers the questions code asks of an engine: its limits, its label
schemes, whether it scores option names. Pure: no I/O beyond the package's own data file.
"""

from __future__ import annotations

import datetime
import importlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

KINDS = ("pcd", "decision", "harness")  # harness: an evaluation harness's scorer of its configs' label sets
SCORES = ("option-names", "labels")
LABEL_CHECKS = ("request", "model-load", "skip-codes", "startup", "route-startup", "none")
UNKNOWN_FIELDS = ("refused", "questions", "ignored")
REQUIREMENTS = (
    "state",
    "state-field",
    "model",
    "instructions",
    "noul-text",
    "nonblank",
    "nonblank-levels",
    "unique-ids",
    "nonempty-ids",
    "thinking-off",
)
SHAPES = ("systemone", "openai-decisions", "sglang-decisions")
# a question kind (auditor.schema.decisions) → the row column holding its limits and labels
LIMIT_COLUMN = {"choice": "options", "score": "levels", "binary": None}
LABEL_COLUMN = {"choice": "choice_labels", "score": "level_labels", "binary": "binary_labels"}
DUPLICATE_KINDS = ("choice", "score")  # the question kinds `exact_duplicates` may name


class EngineTableError(ValueError):
    """engines.toml holds a row code cannot interpret."""


@dataclass(frozen=True)
class Limit:
    """An accepted count: `low` to `high` inclusive; `high` None: no upper limit."""

    low: int
    high: int | None = None

    def admits(self, n: int) -> bool:
        return n >= self.low and (self.high is None or n <= self.high)

    def phrase(self) -> str:
        return f"{self.low} to {self.high}" if self.high is not None else f"at least {self.low}"


@dataclass(frozen=True)
class EngineRow:
    name: str
    kind: str
    scores: str
    summary: str
    source: str
    version: str  # the upstream version (release, commit or docs) the row was read from
    read_on: str  # the date (ISO) the row was read from it
    live_test: str = ""  # the test file that checks the row against a running server
    scorer: str = ""
    shapes: tuple[str, ...] = ()
    choice_labels: str = ""
    level_labels: str = ""
    binary_labels: str = ""
    label_check: str = "none"
    prompt: str = "closed"
    options: Limit | None = None
    levels: Limit | None = None
    questions: Limit | None = None
    levels_documented: bool = True
    name_rules: bool = False
    exact_duplicates: tuple[str, ...] = ()
    criteria_shapes: bool = False
    question_types: tuple[
        str, ...
    ] = ()  # the types its route takes, as a body writes them (empty: unchecked)
    unknown_fields: str = "ignored"
    extra_fields: tuple[str, ...] = ()
    refused_fields: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    status: int | None = None
    status_invalid: int | None = None
    order_probe: str = ""
    default: bool = False
    # the engine's window in tokens where a source documents one (context_source cites it);
    # None: the served model's own (max_position_embeddings, a GGUF's context_length)
    context_tokens: int | None = None
    context_source: str = ""
    extra: dict = field(default_factory=dict, compare=False, repr=False)  # columns code does not read

    @property
    def is_decision(self) -> bool:
        return self.kind == "decision"

    @property
    def scores_option_names(self) -> bool:
        return self.scores == "option-names"

    def limit_for(self, question_kind: str) -> Limit | None:
        """The count limit of a question kind's options (choice) or levels (score)."""
        column = LIMIT_COLUMN.get(question_kind)
        return getattr(self, column) if column else None

    def labels_for(self, question_kind: str) -> str:
        """The label scheme name of a question kind."""
        return getattr(self, LABEL_COLUMN[question_kind])

    def invalid_status(self) -> int | None:
        """The status of a body the engine finds invalid (a count, a field)."""
        return self.status_invalid or self.status

    def describe(self) -> dict:
        out: dict[str, object] = {
            "name": self.name,
            "kind": self.kind,
            "scores": self.scores,
            "summary": self.summary,
            "source": self.source,
            "version": self.version,
            "read_on": self.read_on,
            "live_test": self.live_test or None,
        }
        if self.is_decision:
            for column in ("options", "levels", "questions"):
                limit = getattr(self, column)
                out[column] = None if limit is None else [limit.low, limit.high]
            out.update(
                choice_labels=self.choice_labels,
                level_labels=self.level_labels,
                binary_labels=self.binary_labels,
                label_check=self.label_check,
                name_rules=self.name_rules,
                status=self.status,
            )
        return out


_FIELDS = set(EngineRow.__dataclass_fields__) - {"extra"}


def _limit(row: dict, column: str) -> Limit | None:
    value = row.get(column)
    if value is None:
        return None
    if not (isinstance(value, list) and 1 <= len(value) <= 2 and all(type(v) is int for v in value)):
        raise EngineTableError(f"engine {row.get('name')!r}: {column} must be [min] or [min, max]")
    return Limit(value[0], value[1] if len(value) == 2 else None)


def _choice(row: dict, column: str, allowed: tuple[str, ...]) -> None:
    value = row.get(column)
    if value is not None and value not in allowed:
        raise EngineTableError(f"engine {row.get('name')!r}: {column} {value!r} not in {allowed}")


def _read_on(raw: dict) -> str:
    """The row's `read_on` as an ISO date (a TOML date, or a string holding one)."""
    value = raw.get("read_on")
    text = value.isoformat() if isinstance(value, datetime.date) else value
    try:
        return datetime.date.fromisoformat(text).isoformat()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise EngineTableError(f"engine {raw.get('name')!r}: read_on must be a date (YYYY-MM-DD)") from None


def _row(raw: dict) -> EngineRow:
    for column in ("name", "kind", "scores", "summary", "source", "version"):
        if not isinstance(raw.get(column), str) or not raw[column]:
            raise EngineTableError(f"engine row {raw.get('name')!r} lacks {column!r}")
    _choice(raw, "kind", KINDS)
    _choice(raw, "scores", SCORES)
    _choice(raw, "label_check", LABEL_CHECKS)
    _choice(raw, "unknown_fields", UNKNOWN_FIELDS)
    for column, allowed in (
        ("shapes", SHAPES),
        ("required", REQUIREMENTS),
        ("exact_duplicates", DUPLICATE_KINDS),
    ):
        unknown = set(raw.get(column, ())) - set(allowed)
        if unknown:
            raise EngineTableError(f"engine {raw['name']!r}: {column} {sorted(unknown)} not in {allowed}")
    if raw["kind"] == "decision":
        missing = [
            c
            for c in (
                "shapes",
                "choice_labels",
                "level_labels",
                "binary_labels",
                "label_check",
                "prompt",
                "options",
                "levels",
                "questions",
                "name_rules",
                "refused_fields",
                "status",
            )
            if c not in raw
        ]
        if missing:
            raise EngineTableError(f"decision engine {raw['name']!r} lacks {missing}")
    elif not raw.get("scorer"):
        raise EngineTableError(f"pcd engine {raw['name']!r} lacks 'scorer'")
    window = raw.get("context_tokens")
    if window is not None and (type(window) is not int or window <= 0 or not raw.get("context_source")):
        raise EngineTableError(
            f"engine {raw['name']!r}: context_tokens must be a positive integer with a context_source"
        )
    known = {k: v for k, v in raw.items() if k in _FIELDS}
    known["read_on"] = _read_on(raw)
    for column in ("options", "levels", "questions"):
        known[column] = _limit(raw, column)
    for column in (
        "shapes",
        "refused_fields",
        "required",
        "exact_duplicates",
        "extra_fields",
        "question_types",
    ):
        known[column] = tuple(raw.get(column, ()))
    return EngineRow(**known, extra={k: v for k, v in raw.items() if k not in _FIELDS})


def load_rows(text: str) -> dict[str, EngineRow]:
    """The rows of an engines.toml text, by name (in file order)."""
    rows: dict[str, EngineRow] = {}
    for raw in tomllib.loads(text).get("engine", []):
        row = _row(raw)
        if row.name in rows:
            raise EngineTableError(f"engine {row.name!r} is listed twice")
        rows[row.name] = row
    for kind in ("decision", "pcd"):
        defaults = [r.name for r in rows.values() if r.default and r.kind == kind]
        if len(defaults) != 1:
            raise EngineTableError(f"exactly one {kind} row must be the default (found {defaults})")
    if any(r.default for r in rows.values() if r.kind not in ("decision", "pcd")):
        raise EngineTableError("only a decision row and a pcd row may be the default")
    return rows


def table_text() -> str:
    # the file beside this module (the wheel installs it there): importlib.resources and the
    # zipfile module it brings would cost every start-up a few milliseconds
    return Path(__file__).with_name("engines.toml").read_text(encoding="utf-8")


ENGINE_ROWS: dict[str, EngineRow] = load_rows(table_text())
DEFAULT_DECISION_ENGINE: str = next(r.name for r in ENGINE_ROWS.values() if r.default and r.is_decision)
DEFAULT_PCD_ENGINE: str = next(r.name for r in ENGINE_ROWS.values() if r.default and r.kind == "pcd")


def row_module(package: str, row: EngineRow, column: str) -> ModuleType:
    """The module of `package` a row's `column` names (`sglang-chat` → `sglang_chat`), imported;
    EngineTableError where there is none."""
    value = str(getattr(row, column))
    name = f"{package}.{value.replace('-', '_')}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        raise EngineTableError(
            f"engines.toml: engine {row.name!r} names {column} {value!r}, but there is no module {name}"
        ) from None


def decision_engines() -> list[EngineRow]:
    """The decision engines' rows, in table order."""
    return [row for row in ENGINE_ROWS.values() if row.is_decision]


def default_decision_row() -> EngineRow:
    return ENGINE_ROWS[DEFAULT_DECISION_ENGINE]


def engine_row(name: str) -> EngineRow | None:
    return ENGINE_ROWS.get(name.strip().lower())


# the kinds of row a user names with `--engine` (a harness row applies to its own configs'
# label sets without being named)
NAMEABLE_KINDS = ("pcd", "decision")


class UnknownEngineName(ValueError):
    """A name `--engine` (or the config's `engine`) does not accept."""


def engine_names(kinds: tuple[str, ...] = NAMEABLE_KINDS) -> list[str]:
    """The names of the rows of `kinds`, in table order: what an `--engine` accepts and lists."""
    return [name for name, row in ENGINE_ROWS.items() if row.kind in kinds]


def did_you_mean(name: str, known: list[str]) -> str:
    """`; did you mean 'x'?` for the nearest known name, or nothing."""
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def check_engine_name(name: str, kinds: tuple[str, ...] = NAMEABLE_KINDS) -> EngineRow:
    """The one validator of an engine name (the CLI's choices, the config, the Python API): the
    row it names, case and surrounding space ignored; UnknownEngineName otherwise."""
    key = name.strip().lower()
    row = ENGINE_ROWS.get(key)
    if row is not None and row.kind in kinds:
        return row
    if row is not None and row.kind == "harness":
        raise UnknownEngineName(
            f"{key} scores the label sets of {row.extra.get('harness')}, and is applied to them "
            "without being named"
        )
    known = engine_names(kinds)
    kind = f"{kinds[0]} " if row is not None and len(kinds) == 1 else ""
    raise UnknownEngineName(
        f"unknown {kind}engine {name!r}{did_you_mean(key, known)} (choose from {', '.join(known)})"
    )


# --------------------------------------------------------------------------- README table

TABLE_BEGIN = (
    "<!-- engine table: generated from auditor/pcd/engines/engines.toml by scripts/engine_table.py -->"
)
TABLE_END = "<!-- end of engine table -->"


def _limit_text(limit: Limit | None, documented: bool = True) -> str:
    if limit is None:
        return ""
    text = f"{limit.low}–{limit.high}" if limit.high is not None else f"≥ {limit.low}"
    return text if documented else f"{text} (undocumented)"


def names_refused(row: EngineRow) -> str:
    """What option names the engine refuses, in a few words (the docs' table, `pcdlint engines`)."""
    if row.name_rules:
        return "yes"
    if row.exact_duplicates:
        return f"exact repeats ({', '.join(row.exact_duplicates)})"
    return "no"


def markdown_table(rows: dict[str, EngineRow] | None = None) -> str:
    """The docs' engine table (docs/decision-requests.md) (decision engines), one line per row, from the data file."""
    rows = ENGINE_ROWS if rows is None else rows
    lines = [
        TABLE_BEGIN,
        "| engine | labels: choice / level / two-outcome | labels checked | options | levels | questions "
        "| names refused | fields refused | refusal | source | read from |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows.values():
        if not row.is_decision:
            continue
        name = f"`{row.name}`" + (" (default)" if row.default else "")
        fields = {"refused": "unknown, anywhere", "questions": "unknown, in questions", "ignored": ""}[
            row.unknown_fields
        ]
        refused = ", ".join(f"`{f}`" for f in row.refused_fields)
        fields = "; ".join(part for part in (fields, refused) if part) or "—"
        status = str(row.status) + (f" / {row.status_invalid}" if row.status_invalid else "")
        source = row.source.replace("|", "\\|")
        lines.append(
            f"| {name} | {row.choice_labels} / {row.level_labels} / {row.binary_labels} | {row.label_check} "
            f"| {_limit_text(row.options)} | {_limit_text(row.levels, row.levels_documented)} "
            f"| {_limit_text(row.questions)} | {names_refused(row)} | {fields} | {status} "
            f"| {source} | {row.version}, {row.read_on}{'; live-tested' if row.live_test else ''} |"
        )
    lines.append(TABLE_END)
    return "\n".join(lines)
