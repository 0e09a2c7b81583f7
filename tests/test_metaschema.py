"""The meta-schema check reports exactly `jsonschema`'s errors, with `jsonschema-rs` as its gate.

On every schema the locator finds in the corpus and fixtures/ (and on invalid schemas of each
draft made here), `jsonschema-rs` must agree with `jsonschema` on whether the schema is valid,
and the errors reported must equal those of `jsonschema` alone (paths and messages, in order).
"""

from __future__ import annotations

import pytest
from jsonschema import validators

from auditor.schema.documents import load_document, resolve_pointer
from auditor.schema.locate import detect
from auditor.schema.metaschema import compiled_validator, meta_schema_errors, python_validator
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
    (validators.Draft7Validator, {"$schema": "http://json-schema.org/draft-07/schema#",
                                  "properties": {"a": {"type": ["string", 3]}}, "items": []}),
    (validators.Draft4Validator, {"exclusiveMinimum": 3, "enum": []}),
    (validators.Draft6Validator, {"$schema": "http://json-schema.org/draft-06/schema#",
                                  "dependencies": {"a": 7}}),
    (validators.Draft201909Validator, {"$schema": "https://json-schema.org/draft/2019-09/schema",
                                       "maxItems": -1, "$defs": {"x": {"const": 1, "minLength": 1.5}}}),
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
    for schema in ({"const": 10 ** 400, "type": "integer"}, {"maximum": float("nan")},
                   {"minimum": 10 ** 400, "type": 7}):
        assert described(meta_schema_errors(cls, schema)) == described(
            meta_schema_errors(cls, schema, use_compiled=False))


def test_one_validator_per_draft_per_process():
    cls = validators.Draft7Validator
    assert python_validator(cls) is python_validator(cls)
    assert compiled_validator(cls) is compiled_validator(cls)
