"""Exact fast encoding for tiktoken-native vocabularies (Qwen, cl100k, o200k, Llama 3).

These built-ins are byte-level BPEs rebuilt from tiktoken ranks (`convert.tokenizer_from_ranks`),
so `tiktoken` over the same ranks, split regex and special tokens gives the same ids, for a
sixth of the CPU `tokenizers` spends per text, and it is built from the cached ranks in a
fraction of the time `tokenizers` takes to load the converted tokenizer.json. So these
built-ins encode through it from the first text and load the `tokenizers` build only where a
text or a question needs it (LoadedTokenizer.hf). Only ASCII texts take this path: there NFC
(Qwen's normalizer) is the identity and each byte is one character, so character offsets are
the running byte lengths of the tokens. Everything else, and every vocabulary without a rank
source, stays with `tokenizers`. tests/test_fast_encoding.py compares ids, offsets, pieces and
decodings with the `tokenizers` build on every text a corpus run encodes; `tiktoken` missing
means no fast path.
"""

from __future__ import annotations

import heapq
import re
import string
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property, partial
from itertools import accumulate
from typing import TYPE_CHECKING, NamedTuple

from auditor.tokenizers import convert

if TYPE_CHECKING:
    import tiktoken


class RankTables(NamedTuple):
    """What a tiktoken-native built-in is made of (convert.tokenizer_from_ranks's inputs, the ranks
    as the list of their tokens)."""

    tokens: list[bytes]  # the mergeable tokens by rank (id); b"": no token has that rank
    pattern: str  # the split regex
    specials: dict[str, int]  # added tokens: text → id


def tokens_by_rank(ranks: dict[bytes, int]) -> list[bytes]:
    """The tokens of mergeable ranks (token bytes → rank) in rank order, b"" at a rank of none."""
    if list(ranks.values()) == list(range(len(ranks))):
        return list(ranks)  # (ranks 0, 1, 2 … in order, as rank files list them)
    tokens = [b""] * (max(ranks.values(), default=-1) + 1)
    for token, rank in ranks.items():
        tokens[rank] = token
    return tokens


RankSource = Callable[[], RankTables]

# The split regexes of the tiktoken-native built-ins. Each cuts a text into pieces and the BPE
# encodes every piece on its own, so a text the regex always cuts at one place encodes as its
# two sides' ids, end to end: the fast "join" (LoadedTokenizer.joins) reads them from the memo
# instead of encoding the whole text. tests/test_fast_encoding.py checks the rule below against
# `tokenizers` on every text a corpus run encodes and on seeded random texts, for each regex.
CUTTING_PATTERNS = frozenset(
    {
        convert.QWEN2_PATTERN,
        convert.QWEN3_5_PATTERN,
        convert.CL100K_PATTERN,
        convert.LLAMA3_PATTERN,
        convert.O200K_PATTERN,
    }
)
_ALNUM = frozenset(string.ascii_letters + string.digits)
_ALPHABET = convert.byte_alphabet()


def always_cut(left: str, right: str) -> bool:
    r"""Whether every regex of CUTTING_PATTERNS cuts ASCII `left + right` at len(left):

    - an ASCII letter or digit, then `"`: no letter or digit piece takes punctuation, and `"` is
      no contraction (`'s`, the only suffix a letter piece may take, starts with `'`);
    - ` "`, then an ASCII letter or digit: the space-and-punctuation piece starts at that space
      (no earlier piece takes a space followed by `"`) and takes no letter or digit.

    Whatever precedes the cut is cut as in `left` alone (the only look-ahead, `\s+(?!\S)`,
    reads one character, inside `left`), and `right` starts a piece of its own, as alone."""
    if not left or not right:
        return False
    if right[0] == '"':
        return left[-1] in _ALNUM
    return right[0] in _ALNUM and left.endswith(' "')


def cut_before_quotes(texts: Sequence[str]) -> list[bool]:
    """always_cut(text, '"') of each text, in one pass."""
    return [bool(t) and t[-1] in _ALNUM for t in texts]


def opens_piece(left: str) -> bool:
    """Whether always_cut(left, text) holds for every text that starts a piece (starts_piece)."""
    return left.endswith(' "')


def starts_piece(texts: Sequence[str]) -> list[bool]:
    """Per text: it starts with an ASCII letter or digit (always_cut after a left that
    opens_piece); always_cut(left, text) is opens_piece(left) and this."""
    return [bool(t) and t[0] in _ALNUM for t in texts]


def special_search(specials: Iterable[str]) -> Callable[[str], object]:
    """A search that matches where a text holds the first character of one of these added
    tokens (no match: the text holds none of them)."""
    starts = "".join(sorted({text[0] for text in specials if text}))
    return re.compile(f"[{re.escape(starts)}]" if starts else "(?!)").search


