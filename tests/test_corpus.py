"""The whole shared corpus: no crash, and PCD001 equals an independent re-computation.

The re-computation below does not use the engine's scoring: it reads each reported field's
options straight from the file by JSON Pointer, hoists the common prefix, encodes each
remainder alone with the raw `tokenizers.Tokenizer`, and groups options by first token.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import NO_CORPUS, corpus_files

FILES = corpus_files()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not FILES, reason=NO_CORPUS)]


@pytest.fixture(scope="module")
def corpus_report():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor",
            "check",
            "--format",
            "json",
            "--select",
            "PCD0*",
            *(str(p) for p in FILES),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=900,
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def resolve(document, pointer: str):
    node = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def options_of(document, site) -> list:
    node = resolve(document, site["pointer"])
    kind = site["kind"]
    if kind == "enum":
        return node["enum"]
    if kind == "nullable-enum":  # `nullable: true` adds null
        return node["enum"] + [None]
    if kind.endswith("-const"):
        out = []
        for branch in node[kind.split("-")[0]]:
            if "const" in branch:
                out.append(branch["const"])
            elif "enum" in branch:
                out.extend(branch["enum"])
            elif branch["type"] == "boolean":
                out.extend([True, False])
            else:  # {"type": "null"}
                out.append(None)
        return out
    if kind == "discriminator":  # each branch (through its local $ref) pins the property
        keyword = "oneOf" if "oneOf" in node else "anyOf"
        out = []
        for branch in node[keyword]:
            while "$ref" in branch:
                branch = resolve(document, branch["$ref"][1:])
            pinned = branch["properties"][site["name"]]
            out.append(pinned["const"] if "const" in pinned else pinned["enum"][0])
        return out
    if kind == "nullable-boolean":
        return [True, False, None]
    if kind in ("boolean", "preset-boolean"):
        return [True, False]
    if kind.startswith("question-"):
        return list(node["criteria"])
    return node["choices"]


def independent_buckets(tokenizer, field: str, options: list, array_depth: int = 0) -> list[tuple[str, list]]:
    strings = [json.dumps(o, ensure_ascii=False)[1:-1] for o in options if isinstance(o, str)]
    prefix = os.path.commonprefix(strings) if len(strings) > 1 else ""
    quote = tokenizer.encode('"', add_special_tokens=False).ids[0]
    groups: dict[int, list] = {}
    for option in options:
        if isinstance(option, str):
            rest = json.dumps(option, ensure_ascii=False)[1:-1][len(prefix) :]
            ids = tokenizer.encode(rest, add_special_tokens=False).ids
            first = ids[0] if ids else quote
        else:  # a literal is cut where the canonical tokenization of `"f": <literal>` cuts
            # (items of an array: of `"f": [<literal>`)
            base = f'  "{field}":' + (" " + "[" * array_depth if array_depth else "")
            gap = "" if array_depth else " "
            enc = tokenizer.encode(f"{base}{gap}{json.dumps(option)}", add_special_tokens=False)
            at = len(base) + len(gap)
            first = next(i for i, (s, e) in zip(enc.ids, enc.offsets) if s <= at < e)
        groups.setdefault(first, []).append(option)
    return [(tokenizer.decode([t]), members) for t, members in groups.items()]


def test_engine_pcd001_equals_independent_computation(corpus_report):
    from tokenizers import Tokenizer

    from auditor.tokenizers.loader import load_tokenizer

    raw = Tokenizer.from_str(load_tokenizer("qwen2.5").hf.to_str())
    engine = {(f["path"], f["site"]): f for f in corpus_report["findings"] if f["code"] == "PCD001"}
    checked = collided = 0
    for file in corpus_report["files"]:
        with open(file["path"], encoding="utf-8") as handle:
            document = json.load(handle)
        for site in file["sites"]:
            expected = independent_buckets(
                raw, site["name"], options_of(document, site), site.get("array_depth", 0)
            )
            finding = engine.pop((file["path"], site["pointer"]), None)
            checked += 1
            if any(len(members) > 1 for _, members in expected):
                collided += 1
                assert finding, f"{file['path']} {site['pointer']}: engine missed a collision"
                got = [(b["token"], b["options"]) for b in finding["data"]["buckets"]]
                assert got == expected, f"{file['path']} {site['pointer']}"
            else:
                assert finding is None, f"{file['path']} {site['pointer']}: engine-only collision"
    assert not engine, f"PCD001 findings on no reported site: {list(engine)[:3]}"
    assert checked > 500 and collided > 50


def test_corpus_summary_is_consistent(corpus_report):
    summary = corpus_report["summary"]
    assert summary["files"] == len(FILES)
    assert summary["findings"] == len(corpus_report["findings"])
    assert sum(summary["by_code"].values()) == summary["findings"]
    assert {f["path"] for f in corpus_report["files"]} == {str(p) for p in FILES}
