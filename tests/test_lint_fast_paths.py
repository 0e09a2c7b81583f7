"""The lint path's shortcuts (issue 17) say exactly what their plain definitions say.

- `scoring.json_text` writes a literal without `json.dumps` for the common types: the same
  text as `json.dumps(value, ensure_ascii=False)` (string content without its quotes) for any
  JSON value, big integers, non-finite floats and nested values included.
- PCD002's `disagreement_risks` finds the first option another one's scored piece begins by
  bisecting the sorted remainders (not by a scan of every pair): the same sentence as the
  pairwise definition, on every corpus field and on generated fields.
- `EngineProfile.losses` builds its Loss tuples without their Python constructor: the same
  values, fields and methods as a Loss built by name.
- PCD007 normalises a field whose strings are all ASCII without whitespace in one pass
  (`_plain_normals`): the same keys as `_normalise` of each, on generated strings (control
  characters, the separator it joins with, non-ASCII and every kind of space among them) and
  on every corpus field.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.pcd.engines import get_engine
from auditor.pcd.engines.base import OPTION_CAP, Loss
from auditor.pcd.scoring import SiteTokens, json_text
from auditor.rules.confusable_options import _normalise, _plain_normals
from auditor.rules.multi_token_option import disagreement_risks
from auditor.schema.cache import analyse_file
from support import NO_CORPUS, corpus_files, get_tokenizer

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63, max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def _reference_json_text(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text[1:-1] if isinstance(value, str) else text


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_json_text_writes_what_json_dumps_writes(value):
    assert json_text(value) == _reference_json_text(value)


@pytest.mark.parametrize(
    "value",
    [
        True,
        False,
        None,
        0,
        -1,
        1,
        2**64,
        1.0,
        -0.0,
        1e-7,
        float("nan"),
        float("inf"),
        float("-inf"),
        'a"b',
        "\x00",
        [True, 1],
        {"k": None},
    ],
)
def test_json_text_of_literals_that_share_a_hash(value):
    """True == 1 and False == 0: a lookup table keyed by value would write `true` for 1."""
    assert json_text(value) == _reference_json_text(value)


def _pairwise_risks(tokens: SiteTokens) -> list[str]:
    """PCD002's definition, one pair at a time (what disagreement_risks computed before)."""
    risks = []
    if tokens.collisions:
        risks.append("the field also has a first-token collision")
    strings = [o for o in tokens.options if o.is_string and o.ids]
    for option in strings:
        scored = tokens.tokenizer.piece(option.scored_id)
        # (an option scored by the same token is in a collision bucket: PCD001's, issue 32)
        other = next(
            (
                o
                for o in strings
                if o.index != option.index
                and o.remainder != scored
                and o.scored_id != option.scored_id
                and o.remainder.startswith(scored)
            ),
            None,
        )
        if other is not None:
            risks.append(f"{option.text!r} is scored by {scored!r}, which also begins {other.text!r}")
            break
    return risks


def _field(options: list) -> SimpleNamespace:
    return SimpleNamespace(name="label", options=options)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="abAB_ 12é-", min_size=0, max_size=6), min_size=1, max_size=12))
def test_disagreement_risks_equal_the_pairwise_definition(options):
    tokenizer = get_tokenizer("qwen2.5")
    tokens = SiteTokens(_field(options), tokenizer)
    assert disagreement_risks(tokens) == _pairwise_risks(tokens)


def _corpus_fields(tokenizer_name: str):
    """(file, site, its SiteTokens) of every field of the shared corpus (skips without it)."""
    files = corpus_files()
    if not files:
        pytest.skip(NO_CORPUS)
    tokenizer = get_tokenizer(tokenizer_name)
    for path in files:
        for site in analyse_file(path, str(path)).sites:
            yield path, site, SiteTokens(site, tokenizer)


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer_name", ["qwen2.5", "smollm2"])
def test_disagreement_risks_equal_the_pairwise_definition_on_the_corpus(tokenizer_name):
    found = 0
    for path, site, tokens in _corpus_fields(tokenizer_name):
        risks = disagreement_risks(tokens)
        assert risks == _pairwise_risks(tokens), (path.name, site.name)
        found += any("also begins" in r for r in risks)
    assert found > 20  # the sentence that depends on the bisection was compared, many times


