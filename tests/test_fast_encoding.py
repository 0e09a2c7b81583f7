"""The tiktoken fast path (auditor.tokenizers.fast) gives the ids and offsets of `tokenizers`.

For every installed tiktoken-native built-in: every text a whole-corpus run asks the fast
encoder for (every engine profile, verified suggestions on), each scoring text group of every
site, and texts around the vocabulary's special tokens, encoded through the fast encoder and through the
`tokenizers` build, must agree exactly: ids for all, character offsets for all. Only ASCII texts
take the fast path; the test also checks that non-ASCII texts are left to `tokenizers`.
"""

from __future__ import annotations

import random

import pytest

from auditor.linter.engine import LintOptions, lint
from auditor.pcd.engines import ENGINES
from auditor.pcd.scoring import TEXT_GROUPS, field_head, site_texts, split_options
from auditor.tokenizers import fast
from auditor.tokenizers.builtins import BUILTINS
from auditor.tokenizers.loader import LoadedTokenizer
from support import CORPUS, NO_CORPUS, get_tokenizer

pytest.importorskip("tiktoken")
FAST_BUILTINS = [name for name, b in BUILTINS.items() if b.ranks is not None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS),
]


@pytest.fixture(scope="module")
def corpus_texts() -> list[str]:
    """Every text a whole-corpus run asks the fast encoder for (every engine, suggestions on,
    so the re-linted candidates are in),
    plus each scoring text group of every site."""
    base = get_tokenizer("qwen2.5")
    tokenizer = LoadedTokenizer(id="qwen2.5", source="", hf=base.hf, rank_source=base.rank_source)
    asked: list[str] = []
    real, real_many = fast.FastEncoder.encode_ascii, fast.FastEncoder.encode_ascii_many
    fast.FastEncoder.encode_ascii = lambda self, text: asked.append(text) or real(self, text)  # type: ignore[method-assign]
    fast.FastEncoder.encode_ascii_many = (  # type: ignore[method-assign]
        lambda self, texts: asked.extend(texts) or real_many(self, texts)
    )
    try:
        files = sorted(str(p) for p in CORPUS.rglob("*.json"))
        run = lint(files, [tokenizer], LintOptions(engines=list(ENGINES), jobs=1))  # counted here
    finally:
        fast.FastEncoder.encode_ascii, fast.FastEncoder.encode_ascii_many = real, real_many  # type: ignore[method-assign]
    assert len(asked) > 20_000, "the run must have taken the fast path"
    texts = list(asked)
    for result in run.files:
        for site in result.model.sites:
            more, spans = site_texts(site, TEXT_GROUPS)
            texts += more + spans
    return list(dict.fromkeys(texts))


