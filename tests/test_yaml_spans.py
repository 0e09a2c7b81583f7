"""YAML value spans cover the scalar exactly as written (the SARIF region test relies on it)."""

from __future__ import annotations

import yaml

from auditor.schema.documents import load_document

SOURCE = """\
schema:
  lang:
    type: enum
    choices:
      - C#
      - F# # a comment
      - a, b
      - 'it''s'
      - "q\\"x"
      - http://example.com/a
  flow:
    type: enum
    choices: [x1, "y, 2", z#3 ]
"""


def test_every_yaml_scalar_span_parses_to_its_value(tmp_path):
    path = tmp_path / "preset.yaml"
    path.write_text(SOURCE, encoding="utf-8")
    document = load_document(path)
    lines = SOURCE.splitlines()
    checked = []
    for pointer, span in document.value_spans.items():
        if "/choices/" not in pointer:
            continue
        assert span.line == span.end_line
        text = lines[span.line - 1][span.column - 1 : span.end_column - 1]
        value = document.data
        for token in pointer.split("/")[1:]:
            value = value[int(token)] if isinstance(value, list) else value[token]
        assert yaml.safe_load(text) == value, (pointer, text)
        checked.append(text)
    assert checked == [
        "C#",
        "F#",
        "a, b",
        "'it''s'",
        '"q\\"x"',
        "http://example.com/a",
        "x1",
        '"y, 2"',
        "z#3",
    ]
