"""The meta-schema check: one validator per draft per process, compiled where that is exact.

The errors pcdlint reports are `jsonschema`'s (its messages, paths and order are part of the
output). Walking a large schema through the pure-Python validator costs seconds, so
`jsonschema-rs` (compiled) first answers whether the schema is valid at all, hundreds of times
faster; only a schema it finds invalid is validated again by `jsonschema`, so the reported errors
are always `jsonschema`'s own. tests/test_metaschema.py checks on the corpus that both agree on
which schemas are valid, and that the errors are the ones `jsonschema` alone reports. Without
`jsonschema-rs` installed (or for a draft it lacks) `jsonschema` does all the work.

An invalid schema is not walked whole by `jsonschema` either: `jsonschema-rs` says where its
errors are, and `jsonschema` validates only the subschemas that hold them (`error_subschemas`),
each against the whole meta-schema, as the walk from the root does when it reaches them. A
subschema qualifies when it is reached from the root only through keywords whose meta-schema
validates each member against the meta-schema itself and keeps its errors' paths (`properties`,
`$defs`, `allOf` …); an error anywhere else (at the root; under `items` in draft 7, which the
meta-schema wraps in `anyOf`) has the whole schema validated, as before (docs/benchmarks.md
times the corpus's invalid schema). tests/test_metaschema.py compares the
errors with those of `jsonschema` alone on corpus schemas with errors planted in them.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def python_validator(cls: Any) -> Any:
    """The `jsonschema` validator of the draft's meta-schema, built once."""
    return cls(cls.META_SCHEMA)


@cache
def compiled_validator(cls: Any) -> Any:
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


# Keywords whose members the meta-schemas of drafts 4 to 2020-12 validate against the
# meta-schema itself, with nothing around it (no `anyOf`): a member's errors are its own, at
# their own paths. Maps of subschemas, then arrays of them.
_SCHEMA_MAPS = frozenset({"$defs", "definitions", "properties", "patternProperties", "dependentSchemas"})
_SCHEMA_ARRAYS = frozenset({"allOf", "anyOf", "oneOf"})
_NARROWED_DRAFTS = frozenset(
    {"Draft4Validator", "Draft6Validator", "Draft7Validator", "Draft201909Validator", "Draft202012Validator"}
)


def meta_schema_errors(cls: Any, schema: Any, use_compiled: bool = True) -> list:
    """`jsonschema` ValidationErrors of `schema` against the draft `cls`, sorted by path."""
    fast = compiled_validator(cls) if use_compiled else None
    if fast is None:
        return _sorted(python_validator(cls).iter_errors(schema))
    try:
        if fast.is_valid(schema):
            return []
        places = error_subschemas(cls, [e.instance_path for e in fast.iter_errors(schema)])
    except Exception:  # a value jsonschema-rs cannot take (a huge integer, NaN): jsonschema decides
        places = [()]
    if places == [()]:
        return _sorted(python_validator(cls).iter_errors(schema))
    errors = []
    for place in places:
        node = schema
        for token in place:
            node = node[token]
        for error in python_validator(cls).iter_errors(node):
            error.path.extendleft(reversed(place))  # (its path from the root, as the walk gives)
            errors.append(error)
    return _sorted(errors)


def error_subschemas(cls: Any, paths: list) -> list[tuple]:
    """The subschemas (paths from the root, outermost only) that hold errors at these instance
    paths, each the deepest subschema above its error that qualifies (module docstring); [()]
    (the root) when some error has none but the root, or the draft is not one whose keywords
    are known here."""
    if cls.__name__ not in _NARROWED_DRAFTS:
        return [()]
    places = set()
    for path in paths:
        depth = 0  # path[:depth] is a qualifying subschema strictly above the error
        while depth + 2 < len(path):
            keyword, member = path[depth], path[depth + 1]
            if not (
                (keyword in _SCHEMA_MAPS and isinstance(member, str))
                or (keyword in _SCHEMA_ARRAYS and isinstance(member, int))
            ):
                break
            depth += 2
        if depth == 0:
            return [()]
        places.add(tuple(path[:depth]))
    outermost = [p for p in places if not any(p[:n] in places for n in range(2, len(p), 2))]
    return sorted(outermost, key=lambda p: (len(p), [str(token) for token in p]))


def _sorted(errors) -> list:
    return sorted(errors, key=lambda e: list(e.path))