def random_ascii(count: int = 5000) -> list[str]:
    """Seeded ASCII strings heavy in what split regexes treat apart: whitespace runs, CR/LF,
    digit runs, contractions, quotes and punctuation runs."""
    rng = random.Random(17)
    pieces = [
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\n\n ",
        "'s",
        "'T",
        "'ll",
        '"',
        '"',
        "\\",
        "123",
        "4567",
        "a",
        "Zz",
        "word",
        "_",
        "-",
        "--",
        ".",
        "...",
        "!?",
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "~",
        "\x00",
        "\x7f",
    ]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def test_fast_path_covers_the_tiktoken_native_builtins():
    assert {"qwen2.5", "cl100k", "o200k", "llama3"} <= set(FAST_BUILTINS)
    assert BUILTINS["smollm2"].ranks is None  # a GGUF vocabulary: tokenizers only


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_fast_ids_and_offsets_equal_tokenizers(name, corpus_texts):
    tokenizer = get_tokenizer(name)
    encoder = tokenizer.fast_encoder
    assert encoder is not None
    specials = [t for t in tokenizer.special_tokens if t.isascii()][:40]
    texts = (
        corpus_texts
        + [f'  "x": "a{s}b"' for s in specials]
        + [f"{s}{s} {s}" for s in specials[:5]]
        + random_ascii()
    )
    ascii_texts = [t for t in texts if t.isascii()]
    assert len(ascii_texts) > 20_000
    native = tokenizer.hf.encode_batch(ascii_texts, add_special_tokens=False)
    many = encoder.encode_ascii_many(ascii_texts)  # (a large batch: tiktoken's, built for it)
    assert encoder.built
    mismatched = [
        t
        for t, enc, ids in zip(ascii_texts, native, many)
        if ids != enc.ids
        or encoder.encode_ascii(t) != enc.ids
        or encoder.ascii_offsets(enc.ids) != enc.offsets
    ]
    assert not mismatched, f"{len(mismatched)} texts differ, e.g. {mismatched[:3]}"


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_python_bpe_equals_tiktoken(name, corpus_texts):
    """The small batches' encoder (fast.python_bpe) gives tiktoken's ids on every ASCII text of
    the corpus run and the seeded texts."""
    import regex

    encoder = get_tokenizer(name).fast_encoder
    assert encoder is not None
    tables = get_tokenizer(name).rank_tables
    assert tables is not None
    split = regex.compile(tables.pattern).findall
    specials = [t for t in tables.specials if t.isascii()][:20]
    near = [f"a{s[:-1]} {s[1:]}" for s in specials] + [f"<{s}" for s in specials]  # (none whole)
    texts = [t for t in corpus_texts + random_ascii() + near if t.isascii() and not encoder._holds_special(t)]
    assert len(texts) > 20_000
    native = encoder._encoding.encode_ordinary_batch(texts)
    wrong = [t for t, ids in zip(texts, native) if fast.python_bpe(split, encoder.ranks, t) != ids]
    assert not wrong, f"{len(wrong)} texts differ, e.g. {wrong[:3]}"


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_long_pieces_merge_as_tiktoken_does(name):
    """Issue 49: a piece longer than fast.LONG_PIECE bytes is merged through a heap (n log n:
    a 20,000-character option took 48 s pair by pair); the merges are tiktoken's, on seeded
    runs of few and many letters, digits and punctuation, long and short."""
    import regex

    encoder = get_tokenizer(name).fast_encoder
    tables = get_tokenizer(name).rank_tables
    assert encoder is not None and tables is not None
    split = regex.compile(tables.pattern).findall
    rng = random.Random(49)
    alphabets = ["a", "ab", "aab", "abc", "xyz01", "ACGT", "0123456789", "!!?", "lmnop", None]
    texts = []
    for _ in range(1500):
        size = rng.choice([fast.LONG_PIECE - 1, fast.LONG_PIECE + 1, 40, 100, 300, 1000, 3000])
        letters = rng.choice(alphabets) or "".join(map(chr, range(33, 127)))
        texts.append("".join(rng.choice(letters) for _ in range(size)))
    texts += ["a" * 30_000, "ab" * 15_000, "Mississippi" * 3000]
    native = encoder._encoding.encode_ordinary_batch(texts)
    wrong = [t[:40] for t, ids in zip(texts, native) if fast.python_bpe(split, encoder.ranks, t) != ids]
    assert not wrong, f"{len(wrong)} texts differ, e.g. {wrong[:3]}"
    assert any(len(piece) > fast.LONG_PIECE for piece in split(texts[-3]))  # (the heap was used)


def test_a_long_text_builds_tiktoken_where_a_short_batch_does_not():
    """Past fast.PYTHON_BPE_LONGEST characters a text goes to tiktoken's encoder (built for it):
    ten times faster per character on a long run; the ids are the same."""
    tables = get_tokenizer("qwen2.5").rank_tables
    encoder = fast.FastEncoder(tables)
    long = "b" * (fast.PYTHON_BPE_LONGEST + 1)
    short = encoder.encode_ascii_many(["a" * fast.PYTHON_BPE_LONGEST])
    assert not encoder.built
    assert (
        encoder.encode_ascii(long) == get_tokenizer("qwen2.5").hf.encode(long, add_special_tokens=False).ids
    )
    assert encoder.built and encoder.encode_ascii_many(["a" * fast.PYTHON_BPE_LONGEST]) == short


