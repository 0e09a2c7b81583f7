"""The suggestions' quick refusal (EngineProfile.quick_collision) says exactly what the full
plan says: for every field of the shared corpus and every renaming the suggestions consider,
under gather and rlcd-mlx, with a tiktoken-native vocabulary (Qwen2.5, where the quote joins
are read from the split regex) and a SentencePiece-style one (SmolLM2, where they never are),
`quick_collision(site)` equals `field_plan(SiteTokens(site)).has_collision`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from auditor.linter.suggest import kept_candidates
from auditor.pcd.engines import get_engine
from auditor.pcd.scoring import SiteTokens
from auditor.schema.cache import analyse_file
from support import NO_CORPUS, corpus_files, get_tokenizer

FILES = corpus_files()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not FILES, reason=NO_CORPUS)]


@pytest.mark.parametrize("tokenizer_name", ["qwen2.5", "smollm2"])
def test_quick_collision_equals_the_plan_on_the_corpus_and_its_renamings(tokenizer_name):
    tokenizer = get_tokenizer(tokenizer_name)
    engines = [get_engine("gather"), get_engine("rlcd-mlx")]
    told = {True: 0, False: 0, None: 0}
    for path in FILES:
        for site in analyse_file(path, str(path)).sites:
            tokens = SiteTokens(site, tokenizer)
            sites = [site] + [
                replace(site, options=renamed)
                for _, _, renamed in kept_candidates(tokens, engines[0].letters)
            ]
            for candidate in sites:
                for engine in engines:
                    quick = engine.quick_collision(candidate, tokenizer)
                    told[quick] += 1
                    if quick is not None:
                        full = engine.field_plan(SiteTokens(candidate, tokenizer)).has_collision
                        assert quick == full, (path.name, candidate.name, engine.name)
    assert told[True] > 100 and told[False] > 100  # both answers were tested, many times


@pytest.mark.parametrize(
    ("options", "collides"),
    [
        ([".", ".>", "zz"], True),  # `.` and `.>` alone both start with `.` (`."` would be one token)
        (["&", "&,", "zz"], False),  # `&` and `&,` alone are different tokens (`&"`, `&,"` share `&`)
    ],
)
def test_quick_collision_reads_the_remainder_alone_as_rlcd_does(options, collides, qwen):
    """RLCD's candidates are the first token of each remainder encoded alone (core/schema.py; see
    auditor/pcd/engines/gather.py), even where the quote the model writes would merge into it
    (Qwen2.5): the plan and the quick check both read the bare remainder."""
    from auditor.schema.documents import Span
    from auditor.schema.sites import Site

    span = Span(1, 1, 1, 1)
    site = Site(
        "schema.json",
        "/properties/f",
        "f",
        "f",
        options,
        [f"/{i}" for i in range(len(options))],
        span,
        [span] * len(options),
        "enum",
    )
    gather = get_engine("gather")
    assert gather.field_plan(SiteTokens(site, qwen)).has_collision is collides
    assert gather.quick_collision(site, qwen) is collides
    own_first = [qwen.ids(o)[0] for o in options]  # the remainder alone: what RLCD gathers
    assert (len(set(own_first)) < len(options)) is collides
    joined_first = [qwen.ids(o + '"')[0] for o in options]  # what the model writes differs here
    assert (len(set(joined_first)) < len(options)) is not collides
