"""Turn vocabularies in other formats into `tokenizers.Tokenizer` pipelines, exactly.

Sources: tiktoken-style BPE ranks (`.tiktoken` files, quicktok's binary `.vocab`, Mistral's Tekken
`.json`), SentencePiece `.model` files and GGUF metadata. Each converter rebuilds the vocabulary's
own pre-tokenizer regex, normaliser and special tokens at their real ids; the tests compare every
built-in against its package's own encoder. Heavy libraries are imported only when converting.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
from collections.abc import Iterable
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from auditor.distribution import install_hint
from auditor.errors import TokenizerError
from auditor.shown import shorten

# ---------------------------------------------------------------- pre-tokenizer regexes
# Written for the `tokenizers` regex engine (Oniguruma): tiktoken's cl100k string uses possessive
# quantifiers (`?+`, `++`, `{1,3}+`) that Oniguruma reads differently; this is the same language
# without them (as transformers' TikTokenConverter and Llama 3's tokenizer.json spell it).
CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
LLAMA3_PATTERN = CL100K_PATTERN
# tiktoken's o200k_base pat_str, verbatim (case-aware letters, contractions as suffixes).
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
QWEN2_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN3_5_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
TIKTOKEN_PATTERNS = {"cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}
QWEN2_RANK_COUNT = 151_643  # Qwen's qwen.tiktoken
O200K_MIN_RANKS = 180_000


# ---------------------------------------------------------------- regex probe
# A pre-tokenizer regex runs in the Rust tokenizer (Oniguruma, a backtracking engine), which a
# Python process cannot interrupt: a catastrophic pattern such as ``(a+)+b`` would hang the run
# on the first long word. Patterns not among the known ones above are therefore first run in a
# child process on long runs of each character class, with a deadline.
KNOWN_PATTERNS = frozenset({CL100K_PATTERN, O200K_PATTERN, QWEN2_PATTERN, QWEN3_5_PATTERN})
REGEX_PROBE_SECONDS = 10.0
REGEX_PROBE_CHARS = 4096
_PROBED: set[str] = set()  # patterns that passed in this process
_PROBE_CHILD = """
import json, sys
from tokenizers import Regex, pre_tokenizers
n = int(sys.argv[1])
runs = ["a", "A", "1", " ", "\\n", "\\t", "'", ".", "-", "\u00e9", "\u4e2d", "a ", "a1", "'s", " a", "\\r\\n"]
texts = [(run * n)[:n] for run in runs] + [(run * n)[:n] + "!" for run in ("a", "1", " ")]
for number, pattern in enumerate(json.load(sys.stdin)):
    print(number, flush=True)
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    for text in texts:
        split.pre_tokenize_str(text)
print("done", flush=True)
"""


def probe_patterns(patterns: Iterable[str], source: str) -> None:
    """Refuse a regex that backtracks catastrophically, before the Rust tokenizer runs it here.

    Known patterns (``KNOWN_PATTERNS``) and ones already probed in this process pass at once;
    the others are run in a child process on ``REGEX_PROBE_CHARS``-character runs of letters,
    digits, spaces, newlines and punctuation, within ``REGEX_PROBE_SECONDS``.
    """
    import subprocess
    import sys

    unknown = [
        p
        for p in dict.fromkeys(patterns)
        if isinstance(p, str) and p not in KNOWN_PATTERNS and p not in _PROBED
    ]
    if not unknown:
        return
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _PROBE_CHILD, str(REGEX_PROBE_CHARS)],
            input=json.dumps(unknown),
            capture_output=True,
            text=True,
            timeout=REGEX_PROBE_SECONDS,
        )
        output, failed = done.stdout, done.returncode != 0
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        number = int(([0] + [int(line) for line in output.split() if line.isdigit()])[-1])
        raise TokenizerError(
            f"{source}: the pre-tokenizer pattern {_shown_pattern(unknown[number])} takes more than "
            f"{REGEX_PROBE_SECONDS:g} s on a {REGEX_PROBE_CHARS}-character probe text (catastrophic "
            "backtracking); refused"
        ) from None
    if failed or not output.rstrip().endswith("done"):
        lines = [line for line in output.split() if line.isdigit()]
        culprit = unknown[int(lines[-1])] if lines else unknown[0]
        last = (done.stderr.strip().splitlines() or ["the probe failed"])[-1]
        raise TokenizerError(
            f"{source}: the pre-tokenizer pattern {_shown_pattern(culprit)} cannot be used ({last[:160]})"
        )
    _PROBED.update(unknown)


def _shown_pattern(pattern: str) -> str:
    return shorten(repr(pattern), 80)


def json_regexes(path: Path) -> list[str]:
    """Every ``"Regex": "…"`` value of a tokenizer.json (pre-tokenizer splits, normalizer replaces)."""
    return regexes_in(path.read_bytes())


def regexes_in(data: bytes) -> list[str]:
    """json_regexes of a tokenizer.json's bytes."""
    import re

    if b'"Regex"' not in data:
        return []
    found = []
    for match in re.finditer(rb'"Regex"\s*:\s*"((?:[^"\\]|\\.)*)"', data):
        try:
            found.append(json.loads(b'"' + match.group(1) + b'"'))
        except ValueError:
            continue  # not JSON text: Tokenizer.from_file will say so
    return found