def test_small_batches_do_not_build_tiktoken():
    """Before tiktoken is built, a batch under PYTHON_BPE_MAX texts goes through python_bpe; a
    larger one, or one holding an added token's first character, builds it."""
    tables = get_tokenizer("qwen2.5").rank_tables
    encoder = fast.FastEncoder(tables)
    small = [f"option {i}" for i in range(10)]
    assert encoder.encode_ascii_many(small) and not encoder.built
    assert encoder.encode_ascii("MEDIUM") == [44, 50786] and not encoder.built
    assert encoder.encode_ascii("<5 years") == [27, 20, 1635] and not encoder.built  # (no special)
    assert encoder.encode_ascii("a <|endoftext|>") == [64, 220, 151643] and encoder.built
    again = fast.FastEncoder(tables)
    large = [f"option {i}" for i in range(fast.PYTHON_BPE_MAX)]
    assert again.encode_ascii_many(large) == encoder.encode_ascii_many(large) and again.built


def test_prefill_takes_the_fast_path_for_ascii_only(monkeypatch):
    base = get_tokenizer("qwen2.5")
    tokenizer = LoadedTokenizer(id="q", source="", hf=base.hf, rank_source=base.rank_source)
    calls = []
    real = fast.FastEncoder.encode_ascii_many
    monkeypatch.setattr(
        fast.FastEncoder, "encode_ascii_many", lambda self, texts: calls.extend(texts) or real(self, texts)
    )
    texts = [f"option_{i}" for i in range(1000)] + ["café", "naïve"]
    tokenizer.prefill(texts, texts)
    assert set(calls) == set(texts[:-2])
    for text in texts:
        enc = base.hf.encode(text, add_special_tokens=False)
        assert tokenizer.ids(text) == tuple(enc.ids) and tokenizer.offsets(text) == enc.offsets


# --------------------------------------------------------------------------- joins (fast.always_cut)


@pytest.fixture(scope="module")
def corpus_pairs() -> list[tuple[str, str]]:
    """(left, right) of every join a whole-corpus run may take: each string option's
    remainder and the closing quote, and its field's suffix and the remainder with the quote."""
    base = get_tokenizer("qwen2.5")
    files = sorted(str(p) for p in CORPUS.rglob("*.json"))
    pairs = []
    for result in lint(files, [base], LintOptions(jobs=1, suggestions=False)).files:
        for site in result.model.sites:
            _, _, _, prefix, rests = split_options(site)
            suffix = field_head(site.name, site.array_depth) + '"' + prefix
            pairs += [(r, '"') for r in rests] + [(suffix, r + '"') for r in rests]
    return pairs


def random_pairs() -> list[tuple[str, str]]:
    """Seeded pairs at both kinds of cut, around every piece the split regexes treat apart."""
    rng = random.Random(23)
    texts = random_ascii(4000)
    ends = "aZ09xQ7"
    # (lefts that end otherwise are there for a rule that would claim too much: they must not join)
    pairs = [
        (t + rng.choice([*ends, ".", " ", "'"]), rng.choice(['"', "'", "."]) + rng.choice(["", *texts]))
        for t in texts[:2000]
    ]
    pairs += [
        (
            t + rng.choice([' "', '"', '  "', '\n "', ' ."']),
            rng.choice([*ends, "."]) + rng.choice(["", *texts]),
        )
        for t in texts[2000:]
    ]
    # and pairs that must not join: a contraction, punctuation either side, no space, a space run
    pairs += [
        ("it", "'s\""),
        ("a.", '"'),
        ("a", '."'),
        (': "', ".x"),
        ('x"', "a"),
        ("x  ", '"a'),
        (': "', " a"),
        ("a\n", '"'),
        ("caf\u00e9", '"'),
        (': "', "\u00e9t\u00e9"),
        ("<|x", '"'),
    ]
    return pairs


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_joined_ids_equal_the_whole_texts(name, corpus_pairs):
    """Wherever `joins` says a text is its two parts' ids end to end, `tokenizers` agrees on the
    whole text; and the batch forms say what `joins` says."""
    tokenizer = get_tokenizer(name)
    pairs = corpus_pairs + random_pairs()
    joined = [(a, b) for a, b in pairs if tokenizer.joins(a, b)]
    assert len(joined) > 0.7 * len(pairs), "the rule must cover most corpus texts"
    wholes = tokenizer.hf.encode_batch([a + b for a, b in joined], add_special_tokens=False)
    lefts = tokenizer.hf.encode_batch([a for a, _ in joined], add_special_tokens=False)
    rights = tokenizer.hf.encode_batch([b for _, b in joined], add_special_tokens=False)
    wrong = [pair for pair, w, a, b in zip(joined, wholes, lefts, rights) if w.ids != a.ids + b.ids]
    assert not wrong, f"{len(wrong)} joins differ from the whole text, e.g. {wrong[:3]}"
    for a, b in random_pairs()[-11:]:
        assert not tokenizer.joins(a, b), (a, b)
    rests = [a for a, b in pairs if b == '"']
    assert tokenizer.joins_quote(rests) == [tokenizer.joins(r, '"') for r in rests]
    for suffix in (': "', '  "risk": "', '  "tags": ["', '  "x": "CAT_'):
        tails = [b for _, b in pairs[:3000]]
        assert tokenizer.joins_after(suffix, tails) == [tokenizer.joins(suffix, t) for t in tails]


