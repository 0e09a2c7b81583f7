"""The meta-schema check: one validator per draft per process, compiled where that is exact.

The errors pcdlint reports are `jsonschema`'s (its messages, paths and order are part of the
output). Walking a large schema through the pure-Python validator costs seconds, so
`jsonschema-rs` (compiled) first answers whether the schema is valid at all, hundreds of times
faster; only a schema it finds invalid is validated again by `jsonschema`, so the reported errors
are always `jsonschema`'s own. tests/test_metaschema.py checks on the corpus that both agree on
which schemas are valid, and that the errors are the ones `jsonschema` alone reports. Without
`jsonschema-rs` installed (or for a draft it lacks) `jsonschema` does all the work.
"""

from __future__ import annotations

from functools import cache


@cache
def python_validator(cls):
    """The `jsonschema` validator of the draft's meta-schema, built once."""
    return cls(cls.META_SCHEMA)


@cache
def compiled_validator(cls):
    """The `jsonschema-rs` validator of the same meta-schema, or None (not installed, no such
    draft). Formats are annotations here, as in `jsonschema` without a format checker."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    factory = getattr(jsonschema_rs, cls.__name__, None)  # Draft4Validator … Draft202012Validator
    if factory is None:
        return None
    try:
        return factory(cls.META_SCHEMA, validate_formats=False)
    except Exception:
        return None


def meta_schema_errors(cls, schema, use_compiled: bool = True) -> list:
    """`jsonschema` ValidationErrors of `schema` against the draft `cls`, sorted by path."""
    fast = compiled_validator(cls) if use_compiled else None
    if fast is not None:
        try:
            if fast.is_valid(schema):
                return []
        except Exception:
            pass  # a value jsonschema-rs cannot take (a huge integer, NaN): jsonschema decides
    return sorted(python_validator(cls).iter_errors(schema), key=lambda e: list(e.path))
