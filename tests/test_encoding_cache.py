"""The encoding cache (auditor.tokenizers.encodings): a warm run reads the ids of every text its
files' lint reads back from the cache and encodes nothing; its output is that of a run without
the cache; a damaged, foreign or stale entry is ignored (or completed) and written again.

Real corpus files, the real qwen2.5 tables; the encoder is only wrapped to count what it is
asked to encode."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from auditor.linter.engine import LintOptions, LintRun, lint
from auditor.reporting.escape import strict_json
from auditor.reporting.json_format import run_to_dict
from auditor.tokenizers import encodings, fast
from auditor.tokenizers.loader import load_tokenizer
from support import CORPUS, FIXTURES, NO_CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)

# a few real third-party schemas with collisions, multi-token options and literals, and one
# bundled fixture
FILES = [
    *sorted((CORPUS / "json-schema").glob("*.json"))[:5],
    *sorted((CORPUS / "pcd-presets").glob("*.json"))[:3],
    FIXTURES / "schemas" / "risk_triage.json",
]


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """A fresh cache directory, and the list of texts the fast encoder is asked to encode."""
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    asked: list[str] = []
    real = fast.FastEncoder.encode_ascii_many

    def encode(self, texts):
        asked.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(fast.FastEncoder, "encode_ascii_many", encode)
    return asked


def run(files=FILES, use_cache: bool = True, **options) -> tuple[dict, LintRun]:
    """The JSON document of a lint of `files` by a newly loaded qwen2.5 (an empty memo)."""
    tokenizer = load_tokenizer("qwen2.5")
    linted = lint([str(f) for f in files], [tokenizer], LintOptions(jobs=1, **options), use_cache=use_cache)
    document = strict_json(run_to_dict(linted))
    document.pop("tool")
    return document, linted


def entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "encodings").rglob("*.json"))


def payload(entry: Path) -> bytes:
    return entry.read_bytes().split(b"\n", 1)[1]


def write_payload(entry: Path, payload: bytes) -> None:
    """Write `payload` back into the entry with a matching header: what only the payload's own
    checks can refuse."""
    header = json.loads(entry.read_bytes().split(b"\n", 1)[0])
    header.update(bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())
    entry.write_bytes(json.dumps(header).encode() + b"\n" + payload)


def rewrite(entry: Path, change) -> None:
    """Change the texts and ids an entry holds (`change(encoded)`, a dict) and write it back
    with a matching header."""
    unpacked = encodings.unpack(payload(entry), 10**9)
    assert unpacked is not None
    encoded, offsets = unpacked
    change(encoded)
    write_payload(entry, encodings.pack(encoded, offsets))


def change_line(entry: Path, change) -> None:
    """Change the JSON line of an entry's payload (`change(data)`: its texts and groups), the ids
    kept as they are."""
    line, ids = payload(entry).split(b"\n", 1)
    data = json.loads(line)
    change(data)
    write_payload(entry, json.dumps(data).encode() + b"\n" + ids)


def past_the_text(data: dict) -> None:
    """Offsets for an entry's first text of one id, its one pair ending past the text."""
    before = 0
    for n, count in data["groups"]:
        if n == 1:
            text = data["texts"][before]
            data["offsets"].append([before, [0, len(text) + 1]])
            return
        before += count
    raise AssertionError("no text of one id")


def test_a_warm_run_encodes_nothing_and_reports_the_same(counted, tmp_path):
    reference, _ = run(use_cache=False)
    assert not entries(tmp_path), "--no-cache writes no encoding entry"
    counted.clear()
    cold, _ = run()
    assert len(counted) > 1_000
    assert len(entries(tmp_path)) == len(FILES)  # one per file (each has fields)
    counted.clear()
    warm, _ = run()
    assert counted == []  # every text read back from the cache
    assert warm == cold == reference
    assert len(reference["findings"]) > 20


