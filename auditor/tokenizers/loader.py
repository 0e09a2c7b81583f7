"""Load tokenizers offline: built-in names, files, model directories, GGUF and the local HF cache.

Every source is turned into a `tokenizers.Tokenizer` once and cached as tokenizer.json under the
user cache directory, keyed by the sha256 of the source file, so later runs only pay for
`Tokenizer.from_file`. A tiktoken-native built-in does not even pay that until it must: it
encodes ASCII text from its cached rank tables (DeferredTokenizer, auditor.tokenizers.fast).
Converters live in `auditor.tokenizers.convert`, the built-in names in
`auditor.tokenizers.builtins`; heavy libraries are imported only on a cache miss.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

import tokenizers
from tokenizers import Tokenizer

from auditor.cachedir import cache_dir  # noqa: F401  (re-exported)
from auditor.errors import TokenizerError
from auditor.netpolicy import network_policy
from auditor.paths import resolve_path, shorten
from auditor.tokenizers import convert, fast
from auditor.tokenizers.builtins import (  # noqa: F401  (re-exported)
    ALIASES,
    BUILTINS,
    DEFAULT_TOKENIZER,
    builtin_available,
    canonical_name,
    describe_builtins,
    did_you_mean,
    expand_specs,
)
from auditor.tokenizers.cache import (  # noqa: F401
    CONVERTER_VERSION,
    cached_conversion,
    file_sha256,
    read_tokenizer_file,
)
from auditor.version import __version__

MEMO_LIMIT = 500_000  # encoded strings kept per tokenizer in one process
PREFILL_CHUNK = 8192  # texts per native batch: a native Encoding is far larger than its ids
SHARE_MIN_TEXTS = 50_000  # a memo this large keeps one int object per token id (_shared)
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def hub_id(spec: str) -> bool:
    """Whether SPEC is a `namespace/name` the Hugging Face hub accepts (huggingface_hub's
    validate_repo_id: each part 1-96 word characters, `.` or `-`, starting and ending with a
    letter, digit or `_`; no `--` or `..`; not ending `.git`), so the hub client never raises
    on it."""
    parts = spec.split("/")
    return (
        bool(HUB_ID.match(spec))
        and all(0 < len(part) <= 96 and part[0] not in ".-" and part[-1] not in ".-" for part in parts)
        and "--" not in spec
        and ".." not in spec
        and not spec.endswith(".git")
    )


class DeferredTokenizer:
    """Stands in for a built-in's `tokenizers.Tokenizer` until something asks it for anything,
    then loads it (converting and caching it the first time) and passes every use through.

    A tiktoken-native built-in encodes ASCII text through the fast encoder and knows its added
    tokens, pieces and decodings from its rank tables (auditor.tokenizers.fast), so a run over
    ASCII options never loads the `tokenizers` build, the slowest part of its start-up; a
    non-ASCII text, a model or a rule that reads the vocabulary loads it where it asks."""

    __slots__ = ("_load", "_tokenizer")

    def __init__(self, load: Callable[[], Tokenizer]) -> None:
        self._load: Callable[[], Tokenizer] | None = load
        self._tokenizer: Tokenizer | None = None

    @property
    def loaded(self) -> bool:
        return self._tokenizer is not None

    def __getattr__(self, name: str) -> Any:
        if name in DeferredTokenizer.__slots__:  # (not set yet: a copy made without __init__)
            raise AttributeError(name)
        return getattr(self.load(), name)

    def load(self) -> Tokenizer:
        """The tokenizer itself, loaded on the first call."""
        tokenizer = self._tokenizer
        if tokenizer is None:
            load, self._load = self._load, None
            assert load is not None
            tokenizer = self._tokenizer = load()
        return tokenizer

    def __reduce__(self) -> tuple[Callable[[Tokenizer], Tokenizer], tuple[Tokenizer]]:
        """Pickled (copied) as the tokenizer it stands for."""
        return _same, (self.load(),)


def _same(tokenizer: Tokenizer) -> Tokenizer:
    return tokenizer


@dataclass
class LoadedTokenizer:
    """A tokenizer ready to encode options; `id` is the name findings carry. A built-in with a
    rank source (fast.py) may hold a DeferredTokenizer as `hf`."""

    id: str
    source: str
    hf: Tokenizer
    _piece_cache: dict[int, str] = field(default_factory=dict, repr=False)
    _memo: dict[str, tuple[int, ...]] = field(default_factory=dict, repr=False)
    _offsets: dict[str, list[tuple[int, int]]] = field(default_factory=dict, repr=False)
    # tables higher layers derive once per tokenizer (a rule's piece table), by their own key
    derived: dict = field(default_factory=dict, repr=False)
    # tiktoken-native built-ins: where the exact fast encoder's ranks come from (fast.py)
    rank_source: fast.RankSource | None = field(default=None, repr=False)
    # a built-in's declared vocabulary size (tests/test_tokenizers_builtins.py checks it against
    # the loaded one): the JSON report then does not walk a 150k-entry vocabulary for it
    declared_vocab_size: int | None = field(default=None, repr=False)
    # a built-in's split regex (fast.CUTTING_PATTERNS: where `joins` knows the regex cuts)
    split_pattern: str | None = field(default=None, repr=False)
    # a tiktoken-native built-in: the digest of its rank tables (the encoding cache's key)
    tables_key: Callable[[], str] | None = field(default=None, repr=False)
    # while a file's texts are recorded (`recording`): every text asked for, in order
    _reads: list[str] | None = field(default=None, repr=False)

    @cached_property
    def encoding_key(self) -> str | None:
        """The key of this tokenizer's entries in the encoding cache (auditor.tokenizers.encodings):
        its rank tables' digest and split regex, the fast encoder's code, pcdlint's version, and
        the `tokenizers` version and converter version (the build that encodes text that is not
        ASCII); None where its encodings are not cached (no rank tables, or no fast encoder)."""
        if self.tables_key is None or self.fast_encoder is None:
            return None
        try:
            code = Path(fast.__file__).read_bytes()
        except OSError:  # (a package not installed as files: no cache rather than a stale one)
            return None
        # (a text that is not ASCII is encoded by the `tokenizers` build the converter makes)
        built = f"{tokenizers.__version__}|{CONVERTER_VERSION}"
        digest = hashlib.sha256(f"{__version__}|{self.tables_key()}|{self.split_pattern}|{built}".encode())
        digest.update(code)
        return digest.hexdigest()

    @contextmanager
    def recording(self, into: list[str] | None) -> Iterator[None]:
        """Append to `into` every text asked of this tokenizer meanwhile (ids, ids_many,
        offsets, prefill): what one file's lint reads (the encoding cache). None: nothing."""
        previous, self._reads = self._reads, into
        try:
            yield
        finally:
            self._reads = previous

    def asks(self, texts: Iterable[str]) -> None:
        """Record these texts as asked for (while `recording`) without encoding them yet: a batch
        gathered per file and encoded for all the files at once."""
        if self._reads is not None:
            self._reads += texts

    def memo_view(self) -> Mapping[str, tuple[int, ...]]:
        """The memoised ids, by text (read only)."""
        return MappingProxyType(self._memo)

    def offsets_view(self) -> Mapping[str, list[tuple[int, int]]]:
        """The offsets kept by text (read only): those of texts the fast encoder does not
        derive them for (see `offsets`)."""
        return MappingProxyType(self._offsets)

    def preload(
        self, encoded: dict[str, tuple[int, ...]], offsets: Mapping[str, list[tuple[int, int]]] | None = None
    ) -> None:
        """Memoise these texts' ids and keep these offsets, read back from the encoding cache
        (where the memo has room for them)."""
        if len(self._memo) + len(encoded) <= MEMO_LIMIT:
            self._memo.update(encoded)
            if offsets:
                self._offsets.update(offsets)

    @cached_property
    def rank_tables(self) -> fast.RankTables | None:
        """The built-in's ranks, split regex and added tokens (None: no rank source)."""
        return self.rank_source() if self.rank_source is not None else None

    @cached_property
    def fast_encoder(self) -> fast.FastEncoder | None:
        """The fast encoder over the rank tables (None: no rank source, or tiktoken not
        installed); tiktoken's own tables are built only for a large batch (fast.PYTHON_BPE_MAX)."""
        return fast.build(self.rank_tables)

    @cached_property
    def vocab_size(self) -> int:
        """Highest id + 1: the width of the model's logits (cl100k leaves gaps below its specials)."""
        if self.declared_vocab_size is not None:
            return self.declared_vocab_size
        return max(self.hf.get_vocab(with_added_tokens=True).values()) + 1

    @cached_property
    def special_tokens(self) -> dict[str, int]:
        """Text → id of every added or special token (an encoder maps such text to the id)."""
        if self.rank_tables is not None:
            return dict(self.rank_tables.specials)
        return {tok.content: idx for idx, tok in self.hf.get_added_tokens_decoder().items()}

    @cached_property
    def _cuts(self) -> bool:
        return self.split_pattern in fast.CUTTING_PATTERNS

    def round_trips(self, text: str) -> bool:
        """True when `text` surely decodes back to itself with no unknown token, no partial byte
        and no token named like a `<0xNN>` byte piece: ASCII text (without "<0x") under a
        byte-level BPE built from tiktoken ranks, whose tokens of ASCII text are whole ASCII
        bytes (tests/test_fast_encoding.py checks it on the corpus and seeded texts). False
        says nothing: the text must be checked."""
        return self.rank_source is not None and text.isascii() and "<0x" not in text

    def round_trips_many(self, texts: Sequence[str]) -> list[bool]:
        """round_trips of each text; one test of them all together where that decides (a run's
        options are mostly ASCII without "<0x": a 100,000-option field asked 200,000 times)."""
        if self.rank_source is None:
            return [False] * len(texts)
        together = "".join(texts)
        if together.isascii() and "<0x" not in together:  # (then no text holds either)
            return [True] * len(texts)
        return [t.isascii() and "<0x" not in t for t in texts]

    @cached_property
    def _special_search(self) -> Callable[[str], object]:
        """A match where a text holds an added token's first character (None: no added token)."""
        return fast.special_search(self.special_tokens)

    def joins(self, left: str, right: str) -> bool:
        """Whether `left + right` encodes as `left`'s ids then `right`'s, by construction: the
        split regex always cuts there (fast.always_cut), both are ASCII (the normaliser leaves
        them alone) and neither holds an added token's first character (added tokens are cut
        out before the regex runs)."""
        if not (self._cuts and fast.always_cut(left, right) and left.isascii() and right.isascii()):
            return False
        special = self._special_search
        return not special(left) and not special(right)

    def joins_quote(self, texts: Sequence[str]) -> list[bool]:
        """joins(text, '"') of each text, in one pass (a field's remainders)."""
        if not self._cuts or self._special_search('"'):
            return [False] * len(texts)
        return self._plain(texts, fast.cut_before_quotes(texts))

    def opens(self, left: str) -> bool:
        """Whether `left` ends where the split regex always cuts before a letter or digit and is
        ASCII without an added token's first character: then joins(left, text) is
        `opening_joins([text])`, whatever the left; else it never holds."""
        return self._cuts and fast.opens_piece(left) and left.isascii() and not self._special_search(left)

    def opening_joins(self, texts: Sequence[str]) -> list[bool]:
        """joins(left, text) of each text, for any `left` that `opens`."""
        return self._plain(texts, fast.starts_piece(texts))

    def joins_after(self, left: str, texts: Sequence[str]) -> list[bool]:
        """joins(left, text) of each text not starting with `"`, in one pass (a field's suffix
        and its remainders)."""
        return self.opening_joins(texts) if self.opens(left) else [False] * len(texts)

    def _plain(self, texts: Sequence[str], cuts: list[bool]) -> list[bool]:
        """Per text: its cut, where the text is ASCII without an added token's first character;
        one test of all the texts together where none has either (most runs)."""
        special = self._special_search
        together = "".join(texts)
        if together.isascii() and not special(together):
            return cuts
        return [cut and t.isascii() and not special(t) for cut, t in zip(cuts, texts)]

    @cached_property
    def unk_id(self) -> int | None:
        if self.rank_source is not None:  # a byte-level BPE from ranks: every byte is a token
            return None
        model = self.hf.model
        unk = getattr(model, "unk_token", None)
        return self.hf.token_to_id(unk) if unk else None

    def encode(self, text: str) -> list[int]:
        return list(self.ids(text))

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """Encode without special-token insertion; memoised, one native batch for the misses
        (copies: callers may keep or change them; the lint path reads `ids_many`)."""
        return [list(ids) for ids in self.ids_many(texts)]

    # -- the bulk path (issue 17): one native batch per run, then memo reads without copies

    def prefill(self, texts: Iterable[str], with_offsets: Iterable[str] = ()) -> None:
        """Encode every distinct text not memoised yet in one native batch (in chunks);
        `with_offsets` are texts whose character offsets are kept too (see `offsets`)."""
        memo, spans = self._memo, self._offsets
        want = set(with_offsets)
        derived = self._fast_ready  # ASCII offsets then follow from the ids (see `offsets`)
        distinct = dict.fromkeys(texts)
        if self._reads is not None:
            self._reads += distinct
        missing = [
            t
            for t in distinct
            if t not in memo or (t in want and t not in spans and not (derived and t.isascii()))
        ]
        if not missing:
            return
        if len(memo) + len(missing) > MEMO_LIMIT:
            memo.clear()
            spans.clear()
        if derived:  # (ASCII texts through the fast encoder; the rest through `tokenizers`)
            shared = self._sharing(len(missing))
            plain = [t for t in missing if t.isascii()]
            memo.update(zip(plain, map(shared, self.fast_encoder.encode_ascii_many(plain))))  # type: ignore[union-attr]
            if len(plain) == len(missing):
                return
            missing = [t for t in missing if not t.isascii()]
        encode_batch, shared = self.hf.encode_batch, self._sharing(len(missing))
        for begin in range(0, len(missing), PREFILL_CHUNK):
            chunk = missing[begin : begin + PREFILL_CHUNK]
            for text, enc in zip(chunk, encode_batch(chunk, add_special_tokens=False)):
                memo[text] = shared(enc.ids)
                if text in want:
                    spans[text] = enc.offsets

    def warm(self) -> None:
        """Build the lazy parts every encoding reads (special tokens, unknown id, the fast
        encoder's tables; the id objects and tiktoken's own only for a large run: `expect`), so
        processes forked afterwards share one copy. The vocabulary size is left: only a report
        reads it."""
        self.special_tokens, self.unk_id, self._special_search, self._cuts  # noqa: B018
        self.fast_encoder  # noqa: B018

    def expect(self, texts: int) -> None:
        """A run is about to encode about `texts` texts: from fast.PYTHON_BPE_MAX on, the id
        objects and tiktoken's encoder are built now (before a pool forks, so that its workers
        share one copy)."""
        if texts >= fast.PYTHON_BPE_MAX:
            self._id_objects  # noqa: B018
            if self._fast_ready:
                self.fast_encoder._encoding  # type: ignore[union-attr]  # noqa: B018

    @cached_property
    def _id_objects(self) -> list[int]:
        size = self.declared_vocab_size
        return list(range(size if size is not None else self.hf.get_vocab_size(with_added_tokens=True)))

    def _sharing(self, more: int) -> Callable[[list[int]], tuple[int, ...]]:
        """How to keep the ids of `more` new texts: `_shared` once the memo holds (or will hold)
        SHARE_MIN_TEXTS texts or the id objects exist (a pool's parent warmed them), else a
        plain tuple: a small run (a one-file check) does not build a list of every id for it."""
        if "_id_objects" in self.__dict__ or len(self._memo) + more >= SHARE_MIN_TEXTS:
            return self._shared
        return tuple

    def _shared(self, ids: list[int]) -> tuple[int, ...]:
        """`ids` as a tuple of one int object per token id: the memo of a 100,000-option enum
        holds about 1.5M ids, each otherwise its own 32-byte int, and SiteTokens and the engine
        plans keep these very tuples (`tuple(t)` is `t`) instead of copies."""
        try:
            return tuple(map(self._id_objects.__getitem__, ids))
        except IndexError:  # an id past the reported vocabulary size (gaps below specials)
            return tuple(ids)

    def ids(self, text: str) -> tuple[int, ...]:
        """The memoised ids of `text` (encoded on a miss). Shared: callers must not change it."""
        if self._reads is not None:
            self._reads.append(text)
        ids = self._memo.get(text)
        if ids is None:
            if self._fast_ready and text.isascii():
                ids = self._memo[text] = self._sharing(1)(self.fast_encoder.encode_ascii(text))  # type: ignore[union-attr]
            else:
                ids = self._memo[text] = self._sharing(1)(self.hf.encode(text, add_special_tokens=False).ids)
        return ids

    def ids_many(self, texts: list[str]) -> list[tuple[int, ...]]:
        """`ids` of each text (shared lists, not copies); one native batch for any misses."""
        if self._reads is not None:
            self._reads += texts
        out = list(map(self._memo.get, texts))
        if not all(out) and None in out:  # (all(): one truth test each; only () is false besides None)
            self.prefill(texts)
            out = [self.ids(t) for t in texts]
        return out  # type: ignore[return-value]

    @property
    def _fast_ready(self) -> bool:
        """Whether ASCII texts encode through the fast encoder (built here on first use)."""
        return self.fast_encoder is not None

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of each token of `text` (kept when prefilled `with_offsets`; for
        ASCII text with the fast encoder built, summed from the tokens' byte lengths)."""
        spans = self._offsets.get(text)
        if self._reads is not None:
            self._reads.append(text)
        if spans is None:
            if self._fast_ready and text.isascii():
                return self.fast_encoder.ascii_offsets(self.ids(text))  # type: ignore[union-attr]
            enc = self.hf.encode(text, add_special_tokens=False)
            self._memo.setdefault(text, self._sharing(1)(enc.ids))
            spans = self._offsets[text] = enc.offsets
        return spans

    def token_begins_at(self, text: str, index: int, char: int) -> bool:
        """Whether token `index` is the first token of `text` that begins at character `char`."""
        ids = self.ids(text)
        if index >= len(ids):
            return False
        if self._fast_ready and text.isascii():
            # one byte per character and every token at least one byte: beginnings strictly
            # increase, so only token `index` can begin there
            return self.fast_encoder.begin(ids, index) == char  # type: ignore[union-attr]
        return next((k for k, (begin, _) in enumerate(self.offsets(text)) if begin == char), None) == index

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """`piece` of each token id."""
        cache = self._piece_cache
        try:
            return [cache[t] for t in ids]
        except KeyError:
            return [self.piece(t) for t in ids]

    def forget(self) -> None:
        """Drop every memoised encoding (benchmarks: no help from an earlier run)."""
        self._memo.clear()
        self._offsets.clear()

    def decode(self, ids: Sequence[int]) -> str:
        if self._fast_ready:
            return self.fast_encoder.decode(ids)  # type: ignore[union-attr]
        return self.hf.decode(ids, skip_special_tokens=False)

    def decode_batch(self, ids_lists: Sequence[Sequence[int]]) -> list[str]:
        """`decode` of each list (through the rank tables where the fast encoder is built: the
        `tokenizers` build is then not loaded for it)."""
        if not ids_lists:
            return []
        if self._fast_ready:
            return list(map(self.fast_encoder.decode, ids_lists))  # type: ignore[union-attr]
        return self.hf.decode_batch([list(ids) for ids in ids_lists], skip_special_tokens=False)

    def vocab_entry(self, token_id: int) -> str | None:
        """The token's entry in the vocabulary (`Tokenizer.id_to_token`), None for no token."""
        if self._fast_ready:
            return self.fast_encoder.vocab_entry(token_id)  # type: ignore[union-attr]
        return self.hf.id_to_token(token_id)

    def piece(self, token_id: int) -> str:
        """The text one token stands for; the raw vocab entry when it is a partial UTF-8 byte or
        decodes to nothing (SentencePiece's word-start marker alone)."""
        text = self._piece_cache.get(token_id)
        if text is None:
            text = self.decode([token_id])
            if "\ufffd" in text or not text:  # a partial byte, or SentencePiece's lone "▁"
                text = self.vocab_entry(token_id) or f"<{token_id}>"
            self._piece_cache[token_id] = text
        return text

    def describe(self) -> dict:
        return {"id": self.id, "source": self.source, "vocab_size": self.vocab_size}


# --------------------------------------------------------------------------- resolution

# Suffixes that make a spec a file path (so a missing one says "no such file").
PATH_SUFFIXES = (".json", ".gguf", ".tiktoken", ".model")


def _load_path(path: Path, tiktoken_pattern: str | None = None) -> Tokenizer:
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if candidate.is_file():
            return _load_json(candidate)
        for pattern in ("tekken.json", "*.gguf", "tokenizer.model", "*.tiktoken"):
            found = sorted(path.glob(pattern))
            if found:
                return _load_path(found[0], tiktoken_pattern)
        raise TokenizerError(
            f"{path}: no tokenizer.json, tekken.json, .gguf, tokenizer.model or .tiktoken in this directory"
        )
    if not path.is_file():
        raise TokenizerError(f"{path}: not a regular file")
    suffix = path.suffix.lower()
    if suffix == ".gguf":
        return cached_conversion(path, "gguf", lambda: convert.tokenizer_from_gguf(path))
    if suffix == ".tiktoken":
        choice = tiktoken_pattern or convert.default_tiktoken_pattern(_line_count(path))
        regex = convert.resolve_pattern(choice)
        convert.probe_patterns([regex], f"--tiktoken-pattern for {path}")
        return cached_conversion(
            path, "tiktoken", lambda: convert.tokenizer_from_tiktoken(path, regex), variant=regex
        )
    if suffix == ".model" or ".model." in path.name:
        return cached_conversion(path, "spm", lambda: convert.tokenizer_from_sentencepiece(path))
    if suffix == ".json" and convert.is_tekken_file(path):
        return cached_conversion(path, "tekken", lambda: convert.tokenizer_from_tekken(path))
    return _load_json(path)


def _line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def _load_json(path: Path) -> Tokenizer:
    try:
        convert.probe_patterns(convert.json_regexes(path), str(path))
    except OSError as exc:
        raise TokenizerError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return read_tokenizer_file(path)
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TokenizerError(f"{path}: not a tokenizer.json ({first})") from exc


def _builtin_names() -> str:
    return ", ".join(BUILTINS)


def _load_hub(repo_id: str, allow_download: bool) -> tuple[Tokenizer, str]:
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(repo_id, "tokenizer.json")
    except ValueError as exc:  # HFValidationError: a name the hub client refuses
        raise TokenizerError(f"tokenizer {shorten(repo_id)!r}: not a hub id ({shorten(str(exc))})") from None
    if isinstance(cached, str):
        return _load_json(Path(cached)), f"hf-cache:{repo_id}"
    if not allow_download:
        raise TokenizerError(
            f"tokenizer '{repo_id}' is not in the local Hugging Face cache; "
            "rerun with --allow-download, or pass a tokenizer.json path, "
            f"or use a built-in name ({_builtin_names()})"
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


def _looks_like_path(spec: str) -> bool:
    return (
        spec.startswith((".", "/", "~"))
        or bool({".", ".."} & set(spec.split("/")))  # (`a/..`: a folder, never a hub id)
        or "\\" in spec
        or spec.lower().endswith(PATH_SUFFIXES)
        or ".model." in spec.lower()
    )


def load_tokenizer(
    spec: str, allow_download: bool = False, tiktoken_pattern: str | None = None
) -> LoadedTokenizer:
    """Resolve SPEC: a built-in name, a path, or a Hugging Face hub id (cache only by default).

    TIKTOKEN_PATTERN (cl100k, o200k, qwen2 or a regex) applies to `.tiktoken` paths; without it
    the split regex is chosen from the file's size (see `convert.default_tiktoken_pattern`).
    """
    network_policy(allow_download)  # no request leaves without --allow-download
    name = canonical_name(spec)
    if name is not None:
        builtin = BUILTINS[name]
        ranks = builtin.rank_source()
        if ranks is not None and fast.available():  # (the `tokenizers` build where first asked)
            tok, source = cast(Tokenizer, DeferredTokenizer(lambda: builtin.load()[0])), builtin.source()
        else:
            tok, source = builtin.load()
        return LoadedTokenizer(
            id=name,
            source=source,
            hf=tok,
            rank_source=ranks,
            declared_vocab_size=builtin.vocab_size,
            split_pattern=builtin.pattern,
            tables_key=builtin.tables_key if ranks is not None else None,
        )
    path = resolve_path(spec, "tokenizer")  # ~ expanded; a name too long is one line
    if path.exists():
        return LoadedTokenizer(id=path.name or spec, source=str(path), hf=_load_path(path, tiktoken_pattern))
    if _looks_like_path(spec):
        raise TokenizerError(f"tokenizer '{spec}': no such file or directory")
    if hub_id(spec):
        tok, source = _load_hub(spec, allow_download)
        return LoadedTokenizer(id=spec, source=source, hf=tok)
    raise TokenizerError(
        f"unknown tokenizer '{spec}'{did_you_mean(spec)}: use a built-in name "
        f"({_builtin_names()}, or 'all'), a tokenizer.json, model directory, .gguf, .model, "
        "tekken .json or .tiktoken path, or a Hugging Face hub id"
    )


def load_tokenizers(
    specs: list[str], allow_download: bool = False, tiktoken_pattern: str | None = None
) -> list[LoadedTokenizer]:
    """Load each distinct spec once, `all` expanded to every installed built-in; ids are unique,
    and a clash (two files named tokenizer.json) is resolved by naming each by its given path."""
    specs = expand_specs(specs)
    loaded = [load_tokenizer(spec, allow_download, tiktoken_pattern) for spec in specs]
    ids = [t.id for t in loaded]
    for spec, tokenizer in zip(specs, loaded):
        if ids.count(tokenizer.id) > 1:
            tokenizer.id = spec
    return loaded