def test_only_known_split_regexes_join():
    base = get_tokenizer("qwen2.5")
    assert base.joins("word", '"') and base.joins('  "f": "', "word")
    # the same vocabulary loaded from a file: its regex is not known to cut, so nothing joins
    plain = LoadedTokenizer(id="q", source="", hf=base.hf)
    assert not plain.joins("word", '"') and plain.joins_quote(["word"]) == [False]
    assert plain.joins_after('  "f": "', ["word"]) == [False]


def test_round_trips_many_is_round_trips_of_each(corpus_texts):
    """The batch form (PCD010, the prefetch's "normal" group) says what round_trips says of
    each text: on the corpus, and where only the texts together hold "<0x" or non-ASCII."""
    fast = get_tokenizer("qwen2.5")
    plain = LoadedTokenizer(id="q", source="", hf=fast.hf)  # (no rank source: nothing is sure)
    mixed = ["a<", "0x41", "caf\u00e9", "<0x41>", "plain", ""]
    for tokenizer in (fast, plain):
        for texts in (corpus_texts[:5000], mixed, mixed[:2], ["ok", "fine"], []):
            assert tokenizer.round_trips_many(texts) == [tokenizer.round_trips(t) for t in texts]


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_texts_said_to_round_trip_do(name, corpus_texts):
    """What PCD010 skips (LoadedTokenizer.round_trips) has nothing PCD010 would find: it decodes
    back to itself, with no unknown token, no token decoding alone to U+FFFD and no token named
    like a `<0xNN>` byte piece."""
    from auditor.rules.lossy_tokenization import BYTE_PIECE

    tokenizer = get_tokenizer(name)
    specials = [t for t in tokenizer.special_tokens if t.isascii()][:20]
    texts = corpus_texts + random_ascii() + [f"a{s}b" for s in specials] + ["<0x41>", "caf\u00e9"]
    said = [t for t in texts if tokenizer.round_trips(t)]
    assert (
        len(said) > 20_000 and not tokenizer.round_trips("<0x41>") and not tokenizer.round_trips("caf\u00e9")
    )
    hf = tokenizer.hf
    encoded = hf.encode_batch(said, add_special_tokens=False)
    decoded = hf.decode_batch([e.ids for e in encoded], skip_special_tokens=False)
    assert [t for t, d in zip(said, decoded) if t != d] == []
    used = sorted({t for e in encoded for t in e.ids})
    alone = hf.decode_batch([[t] for t in used], skip_special_tokens=False)
    assert [t for t, text in zip(used, alone) if "\ufffd" in text] == []
    assert [t for t in used if BYTE_PIECE.match(hf.id_to_token(t) or "")] == []
    assert tokenizer.unk_id is None or tokenizer.unk_id not in used


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_letter_slots_with_joins_equal_those_encoded(name):
    """letter_slots reads `suffix + letter + '"'` as joined ids where the regex cuts: the same
    slot table as encoding every probe, on every field name of the corpus."""
    from auditor.pcd.scoring import letter_slots
    from auditor.schema.cache import analyse_file

    joined = get_tokenizer(name)
    encoded = LoadedTokenizer(id=name, source="", hf=joined.hf)  # no split regex known: no joins
    names = sorted({s.name for p in CORPUS.rglob("*.json") for s in analyse_file(p, str(p)).sites})
    assert len(names) > 300
    merging = "AB.,!?')Z09"  # (letters a user may configure; some merge with the quote)
    for field in names + ['we"ird', "tab\there", "<|endoftext|>"]:
        assert letter_slots(joined, field, 5) == letter_slots(encoded, field, 5), field
        assert letter_slots(joined, field, 5, merging) == letter_slots(encoded, field, 5, merging), field
    assert any(
        "merges with the quote" in why
        for why in letter_slots(encoded, names[0], 5, merging).failures.values()
    )