def test_a_warm_pool_builds_no_tiktoken(monkeypatch, tmp_path):
    """The pool's parent builds tiktoken before forking for a large share of texts to encode,
    and not where the encoding cache holds them (the whole corpus: 18,000 options)."""
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    files = [
        str(p) for p in sorted(CORPUS.glob("pcd-presets*/*.json")) + sorted(CORPUS.glob("json-schema/*.json"))
    ]
    lint(files, [load_tokenizer("qwen2.5")], LintOptions(jobs=2))  # (the analysis cache)
    shutil.rmtree(tmp_path / "cache" / "encodings")
    outputs, built = [], []
    for _ in range(2):
        tokenizer = load_tokenizer("qwen2.5")
        linted = lint(files, [tokenizer], LintOptions(jobs=2))
        built.append(tokenizer.fast_encoder.built)
        outputs.append(run_to_dict(linted)["findings"])
    assert built == [True, False]
    assert outputs[0] == outputs[1] and len(outputs[0]) > 100


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "not json",
        "id out of the vocabulary",
        "offsets past their text",
        "a text without its ids",
        "ids cut short",
        "a group count not an int",
        "a negative group",
        "another file's entry",
        "another format",
    ],
)
def test_a_damaged_entry_is_ignored_and_rewritten(counted, tmp_path, damage):
    cold, _ = run()
    first, second = entries(tmp_path)[:2]
    if damage == "truncated":
        first.write_bytes(first.read_bytes()[:-10])
    elif damage == "not json":
        first.write_bytes(b"\x00\x01 not an entry")
    elif damage == "id out of the vocabulary":
        rewrite(first, lambda d: d.__setitem__(next(t for t in d if d[t]), (10**6,)))
    elif damage == "offsets past their text":
        change_line(first, past_the_text)
    elif damage == "a text without its ids":
        change_line(first, lambda d: d["texts"].append("extra"))
    elif damage == "ids cut short":
        write_payload(first, payload(first)[:-4])
    elif damage == "a group count not an int":
        change_line(first, lambda d: d["groups"][-1].__setitem__(1, float(d["groups"][-1][1])))
    elif damage == "a negative group":
        change_line(first, lambda d: d["groups"].extend([[1, -1], [1, 1]]))
    elif damage == "another file's entry":
        first.write_bytes(second.read_bytes())
    elif damage == "another format":
        header_line, rest = first.read_bytes().split(b"\n", 1)
        first.write_bytes(header_line.replace(b"pcdlint-encodings", b"pcdlint-other") + b"\n" + rest)
    counted.clear()
    warm, _ = run()
    assert warm == cold
    assert counted, "the damaged entry's texts are encoded again"
    assert encodings.unpack(payload(first), 10**9) is not None
    counted.clear()
    assert run()[0] == cold and counted == []  # rewritten whole


def test_texts_an_entry_lacks_are_encoded_and_added(counted, tmp_path):
    cold, _ = run()
    entry = entries(tmp_path)[0]
    unpacked = encodings.unpack(payload(entry), 10**9)
    assert unpacked is not None
    kept = unpacked[0]
    dropped = list(kept)[::3]

    def drop(encoded):
        for text in dropped:
            del encoded[text]

    rewrite(entry, drop)
    counted.clear()
    assert run()[0] == cold
    # (a dropped text another file's entry holds is read from there)
    assert counted and set(counted) <= set(dropped)
    again = encodings.unpack(payload(entry), 10**9)
    assert again is not None and set(counted) <= set(again[0]) <= set(kept)
    counted.clear()
    assert run()[0] == cold and counted == []


def test_other_options_complete_the_entries(counted, tmp_path):
    """Entries written under other rules or engines hold texts this run does not read and lack
    some it does: the run reads what they hold, encodes the rest and rewrites them; the output
    is that of a run without the cache."""
    options = {"engines": ["rlcd-mlx", "openjev"], "select": ["PCD001", "PCD002", "PCD005"]}
    reference, _ = run(use_cache=False, **options)
    run()  # the default options' entries
    counted.clear()
    assert run(**options)[0] == reference
    assert counted, "the other engines' texts are encoded"
    counted.clear()
    assert run(**options)[0] == reference and counted == []
    # runs under either options in turn share the entries: nothing encoded, nothing rewritten
    default = run(use_cache=False)[0]
    written = {entry: entry.stat().st_mtime_ns for entry in entries(tmp_path)}
    assert run()[0] == default
    counted.clear()
    assert run(**options)[0] == reference and run()[0] == default
    assert counted == []
    assert {entry: entry.stat().st_mtime_ns for entry in entries(tmp_path)} == written


