"""Property-based fuzzing of `pcdlint check` (issue 13), shared by tests/test_fuzz.py (a few
hundred examples in CI) and benchmarks/fuzz_long.py (>= 10,000).

Inputs: random JSON Schemas (properties, items, allOf/anyOf/oneOf, $defs with `$ref` graphs,
cycles included, enums and const unions), PCD presets, the same as YAML (with anchors and
aliases), deep nesting, and option/key text drawn from the hostile Unicode categories (controls,
bidi and other format characters, separators, surrogates, private use, combining marks) plus
workflow-command and Markdown payloads. The property, for every input:

- `check` exits 0, 1 or 2 and never reports an internal error (nor raises);
- every finding's pointer (and its field's pointer) resolves in its document;
- the input file's bytes are unchanged;
- the JSON report is strict JSON (no NaN/Infinity constants).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from hypothesis import strategies as st

HOSTILE = [
    "\n::error::x",
    "\r",
    "\x1b[2J",
    "\x07",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "%0A",
    "<script>",
    "[a](javascript:x)",
    "|",
    "`",
    "{{ 7*7 }}",
    "~1",
    "/",
    "~0",
    "#",
    "\\",
    '"',
    "'",
    "\u0000",
    "\x85",
    "\u2028",
    "CAT_",
    " ",
    "\t",
]
CATEGORIES = ["Cc", "Cf", "Zs", "Zl", "Zp", "Cs", "Co", "Mn", "Lu", "Ll", "Nd", "Po", "Sm", "So"]

chars = st.characters(categories=CATEGORIES)
fragments = st.one_of(
    st.text(chars, max_size=6),
    st.sampled_from(HOSTILE),
    st.text("abcdefgh_ABCDE0123", min_size=1, max_size=8),
)
texts = st.lists(fragments, max_size=4).map("".join)
scalars = st.one_of(
    texts,
    st.integers(-(10**30), 10**30),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
)
options = st.lists(st.one_of(texts, texts, texts, scalars), min_size=0, max_size=12)


leaves = st.one_of(
    st.builds(lambda o: {"enum": o}, options),
    st.builds(lambda o: {"type": "string", "enum": o, "description": "d"}, options),
    st.builds(lambda o, kw: {kw: [{"const": v} for v in o]}, options, st.sampled_from(["oneOf", "anyOf"])),
    st.just({"type": "boolean"}),
    st.builds(
        lambda r: {"$ref": r},
        st.sampled_from(
            ["#/$defs/a", "#/$defs/b", "#", "#/nope", "https://example.com/x.json", "other.json#/x"]
        ),
    ),
    st.builds(
        lambda s: {"$schema": s, "enum": ["a", "b"]},
        st.one_of(
            st.integers(),
            texts,
            st.sampled_from(
                ["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"]
            ),
        ),
    ),
    st.dictionaries(texts, scalars, max_size=3),
)


def _schema(children):
    return st.one_of(
        st.builds(
            lambda p: {"type": "object", "properties": p}, st.dictionaries(texts, children, max_size=4)
        ),
        st.builds(lambda i: {"type": "array", "items": i}, children),
        st.builds(
            lambda kw, xs: {kw: xs},
            st.sampled_from(["allOf", "anyOf", "oneOf", "prefixItems"]),
            st.lists(children, max_size=3),
        ),
        st.builds(
            lambda d, r: {"$defs": d, **r},
            st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3),
            children.filter(lambda c: isinstance(c, dict)),
        ),
        st.builds(
            lambda c, ign: {**c, "x-pcdlint-ignore": ign} if isinstance(c, dict) else c,
            children,
            st.one_of(st.sampled_from(["PCD001", "PCD999", "nothing"]), st.lists(texts, max_size=2)),
        ),
    )


schemas = st.recursive(leaves, _schema, max_leaves=12)
presets = st.one_of(
    st.builds(
        lambda f: {"schema": f},
        st.dictionaries(
            texts,
            st.builds(
                lambda o, t: {"type": t, "choices": o}, options, st.sampled_from(["enum", "multi", "boolean"])
            ),
            min_size=1,
            max_size=4,
        ),
    ),
    st.builds(
        lambda fs: {"fields": fs},
        st.lists(st.builds(lambda n, o: {"name": n, "choices": o}, texts, options), min_size=1, max_size=4),
    ),
    st.builds(
        lambda q: {"questions": q},
        st.dictionaries(
            texts,
            st.builds(lambda c: {"type": "single", "criteria": c}, st.dictionaries(texts, texts, max_size=5)),
            min_size=1,
            max_size=3,
        ),
    ),
)


def _deep(depth: int, keyword: str, inner) -> str:
    opening, closing = {
        "properties": ('{"type":"object","properties":{"x":', "}}"),
        "items": ('{"type":"array","items":', "}"),
        "allOf": ('{"allOf":[', "]}"),
        "array": ("[", "]"),
    }[keyword]
    return opening * depth + json.dumps(inner) + closing * depth


deep = st.builds(
    _deep,
    st.integers(1, 1_400),
    st.sampled_from(["properties", "items", "allOf", "array"]),
    st.builds(lambda o: {"enum": o}, options),
)


def _yaml_with_aliases(value) -> str:
    body = json.dumps(value, ensure_ascii=False)  # JSON is YAML 1.2 flow syntax
    return f"shared: &shared {json.dumps(['a', 'b'])}\nlinks: [*shared, *shared]\ndoc: {body}\n"


@st.composite
def documents(draw) -> tuple[str, str]:
    """(file suffix, file text)."""
    kind = draw(st.sampled_from(["schema", "schema", "preset", "yaml", "yaml-alias", "deep", "raw"]))
    if kind == "deep":
        return ".json", draw(deep)
    if kind == "raw":  # not even valid JSON/YAML
        return draw(st.sampled_from([".json", ".yaml"])), draw(st.text(max_size=60))
    value = draw(presets) if kind == "preset" else draw(schemas)
    if kind == "yaml":
        return ".yaml", json.dumps(value, ensure_ascii=False)
    if kind == "yaml-alias":
        return ".yaml", _yaml_with_aliases(value)
    if draw(st.booleans()):
        value = {"name": "wrapped", "schema": value} if isinstance(value, dict) else value
    # ensure_ascii keeps lone surrogates as \\udXXX escapes (they cannot be written as UTF-8)
    return ".json", json.dumps(value, ensure_ascii=draw(st.booleans()) or _has_surrogate(value))


def _has_surrogate(value) -> bool:
    text = json.dumps(value)
    return (
        "\\ud8" in text
        or "\\ud9" in text
        or "\\uda" in text
        or "\\udb" in text
        or "\\udc" in text
        or "\\udd" in text
        or "\\ude" in text
        or "\\udf" in text
    )


def _resolves(data, pointer: str) -> bool:
    from auditor.schema.documents import resolve_pointer

    try:
        resolve_pointer(data, pointer)
        return True
    except (KeyError, IndexError, ValueError, TypeError):
        return False


def check_property(document: tuple[str, str], runner, cli, extra_args=(), json_report: bool = True) -> int:
    """Run `check` on one generated document and assert the property; returns the exit code.

    `json_report=False` reads the SARIF report instead (no verified suggestions: faster).
    """
    from auditor.schema.documents import parse_document, run_deep

    suffix, text = document
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzz{suffix}"
        raw = text.encode("utf-8", "surrogatepass")
        path.write_bytes(raw)
        before = hashlib.sha256(raw).hexdigest()
        fmt = "json" if json_report else "sarif"
        result = runner.invoke(cli, ["check", str(path), "-f", fmt, *extra_args])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"raised {result.exception!r} on {text[:300]!r}"
        )
        assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
        assert "internal error" not in result.stderr, (result.stderr, text[:300])
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the input changed"
        if result.exit_code != 2:

            def refuse(constant):
                raise AssertionError(f"non-standard JSON constant {constant}")

            report = json.loads(result.stdout, parse_constant=refuse)
            data = run_deep(parse_document, raw, suffix, str(path)).data
            if json_report:
                pointers = [(f["pointer"], f["site"]) for f in report["findings"]]
            else:
                pointers = [
                    (r["properties"]["pointer"], r["properties"]["fieldPointer"])
                    for r in report["runs"][0]["results"]
                ]
            for pair in pointers:
                for pointer in pair:
                    assert _resolves(data, pointer), (pointer, text[:300])
        return result.exit_code


# -- server answers (issue 36): what a hostile or broken server may send back -------------------
# Any JSON value, hostile numbers included (huge integers, NaN/inf, -0.0, booleans where numbers
# belong), and raw bytes that are not JSON or not UTF-8.
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**60), 10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    st.sampled_from(["-0.5", "NaN", "", "0", "1e400"]),
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)),
    max_leaves=10,
)
raw_answers = st.one_of(
    st.binary(max_size=80),
    st.sampled_from(
        [
            b"[" * 3000 + b"]" * 3000,
            b'{"n": ' + b"9" * 5000 + b"}",
            b'{"a": NaN}',
            b'{"a": -Infinity}',
            b'{"choices": "\xff\xfe"}',
            b"null",
            b"[]",
            b'{"answers": []}',
        ]
    ),
)


def _mutate(value, draw, depth: int = 0):
    """The value with at most one node (drawn along one path) replaced by any JSON value."""
    if depth > 6 or not draw(st.booleans()):
        return value
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        return {
            **value,
            key: _mutate(value[key], draw, depth + 1) if draw(st.booleans()) else draw(json_values),
        }
    if isinstance(value, list) and value:
        index = draw(st.integers(0, len(value) - 1))
        copy = list(value)
        copy[index] = _mutate(value[index], draw, depth + 1) if draw(st.booleans()) else draw(json_values)
        return copy
    return draw(json_values)


def _encode(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


@st.composite
def completions_answers(draw) -> tuple[int, bytes]:
    """(prompt count, answer bytes): an OpenAI completions answer with echo log-probs, often broken."""
    count = draw(st.integers(1, 3))
    if draw(st.integers(0, 9)) == 0:
        return count, draw(raw_answers)
    choices = []
    for index in range(draw(st.sampled_from([count, count, count, count + 1]))):
        tokens = draw(st.lists(texts, min_size=1, max_size=5))
        logprobs = [None] + draw(
            st.lists(
                st.floats(max_value=0.0, allow_nan=False), min_size=len(tokens) - 1, max_size=len(tokens) - 1
            )
        )
        choices.append(
            {
                "index": index,
                "text": "".join(tokens),
                "finish_reason": "length",
                "logprobs": {"tokens": tokens, "token_logprobs": logprobs, "top_logprobs": None},
            }
        )
    answer = {"id": "cmpl", "object": "text_completion", "created": 0, "model": "m", "choices": choices}
    return count, _encode(_mutate(answer, draw))


@st.composite
def system_one_answers(draw) -> tuple[dict, bytes]:
    """(System One body, answer bytes): an ``answers`` object per question id, often broken."""
    questions, answers = {}, {}
    for number in range(draw(st.integers(1, 3))):
        qid = f"q{number}"
        kind = draw(st.sampled_from(["choice", "score", "noul"]))
        if kind == "choice":
            keys = draw(
                st.lists(
                    st.sampled_from(["A", "B", "tea", "coffee", "x_1"]), min_size=2, max_size=4, unique=True
                )
            )
            questions[qid] = {"type": "choice", "instructions": "pick", "criteria": dict.fromkeys(keys)}
            probs = {key: draw(st.floats(0, 1)) for key in keys}
            answers[qid] = {"choice": keys[0], "probabilities": probs}
        elif kind == "score":
            levels = draw(st.integers(2, 5))
            questions[qid] = {"type": "score", "instructions": "rate", "criteria": ["level"] * levels}
            answers[qid] = {
                "score": draw(st.floats(0, levels)),
                "probabilities": {str(i): draw(st.floats(0, 1)) for i in range(levels)},
            }
        else:
            questions[qid] = {"type": "noul", "instructions": "yes?"}
            answers[qid] = {"noul": draw(st.floats(0, 1))}
    body = {"state": "a document", "questions": questions}
    if draw(st.integers(0, 9)) == 0:
        return body, draw(raw_answers)
    return body, _encode(_mutate({"answers": answers}, draw))