def default_tiktoken_pattern(rank_count: int) -> str:
    """The split regex a `.tiktoken` file gets without --tiktoken-pattern, from its size."""
    if rank_count >= O200K_MIN_RANKS:
        return "o200k"
    if rank_count == QWEN2_RANK_COUNT:
        return "qwen2"
    return "cl100k"


# the names --tiktoken-pattern takes (its help lists them: tests/test_cli.py checks)
NAMED_PATTERNS = {**TIKTOKEN_PATTERNS, "qwen2": QWEN2_PATTERN}


def resolve_pattern(choice: str) -> str:
    """--tiktoken-pattern: a name (cl100k, o200k, qwen2) or a regex of its own."""
    if choice in NAMED_PATTERNS:
        return NAMED_PATTERNS[choice]
    try:
        Regex(choice)
    except Exception as exc:
        raise TokenizerError(f"--tiktoken-pattern: not a valid regex ({exc})") from exc
    return choice


# ---------------------------------------------------------------- BPE ranks → tokenizer


def byte_alphabet() -> dict[int, str]:
    """GPT-2's printable spelling of the 256 byte values (ByteLevel's alphabet)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    spelled = dict(zip(printable, printable))
    extra = 0
    for byte in range(256):
        if byte not in spelled:
            spelled[byte] = 256 + extra
            extra += 1
    return {byte: chr(code) for byte, code in spelled.items()}


def tokenizer_from_ranks(
    ranks: dict[bytes, int], pattern: str, specials: dict[str, int], id_offset: int = 0, nfc: bool = False
) -> Tokenizer:
    """A byte-level BPE that encodes exactly like tiktoken with these mergeable ranks.

    Merges are every split of a token into two tokens, ranked by the merged token's rank (what
    tiktoken's lowest-rank-pair loop does); `ignore_merges` emits a piece that is itself a token
    whole, as tiktoken does. Regular ids are `rank + id_offset` (Tekken puts its specials first);
    specials keep their own ids, gaps included.
    """
    alphabet = byte_alphabet()

    def spell(raw: bytes) -> str:
        return "".join(alphabet[b] for b in raw)

    vocab = {spell(token): rank + id_offset for token, rank in ranks.items()}
    ranked = []
    for token, rank in ranks.items():
        for cut in range(1, len(token)):
            left, right = ranks.get(token[:cut]), ranks.get(token[cut:])
            if left is not None and right is not None:
                ranked.append((rank, left, right, cut, token))
    ranked.sort()
    merges = [(spell(token[:cut]), spell(token[cut:])) for _, _, _, cut, token in ranked]
    for text, token_id in specials.items():
        if vocab.setdefault(text, token_id) != token_id:
            raise TokenizerError(f"special token {text!r} is also a regular token")
    tokenizer = Tokenizer(models.BPE(vocab, merges, fuse_unk=False, ignore_merges=True))
    if nfc:
        tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    # Already in the model vocabulary at their ids, so the added vocabulary reuses those ids.
    tokenizer.add_special_tokens(
        [
            AddedToken(text, special=True, normalized=False)
            for text in sorted(specials, key=specials.__getitem__)
        ]
    )
    return tokenizer


def read_tiktoken_ranks(path: Path) -> dict[bytes, int]:
    """A `.tiktoken` file: one `base64(token) rank` per line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerError(f"{path}: cannot read ({exc.strerror})") from exc
    ranks: dict[bytes, int] = {}
    decode = (
        binascii.a2b_base64
    )  # strict: what base64.b64decode(validate=True) accepts, without its checks in Python
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[decode(token, strict_mode=True)] = int(rank)
        except ValueError as exc:  # binascii.Error is a ValueError
            raise TokenizerError(f"{path}: not a .tiktoken file (line {number}: {exc})") from exc
    if not ranks:
        raise TokenizerError(f"{path}: not a .tiktoken file (no ranks)")
    return ranks