# --------------------------------------------------------------------------- without `tokenizers`


@pytest.mark.parametrize("name", FAST_BUILTINS)
def test_rank_tables_are_what_the_tokenizers_build_holds(name):
    """A built-in's added tokens, unknown id, pieces, vocabulary entries and decodings, read
    from its rank tables, equal its `tokenizers` build's: on every special token, a seeded
    sample of ids across the vocabulary (its ends and gaps too) and seeded id sequences, many
    of which cut a character's bytes apart."""
    fast_side = get_tokenizer(name)
    built = LoadedTokenizer(id=name, source="", hf=fast_side.hf)  # (no rank source: all from `tokenizers`)
    hf = fast_side.hf
    assert fast_side.special_tokens == built.special_tokens
    assert fast_side.unk_id == built.unk_id
    rng = random.Random(31)
    top = fast_side.vocab_size
    ids = sorted(
        {
            *rng.sample(range(top), 20_000),
            *range(256),
            *range(top - 300, top + 3),
            *fast_side.special_tokens.values(),
        }
    )
    assert [fast_side.vocab_entry(t) for t in ids] == [hf.id_to_token(t) for t in ids]
    assert [fast_side.piece(t) for t in ids] == [built.piece(t) for t in ids]
    sequences = [[rng.randrange(top) for _ in range(rng.randint(1, 6))] for _ in range(3000)]
    sequences += [list(fast_side.special_tokens.values())[:3] + s for s in sequences[:50]]
    decoded = hf.decode_batch(sequences, skip_special_tokens=False)
    assert [fast_side.decode(s) for s in sequences] == decoded
    assert any("\ufffd" in text for text in decoded), "some sequences must cut a character"


def test_a_run_over_ascii_options_never_loads_the_tokenizers_build(tmp_path):
    """The default tokenizer lints ASCII options from its rank tables alone; a non-ASCII option
    loads the `tokenizers` build where it is asked for, and both give the ids it gives."""
    from auditor.tokenizers.loader import DeferredTokenizer, load_tokenizer

    files = sorted(str(p) for p in CORPUS.glob("pcd-presets*/*.json"))
    tokenizer = load_tokenizer("qwen2.5")
    assert isinstance(tokenizer.hf, DeferredTokenizer) and not tokenizer.hf.loaded
    run = lint(files, [tokenizer], LintOptions(jobs=1))
    assert run.findings and not tokenizer.hf.loaded
    reference = get_tokenizer("qwen2.5").hf
    for text in ("ELEVATED", '  "risk": "MEDIUM"', "caf\u00e9", "na\u0131ve \U0001f600"):
        assert tokenizer.ids(text) == tuple(reference.encode(text, add_special_tokens=False).ids)
    assert tokenizer.hf.loaded
    import pickle

    copied = pickle.loads(pickle.dumps(load_tokenizer("cl100k").hf))  # (the tokenizer it stands for)
    assert copied.encode("caf\u00e9").ids == get_tokenizer("cl100k").hf.encode("caf\u00e9").ids


def test_rank_tables_with_gaps():
    """Tables whose ranks leave gaps (cl100k leaves some below its specials): the tokens by rank
    hold b"" there, and the ranks made back from them are the source's."""
    ranks = {b"a": 0, b"b": 2, b"cd": 5}
    tokens = fast.tokens_by_rank(ranks)
    assert tokens == [b"a", b"", b"b", b"", b"", b"cd"]
    assert fast.tokens_by_rank({b"a": 0, b"b": 1}) == [b"a", b"b"]
    encoder = fast.FastEncoder(fast.RankTables(tokens, r"\S+", {"<s>": 7}))
    assert encoder.ranks == ranks
    assert encoder._tokens == [*tokens, b"", b"<s>"]
    assert encoder.decode([0, 5, 7, 1]) == "acd<s>"
