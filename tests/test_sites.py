"""The crawler finds each enum-like field once, with exact pointers and source positions."""

from __future__ import annotations

import json

from auditor.schema.documents import load_document
from auditor.schema.sites import analyse


def crawl(path):
    return analyse(load_document(path))


def by_pointer(model):
    return {s.pointer: s for s in model.sites}


def test_ref_target_reported_once_with_first_referencing_field(write_schema):
    path = write_schema(
        {
            "type": "object",
            "properties": {
                "risk": {"$ref": "#/$defs/Risk"},
                "other_risk": {"$ref": "#/$defs/Risk"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Risk"}},
            },
            "$defs": {"Risk": {"enum": ["LOW", "HIGH"]}, "Unused": {"enum": ["a", "b"]}},
        }
    )
    sites = by_pointer(crawl(path))
    assert sorted(sites) == ["/$defs/Risk", "/$defs/Unused"]
    assert sites["/$defs/Risk"].field == "risk" and sites["/$defs/Risk"].name == "risk"
    assert sites["/$defs/Unused"].field == "Unused"


def test_ref_cycles_terminate(write_schema):
    path = write_schema(
        {
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"kind": {"enum": ["leaf", "branch"]}, "child": {"$ref": "#/$defs/Node"}},
                }
            },
            "$ref": "#/$defs/Node",
        }
    )
    sites = by_pointer(crawl(path))
    assert list(sites) == ["/$defs/Node/properties/kind"]


def test_remote_refs_are_noted_not_fetched(write_schema):
    path = write_schema(
        {"properties": {"a": {"$ref": "https://example.com/s.json#/x"}, "b": {"enum": [1, 2]}}}
    )
    model = crawl(path)
    assert model.remote_refs == ["https://example.com/s.json#/x"]
    assert [s.pointer for s in model.sites] == ["/properties/b"]


def test_field_paths_through_nesting(write_schema):
    path = write_schema(
        {
            "type": "object",
            "properties": {
                "ticket": {"type": "object", "properties": {"status": {"enum": ["open", "closed"]}}},
                "windows": {"type": "array", "items": {"enum": ["day", "night"]}},
                "pairs": {"prefixItems": [{"enum": ["x", "y"]}]},
                "extra": {"additionalProperties": {"enum": ["on", "off"]}},
                "cond": {"if": {"type": "string"}, "then": {"enum": ["t1", "t2"]}},
                "both": {"allOf": [{"enum": ["p", "q"]}]},
                "flag": {"type": "boolean"},
                "union": {"oneOf": [{"const": "A"}, {"enum": ["B"]}, {"const": "C"}]},
            },
        }
    )
    fields = {s.pointer: (s.field, s.options) for s in crawl(path).sites}
    assert fields["/properties/ticket/properties/status"] == ("ticket.status", ["open", "closed"])
    assert fields["/properties/windows/items"] == ("windows[]", ["day", "night"])
    assert fields["/properties/pairs/prefixItems/0"] == ("pairs[]", ["x", "y"])
    assert fields["/properties/extra/additionalProperties"] == ("extra.*", ["on", "off"])
    assert fields["/properties/cond/then"] == ("cond", ["t1", "t2"])
    assert fields["/properties/both/allOf/0"] == ("both", ["p", "q"])
    assert fields["/properties/flag"] == ("flag", [True, False])
    assert fields["/properties/union"] == ("union", ["A", "B", "C"])


def test_json_positions_point_at_each_option(tmp_path):
    text = '{\n  "properties": {\n    "risk": {"enum": ["LOW", "MEDIUM"]}\n  }\n}\n'
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    site = crawl(path).sites[0]
    lines = text.splitlines()
    for option, span in zip(site.options, site.option_spans):
        row = lines[span.line - 1]
        assert row[span.column - 1 : span.end_column - 1] == json.dumps(option)
    assert (site.span.line, site.span.column) == (3, 5)  # the "risk" key


