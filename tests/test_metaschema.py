"""The meta-schema check reports exactly `jsonschema`'s errors, with `jsonschema-rs` as its gate.

On every schema the locator finds in the corpus and fixtures/ (and on invalid schemas of each
draft made here), `jsonschema-rs` must agree with `jsonschema` on whether the schema is valid,
and the errors reported must equal those of `jsonschema` alone (paths and messages, in order).
"""

from __future__ import annotations

import copy
import json
import random

import pytest
from jsonschema import validators

from auditor.schema.documents import load_document, resolve_pointer
from auditor.schema.locate import detect
from auditor.schema.metaschema import (
    compiled_validator,
    error_subschemas,
    meta_schema_errors,
    python_validator,
)
from support import FIXTURES, corpus_files

pytest.importorskip("jsonschema_rs")


def draft_of(schema, dialect: str):
    """The draft the crawler checks a located schema against (auditor.schema.sites)."""
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if dialect in ("openapi-3.0", "swagger-2.0"):
        return validators.Draft4Validator
    if declared is None or isinstance(declared, str):
        return validators.validator_for(schema, default=validators.Draft202012Validator)
    return validators.Draft202012Validator


def located_schemas():
    files = corpus_files() + sorted(FIXTURES.rglob("*.json")) + sorted(FIXTURES.rglob("*.yaml"))
    for path in files:
        try:
            document = load_document(path)
        except Exception:
            continue  # the bad-input fixtures
        for located in detect(document.data).schemas:
            schema = resolve_pointer(document.data, located.pointer)
            if located.dialect in ("gemini", "swagger-parameter") or not isinstance(schema, (dict, bool)):
                continue
            yield f"{path.name}#{located.pointer}", draft_of(schema, located.dialect), schema


def described(errors) -> list[tuple[list, str]]:
    return [(list(e.path), e.message) for e in errors]


INVALID = [
    (validators.Draft202012Validator, {"type": 5, "enum": "red", "properties": {"a": {"minimum": "x"}}}),
    (validators.Draft202012Validator, {"$schema": 5, "required": "a"}),
    (
        validators.Draft7Validator,
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"a": {"type": ["string", 3]}},
            "items": [],
        },
    ),
    (validators.Draft4Validator, {"exclusiveMinimum": 3, "enum": []}),
    (
        validators.Draft6Validator,
        {"$schema": "http://json-schema.org/draft-06/schema#", "dependencies": {"a": 7}},
    ),
    (
        validators.Draft201909Validator,
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            "maxItems": -1,
            "$defs": {"x": {"const": 1, "minLength": 1.5}},
        },
    ),
]


@pytest.mark.slow
def test_both_validators_agree_on_every_schema_of_the_corpus_and_fixtures():
    checked, invalid = 0, 0
    for name, cls, schema in located_schemas():
        alone = described(meta_schema_errors(cls, schema, use_compiled=False))
        compiled = compiled_validator(cls)
        assert compiled is not None, cls.__name__
        assert compiled.is_valid(schema) == (not alone), name
        assert described(meta_schema_errors(cls, schema)) == alone, name
        checked += 1
        invalid += bool(alone)
    if corpus_files():
        assert checked >= 90 and invalid >= 1  # the corpus holds one invalid schema (aind model_schema)
    else:
        assert checked >= 60  # fixtures/ alone


@pytest.mark.parametrize("cls, schema", INVALID, ids=lambda v: getattr(v, "__name__", ""))
def test_invalid_schemas_get_jsonschemas_own_errors(cls, schema):
    alone = described(meta_schema_errors(cls, schema, use_compiled=False))
    assert alone  # each case is invalid for its draft
    assert not compiled_validator(cls).is_valid(schema)
    assert described(meta_schema_errors(cls, schema)) == alone