def tokenizer_from_tiktoken(
    path: Path, pattern: str | None = None, specials: tuple[str, ...] | list[str] = (), nfc: bool = False
) -> Tokenizer:
    """A `.tiktoken` file; specials follow the last rank in order. PATTERN: a regex, or by size."""
    ranks = read_tiktoken_ranks(path)
    regex = resolve_pattern(pattern or default_tiktoken_pattern(len(ranks)))
    return tokenizer_from_ranks(ranks, regex, following_ranks(ranks, specials), nfc=nfc)


def following_ranks(ranks: dict[bytes, int], specials: tuple[str, ...] | list[str]) -> dict[str, int]:
    """Special tokens numbered after the last rank, in order (a `.tiktoken` file's specials)."""
    first = max(ranks.values()) + 1
    return {text: first + i for i, text in enumerate(specials)}


# quicktok's binary data: u32 count, then (u16 length, bytes, u32 rank) per token; specials are
# u32 count, then (u32 id, u16 length, utf-8 text).
def read_quicktok_vocab(path: Path) -> dict[bytes, int]:
    data = path.read_bytes()
    (count,), offset, ranks = struct.unpack_from("<I", data), 4, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        ranks[token] = rank
        offset += 6 + length
    return ranks


def read_quicktok_specials(path: Path) -> dict[str, int]:
    data = path.read_bytes()
    (count,), offset, specials = struct.unpack_from("<I", data), 4, {}
    for _ in range(count):
        token_id, length = struct.unpack_from("<IH", data, offset)
        specials[data[offset + 6 : offset + 6 + length].decode("utf-8")] = token_id
        offset += 6 + length
    return specials


# ---------------------------------------------------------------- Mistral Tekken

# Files of version <= v7 carry no special_tokens list; these are mistral-common's defaults
# (Tekkenizer.DEPRECATED_SPECIAL_TOKENS), then "<SPECIAL_{id}>" fillers up to the declared count.
TEKKEN_DEFAULT_SPECIALS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)


def is_tekken_file(path: Path) -> bool:
    """A Tekken file is JSON with `config.pattern` and a `vocab` list (a tokenizer.json is not)."""
    if "tekken" in path.name.lower():
        return True
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"config"' in head and b'"pattern"' in head and b'"model"' not in head


