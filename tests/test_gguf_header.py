"""GGUF headers that declare more than the file holds are refused before anything allocates.

A 112-byte file declaring an array of 2^60 elements took gguf's reader 45 s and ended in a
SystemError; every entry point that reads a GGUF (`check -t`, `verify --model`, `verify
--backend openai --tokenizer`) now walks the header first (auditor.tokenizers.gguf_header).
"""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from auditor.errors import TokenizerError
from auditor.tokenizers.gguf_header import GGUFArray, read_gguf_header, string_element


def gguf_string(text: bytes, length: int | None = None) -> bytes:
    return struct.pack("<Q", len(text) if length is None else length) + text


def header(kv: bytes, kv_count: int = 1, tensor_count: int = 0, pad_to: int = 112) -> bytes:
    data = b"GGUF" + struct.pack("<IQQ", 3, tensor_count, kv_count) + kv
    return data + b"\0" * max(0, pad_to - len(data))


HOSTILE = {
    "huge-string-array": (
        header(gguf_string(b"tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1 << 60)),
        "the length of array 'tokenizer.ggml.tokens' declares 1152921504606846976",
    ),
    "huge-int-array": (
        header(gguf_string(b"tokenizer.ggml.token_type") + struct.pack("<IIQ", 9, 5, 1 << 40)),
        "declares 1099511627776, more than the",
    ),
    "huge-kv-count": (header(b"", kv_count=1 << 50), "the metadata count declares 1125899906842624"),
    "huge-tensor-count": (
        header(b"", kv_count=0, tensor_count=1 << 40),
        "the tensor count declares 1099511627776",
    ),
    "huge-key-length": (header(gguf_string(b"k", length=1 << 62)), "declares 4611686018427387904 bytes"),
    "huge-string-value": (
        header(gguf_string(b"general.name") + struct.pack("<I", 8) + gguf_string(b"x", 1 << 40)),
        "'general.name' declares 1099511627776 bytes",
    ),
    "unknown-type": (header(gguf_string(b"general.name") + struct.pack("<I", 77)), "unknown value type 77"),
    "nested-arrays": (
        header(gguf_string(b"a") + struct.pack("<IIQ", 9, 9, 1) + struct.pack("<IQ", 9, 1) * 6, pad_to=200),
        "nests arrays deeper than 4",
    ),
    "truncated": (
        header(gguf_string(b"general.name") + struct.pack("<I", 4), pad_to=0),
        "the header ends inside",
    ),
    "too-many-dims": (
        header(gguf_string(b"t") + struct.pack("<I", 100), kv_count=0, tensor_count=1, pad_to=200),
        "declares 100 dimensions",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_header_is_refused_in_one_line(case, tmp_path):
    data, says = HOSTILE[case]
    path = tmp_path / f"{case}.gguf"
    path.write_bytes(data)
    with pytest.raises(TokenizerError) as caught:
        read_gguf_header(path)
    text = str(caught.value)
    assert says in text and "\n" not in text and "not a readable GGUF file" in text, text


def test_the_real_smollm2_header_reads():
    from auditor.decoder import DecoderError
    from auditor.decoder.model import default_gguf_path

    try:
        path = default_gguf_path()
    except DecoderError as exc:
        pytest.skip(str(exc))
    found = read_gguf_header(path)
    assert found.metadata["tokenizer.ggml.tokens"] == GGUFArray(8, 49152)
    assert found.metadata["tokenizer.ggml.pre"] == "smollm" and found.tensor_count == 272


@pytest.mark.slow  # gguf's reader maps the whole file
def test_a_token_read_from_the_header_is_the_one_gguf_reads():
    """string_element steps to one token of the vocabulary; gguf's own reader (seconds on this
    file: it maps every tensor) agrees on the first, a middle, the last and the special ones."""
    from gguf import GGUFReader

    from auditor.decoder import DecoderError
    from auditor.decoder.model import default_gguf_path

    try:
        path = default_gguf_path()
    except DecoderError as exc:
        pytest.skip(str(exc))
    found = read_gguf_header(path)
    tokens = GGUFReader(str(path)).fields["tokenizer.ggml.tokens"]
    eos = found.metadata["tokenizer.ggml.eos_token_id"]
    for index in (0, 1, 2, 4321, eos, 49151):
        theirs = bytes(tokens.parts[tokens.data[index]]).decode("utf-8")
        assert string_element(path, found, "tokenizer.ggml.tokens", index) == theirs
    assert string_element(path, found, "tokenizer.ggml.tokens", 49152) is None
    assert string_element(path, found, "tokenizer.ggml.pre", 0) is None  # not an array


@pytest.mark.parametrize(
    "args",
    [
        ("check", "-t", "{gguf}", "{schema}"),
        ("verify", "--model", "{gguf}", "{schema}"),
        (
            "verify",
            "--backend",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--tokenizer",
            "{gguf}",
            "{schema}",
        ),
    ],
    ids=["check-tokenizer", "verify-model", "verify-server-tokenizer"],
)
def test_the_112_byte_gguf_is_a_fast_exit_2(args, tmp_path):
    gguf = tmp_path / "hostile.gguf"
    gguf.write_bytes(HOSTILE["huge-string-array"][0])
    assert gguf.stat().st_size == 112
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"c": {"enum": ["a", "b"]}}}')
    argv = [arg.format(gguf=gguf, schema=schema) for arg in args]
    result = subprocess.run(
        [sys.executable, "-m", "auditor", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PCDLINT_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "declares 1152921504606846976" in lines[0], result.stderr


def test_the_header_check_runs_before_gguf_reads_the_file(tmp_path, monkeypatch):
    """The refusal comes from the header walk, so gguf's reader (45 s on this file) never runs."""
    import gguf

    from auditor.tokenizers import convert

    def never(*args, **kwargs):
        raise AssertionError("gguf.GGUFReader ran on a header that declares more than the file holds")

    monkeypatch.setattr(gguf, "GGUFReader", never)
    path = tmp_path / "hostile.gguf"
    path.write_bytes(HOSTILE["huge-string-array"][0])
    with pytest.raises(TokenizerError, match="declares 1152921504606846976"):
        convert.tokenizer_from_gguf(path)