# Until tiktoken's encoder is built, a batch of fewer texts than this (with no added token) is
# encoded by `python_bpe` instead: building tiktoken's tables costs about as much as encoding
# 5,000-8,000 option texts in Python (o200k: 15,000; longer texts cost more), so a pre-commit run
# on a few files does not pay for it (benchmarks/encoder_build.py, docs/benchmarks.md);
# tests/test_fast_encoding.py compares both encoders' ids.
PYTHON_BPE_MAX = 8_000
# ... and a batch holding a text longer than this builds it too: its encoder is some ten times
# faster per character on a long run of letters (a 100,000-character option: 0.1 s against 1 s)
PYTHON_BPE_LONGEST = 20_000


class FastEncoder:
    """tiktoken over a built-in's ranks, with the tokenizer's added tokens as specials; a small
    batch of ASCII text before tiktoken is built goes through `python_bpe`."""

    def __init__(self, tables: RankTables):
        by_rank, pattern, specials = tables
        self._by_rank, self._pattern, self._specials = by_rank, pattern, specials
        # a text holding none of the specials' first characters holds no special token: the
        # plain encoder then gives the same ids without looking for them (a third faster)
        self._special = special_search(specials)

    @cached_property
    def ranks(self) -> dict[bytes, int]:
        """The mergeable ranks, token bytes → id: made where a text is encoded (a warm run reads
        every id from the encoding cache, and never makes it)."""
        ranks = dict(zip(self._by_rank, range(len(self._by_rank))))
        ranks.pop(b"", None)  # (the ranks of no token)
        return ranks

    @cached_property
    def _encoding(self) -> tiktoken.Encoding:
        """tiktoken over the tokens made of ASCII bytes only: merging the pieces of an ASCII text
        never forms any other, so its ids are those of all the ranks, and the build (tiktoken's
        tables of every token) takes about half the time."""
        import tiktoken

        ranks = {token: rank for token, rank in self.ranks.items() if token.isascii()}
        return tiktoken.Encoding(
            "pcdlint-fast-ascii", pat_str=self._pattern, mergeable_ranks=ranks, special_tokens=self._specials
        )

    @cached_property
    def _ascii_ordinary(self) -> Callable[[str], list[int]]:
        """For ASCII text, the native encoder itself: tiktoken's wrapper only adds a retry for
        lone surrogates (never ASCII), and a run calls it tens of thousands of times."""
        core = getattr(self._encoding, "_core_bpe", None)
        return getattr(core, "encode_ordinary", None) or self._encoding.encode_ordinary

    @property
    def built(self) -> bool:
        """Whether tiktoken's encoder is built."""
        return "_encoding" in self.__dict__

    @cached_property
    def _python(self) -> Callable[[str], list[int]] | None:
        """python_bpe over these tables (None: the `regex` package, tiktoken's own, is missing)."""
        try:
            import regex
        except ImportError:
            return None
        return partial(python_bpe, regex.compile(self._pattern).findall, self.ranks)

    def encode_ascii(self, text: str) -> list[int]:
        """The ids of an ASCII text (its added tokens' ids where it holds any)."""
        return self.encode_ascii_many([text])[0]

    def encode_ascii_many(self, texts: list[str]) -> list[list[int]]:
        """`encode_ascii` of each ASCII text; where none holds a special token's first character
        (one search of them all together) or, failing that, a special token, straight through the
        native encoder, or python_bpe for a small batch while that is not built."""
        if self._special("".join(texts)) and any(map(self._holds_special, texts)):
            encoding = self._encoding
            return [
                encoding.encode(t, allowed_special="all") if self._special(t) else self._ascii_ordinary(t)
                for t in texts
            ]
        if (
            not self.built
            and len(texts) < PYTHON_BPE_MAX
            and self._python is not None
            and max(map(len, texts), default=0) <= PYTHON_BPE_LONGEST
        ):
            return list(map(self._python, texts))
        return list(map(self._ascii_ordinary, texts))

    def _holds_special(self, text: str) -> bool:
        """Whether an added token's text occurs in `text`."""
        return bool(self._special(text)) and any(special in text for special in self._specials)

    @cached_property
    def _tokens(self) -> list[bytes]:
        """Token id → its bytes (a special token: its text in UTF-8; an id of no token: b"")."""
        specials = self._specials
        tokens = list(self._by_rank)
        top = max([len(tokens) - 1, *specials.values()]) + 1
        tokens += [b""] * (top - len(tokens))
        for text, token_id in specials.items():
            tokens[token_id] = text.encode("utf-8")
        return tokens

    @cached_property
    def _special_texts(self) -> dict[int, str]:
        return {token_id: text for text, token_id in self._specials.items()}

    def decode(self, ids: Iterable[int]) -> str:
        """The text of these ids as the byte-level decoder gives it: their bytes joined, then
        read as UTF-8 with each broken sequence one U+FFFD; an id of no token is left out."""
        tokens, top = self._tokens, len(self._tokens)
        return b"".join(tokens[t] for t in ids if 0 <= t < top).decode("utf-8", errors="replace")

    def vocab_entry(self, token_id: int) -> str | None:
        """The token's vocabulary entry: its bytes spelled in the byte-level alphabet (a special
        token: its text), None for an id of no token (`Tokenizer.id_to_token`)."""
        text = self._special_texts.get(token_id)
        if text is not None:
            return text
        raw = self._tokens[token_id] if 0 <= token_id < len(self._tokens) else b""
        return "".join(map(_ALPHABET.__getitem__, raw)) if raw else None

    def begin(self, ids: Sequence[int], index: int) -> int:
        """Where token `index` of an ASCII text begins (its characters before it)."""
        return sum(map(len, map(self._tokens.__getitem__, ids[:index])))

    def ascii_offsets(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """Character offsets of the tokens of an ASCII text (one byte, one character)."""
        ends = list(accumulate(map(len, map(self._tokens.__getitem__, ids))))
        return list(zip([0, *ends[:-1]], ends))


# A piece longer than this many bytes is merged by `_merge_long` (a heap: n log n), a shorter
# one pair by pair (n squared; as fast up to about 16 bytes, measured on random lowercase runs
# with qwen2.5's ranks: 75 µs against 53 µs at 16 bytes, 2.3 ms against 0.13 ms at 128)
LONG_PIECE = 16


def python_bpe(split: Callable[[str], list[str]], ranks: dict[bytes, int], text: str) -> list[int]:
    """tiktoken's ordinary encoding of an ASCII text, in Python: the split regex cuts it into
    pieces; a piece that is a token is that token, else its bytes are merged pair by pair, the
    pair whose merged bytes have the lowest rank first (the leftmost of equals), as tiktoken's
    `byte_pair_merge` does. A long piece (a run of letters with no space: a 30,000-character
    option) is merged the same way through a heap, so the cost grows as n log n, not n²."""
    ids: list[int] = []
    for piece in split(text):
        raw = piece.encode("ascii")
        rank = ranks.get(raw)
        if rank is not None:
            ids.append(rank)
            continue
        if len(raw) > LONG_PIECE:
            ids += map(ranks.__getitem__, _merge_long(raw, ranks))
            continue
        parts = [raw[k : k + 1] for k in range(len(raw))]
        while len(parts) > 1:
            best, at = None, -1
            for k in range(len(parts) - 1):
                merged = ranks.get(parts[k] + parts[k + 1])
                if merged is not None and (best is None or merged < best):
                    best, at = merged, k
            if best is None:
                break
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        ids += map(ranks.__getitem__, parts)
    return ids


def _merge_long(raw: bytes, ranks: dict[bytes, int]) -> list[bytes]:
    """The parts byte_pair_merge leaves of `raw`: the same merges in the same order (the lowest
    rank first, the leftmost of equals), found through a heap of the adjacent pairs.

    The parts are a linked list of spans (start → end, next, previous). Each pair that can
    merge is in the heap as (rank, start, end of the merged span); an entry is stale when its
    start was merged away or its neighbour's end moved, and is dropped when popped. A live entry
    is exactly the current pair's bytes, so the first live entry popped is the pair tiktoken
    merges next."""
    size = len(raw)
    end = list(range(1, size + 1))
    after = list(range(1, size + 1))  # the next part's start (size: none)
    before = list(range(-1, size - 1))
    alive = [True] * size
    heap = [(rank, k, k + 2) for k in range(size - 1) if (rank := ranks.get(raw[k : k + 2])) is not None]
    heapq.heapify(heap)
    while heap:
        _, start, stop = heapq.heappop(heap)
        right = after[start]
        if not alive[start] or right >= size or end[right] != stop:
            continue  # (stale)
        end[start], alive[right] = stop, False
        after[start] = after[right]
        if after[right] < size:
            before[after[right]] = start
        following, previous = after[start], before[start]
        if following < size and (rank := ranks.get(raw[start : end[following]])) is not None:
            heapq.heappush(heap, (rank, start, end[following]))
        if previous >= 0 and (rank := ranks.get(raw[previous:stop])) is not None:
            heapq.heappush(heap, (rank, previous, stop))
    parts, at = [], 0
    while at < size:
        parts.append(raw[at : end[at]])
        at = after[at]
    return parts


def build(tables: RankTables | None) -> FastEncoder | None:
    """The fast encoder of a built-in's tables, or None (none, or tiktoken not installed)."""
    if tables is None or not available():
        return None
    return FastEncoder(tables)


def available() -> bool:
    """Whether tiktoken is installed (found, not imported)."""
    from importlib.util import find_spec

    return find_spec("tiktoken") is not None