def test_values_the_compiled_validator_cannot_take_fall_back_to_jsonschema():
    cls = validators.Draft202012Validator
    for schema in (
        {"const": 10**400, "type": "integer"},
        {"maximum": float("nan")},
        {"minimum": 10**400, "type": 7},
    ):
        assert described(meta_schema_errors(cls, schema)) == described(
            meta_schema_errors(cls, schema, use_compiled=False)
        )


def test_one_validator_per_draft_per_process():
    cls = validators.Draft7Validator
    assert python_validator(cls) is python_validator(cls)
    assert compiled_validator(cls) is compiled_validator(cls)


# Errors planted in a valid schema's nodes: a subschema's keyword made invalid for every draft,
# or a whole node replaced by a value no schema may be.
PLANTED = (
    {"type": 5},
    {"minLength": -1},
    {"required": "a"},
    {"description": ["a"]},
    {"allOf": []},
    {"properties": 3},
)
DRAFTS = (
    validators.Draft4Validator,
    validators.Draft6Validator,
    validators.Draft7Validator,
    validators.Draft201909Validator,
    validators.Draft202012Validator,
    validators.Draft3Validator,
)


def _nodes(node, path=()):
    """(path, dict) of every object in a JSON value, the root first."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _nodes(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _nodes(value, (*path, index))


def _planted(schema, rng: random.Random):
    """A deep copy of `schema` with one to three of its objects spoiled."""
    schema = copy.deepcopy(schema)
    nodes = list(_nodes(schema))[1:]
    for path, node in rng.sample(nodes, min(len(nodes), rng.randint(1, 3))):
        if rng.random() < 0.2:
            parent = schema
            for token in path[:-1]:
                parent = parent[token]
            parent[path[-1]] = 7
        else:
            node.update(rng.choice(PLANTED))
    return schema


def _valid_corpus_schemas(limit: int):
    seen = 0
    for name, cls, schema in located_schemas():
        small = len(json.dumps(schema)) < 20_000  # (jsonschema alone walks each one 24 times)
        if isinstance(schema, dict) and len(schema) > 1 and small and not meta_schema_errors(cls, schema):
            yield name, schema
            seen += 1
            if seen == limit:
                return


def test_errors_planted_in_subschemas_are_jsonschemas_own_on_every_draft():
    """The narrowed check (only the subschemas that hold jsonschema-rs's errors are validated by
    jsonschema) gives what jsonschema alone gives, wherever the errors are."""
    rng = random.Random(17)
    narrowed = cases = 0
    for name, schema in _valid_corpus_schemas(14):
        for _ in range(4):
            spoiled = _planted(schema, rng)
            for cls in DRAFTS:
                alone = described(meta_schema_errors(cls, spoiled, use_compiled=False))
                compiled = compiled_validator(cls)
                if compiled is None or compiled.is_valid(spoiled):
                    continue
                assert described(meta_schema_errors(cls, spoiled)) == alone, (name, cls.__name__)
                places = error_subschemas(cls, [e.instance_path for e in compiled.iter_errors(spoiled)])
                narrowed += places != [()]
                cases += 1
    if corpus_files():
        assert cases >= 200 and narrowed >= 50  # both ways taken, many times


def test_error_subschemas_keeps_the_outermost_qualifying_subschema():
    cls = validators.Draft202012Validator
    paths = [
        ["$defs", "A", "properties", "b", "type"],
        ["$defs", "A", "type"],
        ["properties", "x", "anyOf", 0, "minimum"],
        ["properties", "x", "anyOf", 1, "enum"],
    ]
    assert error_subschemas(cls, paths) == [
        ("$defs", "A"),
        ("properties", "x", "anyOf", 0),
        ("properties", "x", "anyOf", 1),
    ]
    # an error at the root, or under a keyword that wraps its members (draft 7 `items`): all
    assert error_subschemas(cls, [["properties", "x", "type"], ["type"]]) == [()]
    assert error_subschemas(cls, [["items", "type"]]) == [()]
    assert error_subschemas(cls, [["properties", "x"]]) == [()]  # the member itself: its parent
    assert error_subschemas(validators.Draft3Validator, paths) == [()]