def tokenizer_from_tekken(path: Path) -> Tokenizer:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        config = data["config"]
        pattern, size = config["pattern"], config["default_vocab_size"]
        special_count = config["default_num_special_tokens"]
        inner = size - special_count
        ranks = {
            base64.b64decode(entry["token_bytes"]): entry["rank"]
            for entry in data["vocab"]
            if entry["rank"] < inner
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TokenizerError(f"{path}: not a Tekken tokenizer file ({type(exc).__name__}: {exc})") from exc
    listed = data.get("special_tokens")
    if listed:
        specials = {entry["token_str"]: entry["rank"] for entry in listed}
    else:
        specials = {text: i for i, text in enumerate(TEKKEN_DEFAULT_SPECIALS)}
    for token_id in range(len(specials), special_count):
        specials[f"<SPECIAL_{token_id}>"] = token_id
    if not isinstance(pattern, str):
        raise TokenizerError(f"{path}: not a Tekken tokenizer file (config.pattern is not a string)")
    probe_patterns([pattern], str(path))
    return tokenizer_from_ranks(ranks, pattern, specials, id_offset=special_count)


# ---------------------------------------------------------------- SentencePiece

SP_NORMAL, SP_UNKNOWN, SP_CONTROL, SP_USER_DEFINED, SP_BYTE = 1, 2, 3, 4, 6
SP_UNIGRAM, SP_BPE = 1, 2


def _sentencepiece_proto():
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError as exc:
        raise TokenizerError(
            "reading a SentencePiece vocabulary needs the 'sentencepiece' and "
            f"'protobuf' packages: {install_hint('tokenizers')}"
        ) from exc
    return sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]  # generated protobuf


def tokenizer_from_sentencepiece(path: Path) -> Tokenizer:
    """A SentencePiece `.model`, rebuilt by transformers from the model's own settings.

    Normaliser spec (dummy prefix, whitespace escaping, charsmap), byte fallback and merge order
    come from the proto, so it encodes like `SentencePieceProcessor.encode`. Unknown and control
    pieces (`<unk>`, `<s>`, `[INST]`) become special tokens, as in the models' tokenizer.json.
    """
    proto = _sentencepiece_proto()
    try:
        proto.ParseFromString(path.read_bytes())
    except Exception as exc:
        raise TokenizerError(f"{path}: not a SentencePiece model ({type(exc).__name__})") from exc
    if not proto.pieces:
        raise TokenizerError(f"{path}: not a SentencePiece model (no pieces)")
    return _tokenizer_from_spm_proto(proto, path)


def _tokenizer_from_spm_proto(proto, path: Path) -> Tokenizer:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers.convert_slow_tokenizer import SpmConverter

    model_type = proto.trainer_spec.model_type
    vocab: dict[str, int] | list[tuple[str, float]]
    if model_type == SP_BPE:
        vocab = {piece.piece: i for i, piece in enumerate(proto.pieces)}
    elif model_type == SP_UNIGRAM:
        vocab = [(piece.piece, piece.score) for piece in proto.pieces]
    else:
        raise TokenizerError(
            f"{path}: SentencePiece model type {model_type} is not supported (only BPE and unigram)"
        )
    tokenizer = SpmConverter.build_tokenizer_from_spm_proto(proto, vocab, legacy=True)
    tokenizer.add_tokens(
        [
            AddedToken(piece.piece, special=piece.type != SP_USER_DEFINED, normalized=False)
            for piece in proto.pieces
            if piece.type in (SP_UNKNOWN, SP_CONTROL, SP_USER_DEFINED)
        ]
    )
    return tokenizer


def _sentencepiece_from_gguf(field_value, path: Path) -> Tokenizer:
    """A llama.cpp 'llama' (SentencePiece BPE) vocabulary, as the SentencePiece model it came from.

    transformers' GGUF builder uses Metaspace, which drops one space of a leading run ("  x");
    rebuilding the SentencePiece proto keeps the converter that matches SentencePiece exactly.
    """
    proto = _sentencepiece_proto()
    tokens, scores = field_value("tokenizer.ggml.tokens"), field_value("tokenizer.ggml.scores")
    types = field_value("tokenizer.ggml.token_type") or [SP_NORMAL] * len(tokens)
    for token, score, kind in zip(tokens, scores or [0.0] * len(tokens), types):
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = token, float(score), int(kind)
    unk = field_value("tokenizer.ggml.unknown_token_id")
    unk = 0 if unk is None else int(unk)
    proto.trainer_spec.model_type = SP_BPE
    proto.trainer_spec.unk_id = unk
    proto.trainer_spec.unk_piece = tokens[unk]
    proto.trainer_spec.byte_fallback = any(int(kind) == SP_BYTE for kind in types)
    prefix = field_value("tokenizer.ggml.add_space_prefix")
    proto.normalizer_spec.add_dummy_prefix = True if prefix is None else bool(prefix)
    proto.normalizer_spec.escape_whitespaces = True
    proto.normalizer_spec.remove_extra_whitespaces = False
    return _tokenizer_from_spm_proto(proto, path)