def test_losses_are_loss_tuples_with_their_fields():
    tokenizer = get_tokenizer("qwen2.5")
    refused = SiteTokens(_field([f"v{i}" for i in range(300)]), tokenizer)  # past RLCD's 255
    losses = get_engine("gather").losses(refused)
    assert len(losses) == 300
    first = losses[0]
    assert type(first) is Loss
    assert first == Loss(0, "v0", None, None, OPTION_CAP, first.detail)
    assert (first.index, first.option, first.returned, first.reason) == (0, "v0", None, OPTION_CAP)
    assert first.to_dict()["returned_index"] is None
    tied = SiteTokens(_field(["CAT_1", "CAT_2", "DOG"]), tokenizer)  # prefix "" : C, C, D
    (loss,) = get_engine("gather").losses(tied)
    assert loss == Loss(1, "CAT_2", 0, "CAT_1", "tie", loss.detail)
    assert loss.phrase().startswith("'CAT_2' is never returned (shares first token")


@pytest.mark.parametrize("tokenizer_name", ["qwen2.5", "smollm2"])
@pytest.mark.parametrize(
    "suffix", ['  "risk": "', '  "<risk>": "', '  "été": "', '  "risk": ', '  "a": "x', '  "tags": ["']
)
def test_letters_in_context_are_those_plain_cuts_does_not_join(tokenizer_name, suffix):
    from auditor.pcd.scoring import SLOT_LETTERS, _in_context, plain_cuts

    tokenizer = get_tokenizer(tokenizer_name)
    for letters in (list(SLOT_LETTERS), list("AB<é1"), list("Q")):
        expected = [c for c, cut in zip(letters, plain_cuts(tokenizer, suffix, letters)[1]) if not cut]
        assert _in_context(tokenizer, suffix, letters) == expected, letters
        assert _in_context(tokenizer, suffix, letters) == expected  # (read back from the tokenizer's table)


@pytest.mark.parametrize("texts", [["low", "high"], ["low", "<high"], ["low", "hé"], ["a<", "b"], ["", "x"]])
def test_joins_of_a_batch_are_the_joins_of_each_text(texts):
    tokenizer = get_tokenizer("qwen2.5")
    suffix = '  "level": "'
    assert tokenizer.joins_quote(texts) == [tokenizer.joins(t, '"') for t in texts]
    assert tokenizer.joins_after(suffix, texts) == [tokenizer.joins(suffix, t) for t in texts]
    assert any(tokenizer.joins_quote(texts)) or texts == ["", "x"]  # a batch with a plain text in it


def _reference_slots(tokenizer, name: str, needed: int, alphabet: str):
    """letter_slots by its definition: every letter encoded after the suffix, none skipped."""
    from auditor.pcd.scoring import _letter_failures_alone, field_head

    failures = dict(_letter_failures_alone(tokenizer, alphabet))
    suffix = field_head(name) + '"'
    base, close = list(tokenizer.hf.encode(suffix, add_special_tokens=False).ids), tokenizer.ids('"')
    for letter in alphabet:
        if letter in failures:
            continue
        ids = tokenizer.hf.encode(suffix + letter + '"', add_special_tokens=False).ids
        if tuple(ids) != tuple(base) + tuple(tokenizer.ids(letter)) + tuple(close):
            failures[letter] = (
                f"merges with the quote after the suffix: {[tokenizer.piece(t) for t in ids[len(base) - 1 :]]}"
            )
    letters = tuple(c for c in alphabet if c not in failures)
    in_order = all(c not in failures for c in alphabet[:needed]) and needed <= len(alphabet)
    return (letters if in_order else (), failures, in_order, needed)


@pytest.mark.parametrize("tokenizer_name", ["qwen2.5", "smollm2"])
def test_letter_slots_shared_between_field_names_are_each_names_own(tokenizer_name):
    from auditor.pcd.scoring import SLOT_LETTERS, letter_slots

    tokenizer = get_tokenizer(tokenizer_name)
    for alphabet in (SLOT_LETTERS, "ABCD<|é"):
        for needed in (2, 5, 27):
            for name in ("risk", "level", "<tag>", "été", "a b", 'q"'):
                table = letter_slots(tokenizer, name, needed, alphabet)
                expected = _reference_slots(tokenizer, name, needed, alphabet)
                assert (table.letters, table.failures, table.viable, table.needed) == expected, (
                    name,
                    alphabet,
                )
    if tokenizer_name == "qwen2.5":  # the suffix opens and A-Z are plain: one table for both names
        assert letter_slots(tokenizer, "risk", 4) is letter_slots(tokenizer, "level", 4)