def test_a_payload_reads_back_as_written():
    """pack / unpack on their own: texts of every length, none included, in any order."""
    encoded = {
        "": (),
        "a": (5,),
        "bb": (1, 2),
        "c": (7,),
        "ddd": (3, 0, 9),
        " e": (4, 4),
        "caf\u00e9": (2, 6),
    }
    offsets = {"caf\u00e9": [(0, 3), (3, 4)]}
    assert encodings.unpack(encodings.pack(encoded, offsets), 10) == (encoded, offsets)
    assert encodings.unpack(encodings.pack(encoded), 10) == (encoded, {})
    assert encodings.unpack(encodings.pack({}), 10) == ({}, {})
    assert encodings.unpack(encodings.pack(encoded), 9) is None  # (9 is not below 9)
    assert encodings.unpack(b"[1, 2]\n", 10) is None
    for wrong in ([(0, 3)], [(0, 3), (3, 5)], [(2, 1), (3, 4)]):  # (a pair per id, within the text)
        assert encodings.unpack(encodings.pack(encoded, {"caf\u00e9": wrong}), 10) is None


# options as schemas in other languages and with units spell them: accents (composed and not),
# German, Spanish, CJK, emoji, currency and unit signs, a ligature, options that share a prefix
# that is not ASCII, with ASCII neighbours
OPTIONS_NOT_ASCII = [
    ["\u00e9lev\u00e9", "moyen", "faible"],
    ["cafe\u0301", "caf\u00e9", "th\u00e9"],
    ["Gr\u00f6\u00dfe", "Stra\u00dfe", "\u00dcbersicht"],
    ["ni\u00f1o", "ni\u00f1a", "se\u00f1or"],
    ["\u9ad8", "\u4e2d", "\u4f4e"],
    ["\u7dca\u6025", "\u901a\u5e38", "\u4f4e\u3044"],
    ["\U0001f44d", "\U0001f44e", "\U0001f937"],
    ["\u20ac", "\u00a3", "\u00a5", "USD"],
    ["\u00b0C", "\u00b0F", "K"],
    ["\u00b5s", "ms", "s"],
    ["\ufb01le", "file"],
    ["caf\u00e9_au_lait", "caf\u00e9_noir", "caf\u00e9_cr\u00e8me"],
    ["\U00013000", "ok"],
]


def non_ascii_schemas(folder: Path) -> list[Path]:
    """A schema per list of OPTIONS_NOT_ASCII, and those of the rule cases (fixtures/rules)
    that hold text that is not ASCII, one file each."""
    import yaml

    schemas = {
        f"field-{k}": {"type": "object", "properties": {"field": {"enum": options}}}
        for k, options in enumerate(OPTIONS_NOT_ASCII)
    }
    for case_file in sorted((FIXTURES / "rules").glob("*.yaml")):
        for case in yaml.safe_load(case_file.read_text(encoding="utf-8"))["cases"]:
            schema = case.get("schema")
            if schema is not None and not json.dumps(schema, ensure_ascii=False).isascii():
                schemas[f"{case_file.stem}-{case['id']}"] = schema
    written = []
    for name, schema in schemas.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(schema, ensure_ascii=False), encoding="utf-8")
        written.append(path)
    return written


def test_texts_not_ascii_are_kept_with_their_offsets(counted, tmp_path):
    """Options that are not ASCII: a cold run encodes them with the `tokenizers` build and keeps
    their ids and offsets; a warm run reads them back and never loads that build; the reports
    equal a run without the cache."""
    folder = tmp_path / "schemas"
    folder.mkdir()
    files = non_ascii_schemas(folder)
    assert len(files) > 10
    reference, _ = run(files, use_cache=False)
    cold, linted = run(files)
    assert cold == reference and linted.tokenizers[0].hf.loaded
    kept = [encodings.unpack(payload(entry), 10**9) for entry in entries(tmp_path)]
    assert sum(len(k[1]) for k in kept if k) > 10, "offsets of texts not ASCII are kept"
    counted.clear()
    warm, linted = run(files)
    assert warm == reference and counted == []
    assert not linted.tokenizers[0].hf.loaded, "the `tokenizers` build is not loaded"
    # entries without the offsets: the run that needs them loads the build and adds them
    for entry in entries(tmp_path):
        change_line(entry, lambda data: data.__setitem__("offsets", []))
    again, linted = run(files)
    assert again == reference and linted.tokenizers[0].hf.loaded
    again, linted = run(files)
    assert again == reference and not linted.tokenizers[0].hf.loaded