def test_yaml_positions_and_plain_values(tmp_path):
    text = "schema:\n  risk:\n    type: enum\n    choices:\n      - LOW\n      - 'MEDIUM'\n      - \"HIGH\" # c\n"
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    model = crawl(path)
    assert model.format == "pcd-preset"
    site = model.sites[0]
    assert site.options == ["LOW", "MEDIUM", "HIGH"] and all(type(o) is str for o in site.options)
    lines = text.splitlines()
    got = [lines[s.line - 1][s.column - 1 : s.end_column - 1] for s in site.option_spans]
    assert got == ["LOW", "'MEDIUM'", '"HIGH"']


def test_openai_wrappers(write_schema):
    inner = {"type": "object", "properties": {"risk": {"enum": ["low", "high"]}}}
    one = crawl(
        write_schema({"type": "json_schema", "json_schema": {"name": "x", "schema": inner}}, "a.json")
    )
    two = crawl(write_schema({"name": "x", "strict": True, "schema": inner}, "b.json"))
    assert one.format == two.format == "openai-wrapper"
    assert [s.pointer for s in one.sites] == ["/json_schema/schema/properties/risk"]
    assert [s.pointer for s in two.sites] == ["/schema/properties/risk"]


def test_preset_variants(write_schema):
    fields = crawl(write_schema({"fields": [{"name": "p", "choices": ["LOW", "HIGH"]}]}, "f.json"))
    questions = crawl(
        write_schema(
            {
                "s": {
                    "text": "t",
                    "questions": {"animal": {"type": "choice", "criteria": {"cat": "c", "dog": "d"}}},
                }
            },
            "q.json",
        )
    )
    assert [(s.field, s.options) for s in fields.sites] == [("p", ["LOW", "HIGH"])]
    assert [(s.field, s.options) for s in questions.sites] == [("animal", ["cat", "dog"])]


def test_non_schema_json_is_skipped(write_schema):
    model = crawl(write_schema({"name": "my-package", "version": "1.0.0", "dependencies": {}}))
    assert model.format == "unknown" and model.sites == []


def test_meta_schema_problems_keep_linting(write_schema):
    model = crawl(write_schema({"type": "object", "properties": {"risk": {"type": 12, "enum": ["a", "b"]}}}))
    assert [p.pointer for p in model.schema_problems] == ["/properties/risk/type"]
    assert [s.pointer for s in model.sites] == ["/properties/risk"]


def test_refs_looked_up_once_give_the_crawl_of_looking_each_up(write_schema, monkeypatch):
    """The crawler looks a `$ref` up once per resolver: on the corpus (and a schema whose
    unresolvable ref recurs, with `$id` subresources) the models are those of a lookup per
    occurrence."""
    import dataclasses

    from auditor.errors import InputFileError
    from auditor.schema import refs
    from support import corpus_files

    path = write_schema(
        {
            "$id": "https://example.com/root",
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/Risk"},
                "b": {"$ref": "#/$defs/Risk"},
                "c": {"$ref": "#/$defs/missing"},
                "d": {"$ref": "#/$defs/missing"},
                "e": {"$ref": "other.json#/x"},
                "f": {"$ref": "child#/$defs/Level"},
                "g": {"$id": "child", "$defs": {"Level": {"enum": ["x", "y"]}}},
            },
            "$defs": {"Risk": {"enum": ["LOW", "HIGH"]}},
        }
    )
    paths = [path, *(p for p in corpus_files() if p.suffix == ".json")]

    def models():
        out = []
        for p in paths:
            try:
                model = crawl(p)
            except InputFileError as error:
                out.append(str(error))
                continue
            out.append(
                (
                    [dataclasses.asdict(s) for s in model.sites],
                    model.schema_problems,
                    model.remote_refs,
                    model.suppressions,
                )
            )
        return out

    once = models()
    assert once[0][1] and once[0][2]  # the seeded schema's problems and remote ref are there

    class Forgetful(dict):
        def __setitem__(self, key, value):
            pass  # nothing kept: every occurrence looked up

    real_init = refs.References.__init__

    def forgetful_init(self, *args):
        real_init(self, *args)
        self._resolved = Forgetful()

    monkeypatch.setattr(refs.References, "__init__", forgetful_init)
    assert models() == once