@pytest.mark.parametrize(
    "texts", [["low", "HIGH_RISK", " spaced", ""], ["a", "<|im_start|>x", "b<"], ["<think>", "no"]]
)
def test_fast_encoder_batches_encode_as_each_text_alone(texts):
    tokenizer = get_tokenizer("qwen2.5")
    encoder = tokenizer.fast_encoder
    if encoder is None:
        pytest.skip("tiktoken not installed")
    assert encoder.encode_ascii_many(texts) == [encoder.encode_ascii(t) for t in texts]
    assert encoder.encode_ascii_many(texts) == [
        tokenizer.hf.encode(t, add_special_tokens=False).ids for t in texts
    ]


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer_name", ["qwen2.5", "smollm2"])
def test_closed_sequences_are_each_options_closed_remainder_ids_on_the_corpus(tokenizer_name):
    from auditor.pcd.scoring import closed_remainder_ids

    joined = 0
    for path, site, tokens in _corpus_fields(tokenizer_name):
        expected = [
            closed_remainder_ids(tokens.tokenizer, o.remainder, tokens.closes[o.index], o.ids)
            if o.is_string
            else None
            for o in tokens.options
        ]
        assert tokens.closed_sequences == expected, (path.name, site.name)
        joined += sum(tokens.closes)
    assert joined > 1000 or tokenizer_name == "smollm2"  # the joined branch was compared, many times


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer_name", ["qwen2.5", "smollm2"])
def test_field_lengths_are_the_field_texts_encoded_on_the_corpus(tokenizer_name):
    """The cost model's token counts, joined from the depth-0 suffix where the texts join
    (array items included), equal each field text encoded whole by `tokenizers`."""
    from auditor.pcd.scoring import field_texts

    items = 0
    for path, site, tokens in _corpus_fields(tokenizer_name):
        expected = [
            len(tokens.tokenizer.hf.encode(t, add_special_tokens=False).ids) for t in field_texts(site)
        ]
        assert tokens.field_lengths == expected, (path.name, site.name)
        items += len(site.options) if site.array_depth else 0
    assert items > 1000  # array items (scored after `[`, written as at depth 0) were compared


@pytest.mark.parametrize(
    ("suffix", "schema"),
    [
        (".json", '{"type": "object", "properties": {"rate": {"enum": [0.00001, 0.00002, 0.5]}}}'),
        (".yaml", "type: object\nproperties:\n  rate:\n    enum: [.nan, .inf, 1.5e-7, 1.5e-8]\n"),
        (".json", '{"type": "object", "properties": {"level": {"enum": ["LOW_RISK", "LOW_RATE", "HIGH"]}}}'),
    ],
)
def test_the_json_report_of_findings_checked_where_made_is_json_dumps(tmp_path, suffix, schema):
    """A finding's data is checked for floats orjson writes apart where the finding is made
    (Finding.plain_floats); the report passes over what was checked and is still exactly
    json.dumps(strict_json(document), indent=2): floats written apart are caught, not skipped."""
    from auditor.linter.engine import LintOptions, lint
    from auditor.reporting import json_format
    from auditor.reporting.escape import strict_json

    path = tmp_path / f"schema{suffix}"
    path.write_text(schema)
    run = lint([str(path)], [get_tokenizer("qwen2.5")], LintOptions(jobs=1))
    findings = [f for result in run.files for f in result.findings]
    assert findings
    if "LOW_RISK" in schema:
        assert all(f.plain_floats for f in findings)  # checked where made: passed over here
    else:
        assert not all(f.plain_floats for f in findings)  # a float written apart was caught
    expected = (
        json.dumps(strict_json(json_format.run_to_dict(run)), indent=2, ensure_ascii=False, allow_nan=False)
        + "\n"
    )
    assert json_format.render(run) == expected


@settings(max_examples=600, deadline=None)
@given(st.lists(st.text(alphabet="aZ09_-. \t\x00\x1c\x1f\u00a0\u212a\u00e9", max_size=4), max_size=6))
def test_plain_normals_equal_normalise_of_each(values):
    plain = _plain_normals(values)
    if plain is not None:
        assert plain == [_normalise(v) for v in values]
        assert all(v == v.strip() for v in values)  # (PCD007 then looks for no padding)


def test_plain_normals_take_plain_fields_and_leave_the_rest():
    assert _plain_normals(["Low", "HIGH", "x_1"]) == ["low", "high", "x_1"]
    for odd in (["a b"], [" a"], ["a\t"], ["caf\u00e9"], ["a\x00b", "c"], [""]):
        assert _plain_normals(odd) is None, odd


@pytest.mark.slow
def test_plain_normals_equal_normalise_on_the_corpus():
    files = corpus_files()
    if not files:
        pytest.skip(NO_CORPUS)
    taken = 0
    for path in files:
        for site in analyse_file(path, str(path)).sites:
            values = [v for v in site.options if isinstance(v, str)]
            plain = _plain_normals(values)
            if plain is not None:
                taken += 1
                assert plain == [_normalise(v) for v in values], (path.name, site.name)
    assert taken > 100  # most corpus fields take the one pass
