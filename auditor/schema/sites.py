"""Find the enum-like decision fields ("sites") of a document, whatever format it is in.

Formats, detected from content: JSON Schema (any draft), OpenAI structured-output wrappers around
one, and PCD/RLCD presets (`schema` maps of typed fields, `fields` lists, `questions` maps). A site
is one declaration node with >= 2 options; it is reported once, at that node, however many `$ref`s
reach it.
"""

from __future__ import annotations

from auditor.schema.code_requests import runtime_parts
from auditor.schema.crawl_presets import crawl_presets
from auditor.schema.crawl_schema import (
    DEFINITION_KEYWORDS,
    LIST_SUBSCHEMAS,
    MAP_SUBSCHEMAS,
    SINGLE_SUBSCHEMA,
    SUBSCHEMA_KEYWORDS,
    JsonSchemaCrawler,
)
from auditor.schema.decisions import (
    SHAPES,
    LocatedRequest,
    decision_text,
    field_pointers,
    request_questions,
)
from auditor.schema.documents import Document, resolve_pointer
from auditor.schema.locate import JSON_TYPES, SCHEMA_HINTS, Detection, detect
from auditor.schema.model import (
    DECISION_FIELDS,
    SUPPRESS_KEY,
    FileModel,
    OpenField,
    SchemaProblem,
    Site,
)
from auditor.schema.refs import _lookup_context, crawl_needed

_JsonSchemaCrawler = JsonSchemaCrawler  # (its name before the split)

__all__ = [
    "DECISION_FIELDS",
    "DEFINITION_KEYWORDS",
    "JSON_TYPES",
    "LIST_SUBSCHEMAS",
    "MAP_SUBSCHEMAS",
    "SCHEMA_HINTS",
    "SINGLE_SUBSCHEMA",
    "SUBSCHEMA_KEYWORDS",
    "SUPPRESS_KEY",
    "FileModel",
    "JsonSchemaCrawler",
    "OpenField",
    "SchemaProblem",
    "Site",
    "_lookup_context",
    "analyse",
    "crawl_needed",
    "crawl_requests",
]


def analyse(document: Document, detection: Detection | None = None) -> FileModel:
    """Crawl a document: every schema the locator finds in it, or its PCD presets."""
    detection = detection or detect(document.data)
    model = FileModel(document, detection.format, schemas=list(detection.schemas))
    model.notes.extend(document.notes)
    if detection.schemas:
        JsonSchemaCrawler(document, model).run(detection.schemas)
    elif detection.requests:
        crawl_requests(document, model, detection.requests)
    elif detection.format == "pcd-preset":
        crawl_presets(document, model, document.data, "", 0)
    _keep_needed_spans(model)
    return model


def _keep_needed_spans(model: FileModel) -> None:
    """Drop positions no finding can point at (big enums make the map huge; it is cached)."""
    document = model.document
    wanted: set[str] = set()
    for site in [*model.sites, *model.prose_sites]:
        wanted.add(site.pointer)
        wanted.update(site.option_pointers)
        if site.question_kind is not None:  # a field finding may point at any of its fields
            wanted.update(field_pointers(document.data, site.request_pointer, site.pointer))
    wanted.update(p.pointer for p in model.schema_problems)
    wanted.update(o.pointer for o in model.open_fields)
    for holder, codes in model.suppressions.items():
        key = f"{holder}/{SUPPRESS_KEY}"
        wanted.update([holder, key, *(f"{key}/{i}" for i in range(len(codes)))])
    for pointer in list(wanted):
        while pointer:
            pointer = pointer.rsplit("/", 1)[0]
            if pointer in wanted:
                break
            wanted.add(pointer)
    wanted.add("")
    # The way to every pointer is scanned at once (each container once), then each site's spans
    # are found, in the order the crawl met them, then the rest (found already: an enum's options)
    document.prefetch(wanted)
    for site in [*model.sites, *model.prose_sites]:
        site.make_deferred()
    document.settle_spans(sorted(p for p in wanted if p not in document.value_spans))
    if not document.value_spans.keys() <= wanted:
        document.value_spans = {p: s for p, s in document.value_spans.items() if p in wanted}
    if not document.key_spans.keys() <= wanted:
        document.key_spans = {p: s for p, s in document.key_spans.items() if p in wanted}


def crawl_requests(document: Document, model: FileModel, requests: list[LocatedRequest]) -> None:
    """Every question of every request becomes a Site of the file model (a `box` question, read
    but not linted, a note). In a code file, a question with a part built at run time says so
    once (`Site.runtime`: the rules that need the part skip it), and a question built at run
    time as a whole is a note."""
    runtime = document.runtime
    for request in requests:
        body = resolve_pointer(document.data, request.pointer)
        questions = request_questions(request, body)
        shape = SHAPES[request.shape]
        where = f"{request.label} › " if request.label else ""
        if runtime:
            model.notes.extend(_runtime_questions(document, request, where))
        for index, question in enumerate(questions):
            if question.kind is None:
                model.notes.append(
                    f"{where}question {question.name!r} is a "
                    f"{question.type!r} question, which pcdlint does not lint"
                )
                continue
            parts = runtime_parts(runtime, question.pointer, shape.text_key) if runtime else ()
            span = document.key_span(question.pointer) if question.keyed else document.span(question.pointer)
            if parts:
                built = " and ".join(
                    {"options": "options", "text": "instructions", "name": "name"}[p] for p in parts
                )
                model.notes.append(
                    f"{span.line}:{span.column}: question {question.name!r}: {built} built at run time: not checked"
                )
            site = Site(
                document.path,
                question.pointer,
                f"{where}question {question.name} › {question.type}",
                question.name,
                question.options,
                question.option_pointers,
                span,
                [document.key_span(p) for p in question.option_pointers]
                if question.option_keys
                else document.spans(question.option_pointers),
                f"{request.shape}-{question.type}",
                decision_text(question.text),
                question_kind=question.kind,
                request_shape=request.shape,
                question_name=question.name,
                question_type=question.type,
                question_text=question.text,
                option_details=question.details,
                request_pointer=request.pointer,
                request_source=request.source,
                question_index=index,
                request_questions=len(questions),
                runtime=parts,
            )
            model.sites.append(site)


def _runtime_questions(document: Document, request: LocatedRequest, where: str) -> list[str]:
    """Notes for the questions of a request built at run time as a whole (a variable, a call)."""
    notes = []
    container = f"{request.pointer}/questions"
    for pointer, text in document.runtime.items():
        parent, _, last = pointer.rpartition("/")
        if parent == container and last != "...":
            span = document.span(pointer)
            notes.append(
                f"{span.line}:{span.column}: {where}a question built at run time ({text}): not checked"
            )
        elif pointer == f"{container}/...":
            span = document.span(container)
            notes.append(
                f"{span.line}:{span.column}: {where}questions added at run time ({text}): not checked"
            )
    return notes
