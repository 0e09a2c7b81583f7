"""The decoder scores exactly what the linter computed: one scoring model (auditor.pcd).

For every field of the shared corpus, the decoder's plan (the suffix it feeds the model after
the prefill, each option's scored token and teacher-forced tokens) equals the linter's
tokenization of the same site, with the same tokenizer.
"""

from __future__ import annotations

import pytest

from auditor.decoder.prompt import build_prompt, plan_field, specs_for_sites
from auditor.pcd import PREFILL_END
from auditor.schema.cache import analyse_file
from support import NO_CORPUS, corpus_files, get_tokenizer

FILES = corpus_files()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not FILES, reason=NO_CORPUS)]


@pytest.mark.parametrize("tokenizer_name", ["qwen2.5"])
def test_decoder_plans_equal_linter_tokens(tokenizer_name):
    from auditor.linter.engine import FileResult

    tokenizer = get_tokenizer(tokenizer_name)
    checked = mixed = 0
    for path in FILES:
        model = analyse_file(path, str(path))
        if not model.sites:
            continue
        result = FileResult(model)
        specs = specs_for_sites(model.sites)
        prompt_text = build_prompt(None, specs, "context")
        assert prompt_text.endswith(PREFILL_END)
        prompt_ids = tokenizer.encode(prompt_text)
        for site, spec in zip(model.sites, specs):
            tokens = result.site_tokens(site, tokenizer)
            if tokens.mixed:
                mixed += 1
                continue
            plan = plan_field(tokenizer, spec, prompt_text, prompt_ids)
            expected_suffix = tokens.suffix_ids if tokens.has_strings else tokens.literal_suffix_ids
            where = f"{path.name} {site.pointer}"
            assert plan.suffix_ids == list(expected_suffix), where
            assert plan.suffix_text.startswith('  "'), where
            assert plan.scored_ids == [o.scored_id for o in tokens.options], where
            assert plan.option_ids == [list(o.ids) for o in tokens.options], where
            assert plan.noncanonical_options == tokens.noncanonical_options, where
            checked += 1
    assert checked > 500 and mixed < checked


def test_windows_split_as_sites_of_their_own():
    """PCD003's windows take their split from their field's JSON texts (window_sites): the same
    split a site with those options makes itself, on every corpus field cut into windows of 20."""
    import dataclasses

    from auditor.pcd.runcache import RunCache
    from auditor.pcd.scoring import split_options

    checked = 0
    cache = RunCache()
    for path in FILES:
        for site in analyse_file(path, str(path)).sites:
            if len(site.options) <= 20:
                continue
            for window in cache.windows(site, 20):
                fresh = dataclasses.replace(window)  # a new site: no split in the cache yet
                assert cache.entry(fresh).split is None
                assert cache.split(window) == split_options(fresh)
                checked += 1
    assert checked > 500