# ---------------------------------------------------------------- GGUF


# Architectures whose 'llama' vocabulary is a plain SentencePiece BPE (Gemma and Phi-3 differ and
# go to transformers' own builders).
SENTENCEPIECE_ARCHITECTURES = {"llama", "mistral", "mixtral"}


def _gguf_pre_tokenizer(pre: str):
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    patterns = {"qwen2": QWEN2_PATTERN, "llama-bpe": LLAMA3_PATTERN, "llama3": LLAMA3_PATTERN}
    if pre == "smollm":
        # SmolLM2's tokenizer.json: individual digits, then GPT-2 byte-level splitting.
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            ]
        )
    if pre in ("default", "gpt2", "gpt-2"):
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in patterns:
        return pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(patterns[pre]), behavior="isolated"), byte_level]
        )
    return None


def tokenizer_from_gguf(path: Path) -> Tokenizer:
    """The tokenizer a GGUF's metadata describes (a vocab-only GGUF is enough).

    Byte-level BPE files whose llama.cpp pre-tokenizer name is known here are rebuilt directly:
    transformers' own GGUF conversion drops SmolLM2's digit pre-tokenizer. Llama/Mistral
    SentencePiece vocabularies go through the SentencePiece converter. Everything else
    (SentencePiece Llama/Mistral/Phi-3/Gemma, unigram T5, other BPE pre-tokenizers) goes to
    transformers' GGUF tokenizer builders, which pick the pipeline by architecture.
    """
    from gguf import GGUFReader

    from auditor.tokenizers.gguf_header import read_gguf_header

    read_gguf_header(path)  # counts and lengths checked against the file size before gguf allocates
    try:
        reader = GGUFReader(str(path))
    except Exception as exc:
        raise TokenizerError(f"{path}: not a readable GGUF file ({exc})") from exc

    def field_value(name: str):
        entry = reader.fields.get(name)
        return None if entry is None else entry.contents()

    model_type = field_value("tokenizer.ggml.model")
    if model_type is None:
        raise TokenizerError(f"{path}: this GGUF has no tokenizer metadata")
    pre = _gguf_pre_tokenizer(field_value("tokenizer.ggml.pre") or "default")
    if model_type == "gpt2" and pre is not None:
        return _byte_level_gguf(field_value, pre)
    architecture = str(field_value("general.architecture") or "")
    if model_type == "llama" and architecture in SENTENCEPIECE_ARCHITECTURES:
        return _sentencepiece_from_gguf(field_value, path)
    return _transformers_gguf(path)


def _byte_level_gguf(field_value, pre) -> Tokenizer:
    tokens = field_value("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field_value("tokenizer.ggml.merges")]
    types = field_value("tokenizer.ggml.token_type") or [1] * len(tokens)
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab, merges, fuse_unk=False))
    tokenizer.pre_tokenizer = pre
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    # token_type 3 = control (special), 4 = user-defined (added, not special)
    tokenizer.add_tokens(
        [
            AddedToken(tok, special=(kind == 3), normalized=False)
            for tok, kind in zip(tokens, types)
            if kind in (3, 4)
        ]
    )
    return tokenizer


def _transformers_gguf(path: Path) -> Tokenizer:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.integrations.gguf.gguf_tokenizer_mapping import (
            convert_gguf_tokenizer,
            get_gguf_tokenizer,
        )
    except ImportError as exc:
        raise TokenizerError(
            f"{path}: rebuilding this GGUF's tokenizer needs a newer transformers "
            f"(pip install -U transformers): {exc}"
        ) from exc
    try:
        architecture, tokenizer_dict, _ = get_gguf_tokenizer(str(path))
        tokenizer, _ = convert_gguf_tokenizer(architecture, tokenizer_dict)
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TokenizerError(
            f"{path}: transformers cannot rebuild this GGUF's tokenizer ({first}); "
            "pass the model's tokenizer.json instead"
        ) from exc
    return tokenizer
