"""The PCD/RLCD preset crawler: `schema` maps of typed fields, `fields` lists with `choices`,
and `questions` maps with `criteria`, each field with >= 2 options a site.
"""

from __future__ import annotations

from typing import Any

from auditor.schema.documents import Document, escape_token
from auditor.schema.locate import is_preset_fields
from auditor.schema.model import FileModel, SchemaProblem, Site, suppressions_of


def crawl_presets(
    document: Document,
    model: FileModel,
    node: Any,
    pointer: str,
    depth: int,
    inherited: frozenset[str] = frozenset(),
    holders: tuple[str, ...] = (),
) -> None:
    if depth > 4:
        return
    if isinstance(node, list):
        for index, item in enumerate(node):
            crawl_presets(document, model, item, f"{pointer}/{index}", depth + 1, inherited, holders)
        return
    if not isinstance(node, dict):
        return
    own = suppressions_of(node)
    if own:
        model.suppressions[pointer] = own
        inherited, holders = inherited | own, holders + (pointer,)
    schema = node.get("schema")
    if isinstance(schema, dict) and is_preset_fields(schema):
        for name, spec in schema.items():
            _preset_field(
                document, model, spec, f"{pointer}/schema/{escape_token(name)}", name, inherited, holders
            )
        return
    fields = node.get("fields")
    if isinstance(fields, list) and any(isinstance(f, dict) and "choices" in f for f in fields):
        for index, spec in enumerate(fields):
            if isinstance(spec, dict):
                name = str(spec.get("name", index))
                _preset_field(document, model, spec, f"{pointer}/fields/{index}", name, inherited, holders)
        return
    questions = node.get("questions")
    if isinstance(questions, dict):
        for name, spec in questions.items():
            if isinstance(spec, dict) and isinstance(spec.get("criteria"), dict):
                _question_field(
                    document,
                    model,
                    spec,
                    f"{pointer}/questions/{escape_token(name)}",
                    name,
                    inherited,
                    holders,
                )
        return
    for key, value in node.items():
        if isinstance(value, (dict, list)):
            crawl_presets(
                document, model, value, f"{pointer}/{escape_token(key)}", depth + 1, inherited, holders
            )


def _field_suppressions(
    model: FileModel, spec: dict, pointer: str, inherited: frozenset[str], holders: tuple[str, ...]
) -> tuple[frozenset[str], tuple[str, ...]]:
    own = suppressions_of(spec)
    if own:
        model.suppressions[pointer] = own
        return inherited | own, holders + (pointer,)
    return inherited, holders


def _preset_field(
    document: Document,
    model: FileModel,
    spec: Any,
    pointer: str,
    name: str,
    inherited: frozenset[str],
    holders: tuple[str, ...],
) -> None:
    if not isinstance(spec, dict):
        return
    suppressed, holders = _field_suppressions(model, spec, pointer, inherited, holders)
    description = str(spec.get("description", "") or "")
    choices = spec.get("choices")
    if isinstance(choices, list) and len(choices) >= 2:
        pointers = [f"{pointer}/choices/{i}" for i in range(len(choices))]
        kind = "preset-" + str(spec.get("type", "enum"))
        spans = document.spans(pointers)
        options = choices
    elif spec.get("type") == "boolean":
        pointers = [f"{pointer}/type", f"{pointer}/type"]
        spans = [document.span(p) for p in pointers]
        options, kind = [True, False], "preset-boolean"
    else:
        if "choices" in spec and not isinstance(choices, list):
            model.schema_problems.append(SchemaProblem(f"{pointer}/choices", "'choices' must be a list"))
        return
    model.sites.append(
        Site(
            document.path,
            pointer,
            name,
            name,
            list(options),
            pointers,
            document.key_span(pointer),
            spans,
            kind,
            description,
            suppressed,
            holders,
        )
    )


def _question_field(
    document: Document,
    model: FileModel,
    spec: dict,
    pointer: str,
    name: str,
    inherited: frozenset[str],
    holders: tuple[str, ...],
) -> None:
    suppressed, holders = _field_suppressions(model, spec, pointer, inherited, holders)
    criteria = spec["criteria"]
    if len(criteria) < 2:
        return
    pointers = [f"{pointer}/criteria/{escape_token(k)}" for k in criteria]
    spans = [document.key_span(p) for p in pointers]
    description = str(spec.get("instructions", "") or "")
    model.sites.append(
        Site(
            document.path,
            pointer,
            name,
            name,
            list(criteria),
            pointers,
            document.key_span(pointer),
            spans,
            "question-" + str(spec.get("type")),
            description,
            suppressed,
            holders,
        )
    )
