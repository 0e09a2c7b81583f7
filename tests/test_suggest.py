"""`pcdlint suggest` a user can act on: renamings keep the words that tell options apart, the
ones keeping most words come first, exit 1 when a flagged field has no verified fix, and
`--write` / `--in-place` write a fixed schema (plus the letter-slot legend) that re-lints clean.
Real Qwen2.5 tokenizer throughout."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.linter.engine import LintOptions, lint
from auditor.linter.suggest import drops_distinguishing_word, words_kept
from support import FIXTURES


def _invoke(*args):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


def _entries(path) -> list[dict]:
    return json.loads(_invoke("suggest", "--format", "json", path).output)


def test_a_renaming_never_drops_a_distinguishing_word():
    sentiment = ["VERY_NEGATIVE", "NEGATIVE", "NEUTRAL", "POSITIVE"]
    assert drops_distinguishing_word(sentiment, ["very", "negative", "neutral", "positive"])
    assert drops_distinguishing_word(["on_hold", "on_track", "off"], ["on", "track", "off"])
    assert drops_distinguishing_word(sentiment, ["very_negative", "negative", "neutral", "positive"]) is None
    # shared words and numeric codes may go: they tell no option apart
    assert drops_distinguishing_word(["CAT_000_Meat", "CAT_001_Fish"], ["meat", "fish"]) is None
    assert words_kept(["CAT_000_Meat", "CAT_001_Fish"], ["meat", "fish"]) == 0.5
    assert words_kept(["on_hold", "off"], ["hold_on", "off"]) == 1.0


def test_suggest_offers_no_word_dropping_renaming(write_schema):
    cases = {
        "sentiment": ["VERY_NEGATIVE", "NEGATIVE", "NEUTRAL", "POSITIVE"],
        "status": ["on_hold", "on_track", "off"],
    }
    path = write_schema({"type": "object", "properties": {k: {"enum": v} for k, v in cases.items()}})
    for entry in _entries(path):
        options = cases[entry["field"]]
        for suggestion in entry["suggestions"]:
            if suggestion["strategy"] != "letter-slots":
                assert drops_distinguishing_word(options, suggestion["options"]) is None, suggestion
            assert "very" not in suggestion["options"] and "on" not in suggestion["options"]
        kept = [s["words_kept"] for s in entry["suggestions"]]
        assert kept == sorted(kept, reverse=True)  # most words kept first, letters last
    status = next(e for e in _entries(path) if e["field"] == "status")
    assert status["suggestions"][0]["words_kept"] == 1.0  # e.g. hold_on, track_on, off


def test_write_applies_the_first_fix_and_relints_clean(tmp_path, qwen):
    source = FIXTURES / "schemas" / "risk_triage.json"
    before = source.read_bytes()
    fixed = tmp_path / "fixed.json"
    result = _invoke("suggest", source, "--write", fixed)
    assert result.exit_code == 0, result.output
    assert source.read_bytes() == before  # never the input
    document = json.loads(fixed.read_text(encoding="utf-8"))
    first = _entries(source)[0]["suggestions"][0]
    assert document["properties"]["decision"]["enum"] == first["options"]
    # everything else is byte-for-byte the same: only option texts changed
    assert fixed.read_text(encoding="utf-8").replace(
        json.dumps(first["options"])[1:-1], ""
    ) == before.decode().replace('"approve_now", "approve_later", "reject", "escalate"', "")
    run = lint([str(fixed)], [qwen], LintOptions())
    assert not [f for f in run.findings if f.severity in ("warning", "error")]


def test_write_refuses_the_input_and_in_place_writes_it(tmp_path):
    source = tmp_path / "preset.yaml"
    source.write_text(
        (FIXTURES / "schemas" / "customs_preset.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    before = source.read_text(encoding="utf-8")
    refused = CliRunner().invoke(cli, ["suggest", str(source), "--write", str(source)])
    assert refused.exit_code == 2 and "refusing to overwrite an input file" in refused.output
    assert source.read_text(encoding="utf-8") == before
    done = _invoke("suggest", source, "--in-place")
    assert done.exit_code == 0, done.output
    after = yaml.safe_load(source.read_text(encoding="utf-8"))
    choices = after["schema"]["customs_category"]["choices"]
    assert choices != yaml.safe_load(before)["schema"]["customs_category"]["choices"]
    assert after["context"] == yaml.safe_load(before)["context"]  # the comment and the rest kept
    assert source.read_text(encoding="utf-8").startswith("# A PCD preset in YAML")
    assert _invoke("check", source).exit_code == 0


def test_letter_slots_write_the_legend(write_schema, tmp_path):
    # nothing but letters re-lints clean for these (digits collide, words are all shared)
    hours = ["1_HOUR", "4_HOURS", "12_HOURS", "24_HOURS"]
    path = write_schema({"type": "object", "properties": {"eta": {"enum": hours}}})
    [entry] = _entries(path)
    assert [s["strategy"] for s in entry["suggestions"]] == ["letter-slots"]
    fixed = tmp_path / "out" / "fixed.json"
    result = _invoke("suggest", path, "--write", fixed)
    assert result.exit_code == 0
    legend = json.loads((tmp_path / "out" / "fixed.slots.json").read_text(encoding="utf-8"))
    assert legend == {"/properties/eta": {"field": "eta", "slots": dict(zip("ABCD", hours))}}
    assert json.loads(fixed.read_text(encoding="utf-8"))["properties"]["eta"]["enum"] == list("ABCD")


def test_write_needs_one_file_and_exit_codes(write_schema, tmp_path):
    path = write_schema({"type": "object", "properties": {"risk": {"enum": ["low", "high"]}}})
    clean = _invoke("suggest", path)
    assert clean.exit_code == 0 and "No field needs a fix." in clean.output
    usage = CliRunner().invoke(cli, ["suggest", str(path), str(path), "--write", str(tmp_path / "x.json")])
    assert usage.exit_code == 2 and "exactly one input file" in usage.output


def test_a_field_repeated_across_files_is_verified_once_with_the_same_result(write_schema, qwen):
    """SharedSuggestions: the same enum under the same name in two files (and a third file
    with the same options under another name) gives each field the suggestions a run of that
    file alone gives it, in lists of its own."""
    from auditor.linter import suggest

    risk = {"enum": ["LOW", "MEDIUM", "HIGH", "CRITICAL"]}
    paths = [
        write_schema({"type": "object", "properties": {name: risk}}, f"{i}.json")
        for i, name in enumerate(["risk_level", "risk_level", "severity"])
    ]
    calls = []
    verify = suggest.verified_suggestions

    def counted(tokens, engine=None, letters=None):
        calls.append(tokens.site.name)
        return verify(tokens, engine, letters)

    suggest.verified_suggestions = counted
    try:
        together = lint([str(p) for p in paths], [qwen], LintOptions(jobs=1))
    finally:
        suggest.verified_suggestions = verify
    assert sorted(calls) == ["risk_level", "severity"]  # once per distinct (name, options)

    def suggestions(run):
        return [f.data.get("suggestions") for r in run.files for f in r.findings if f.data.get("suggestions")]

    shared = [suggestions(lint([str(p)], [qwen], LintOptions(jobs=1))) for p in paths]
    per_file = [
        [f.data.get("suggestions") for f in r.findings if f.data.get("suggestions")] for r in together.files
    ]
    assert per_file == shared and all(per_file)
    first, second = per_file[0][0], per_file[1][0]
    assert first == second and first is not second and first[0]["options"] is not second[0]["options"]


def _drops_reference(options, renamed):
    """The rule as first written: a dropped non-numeric word some sibling lacks."""
    from auditor.linter.suggest import _word_set

    sets = [_word_set(o) for o in options]
    for index, (words, new) in enumerate(zip(sets, renamed)):
        for word in sorted(words - _word_set(new)):
            if not word.isdigit() and any(word not in other for j, other in enumerate(sets) if j != index):
                return f"{options[index]} → {new} drops {word!r}"
    return None


def test_the_word_counts_decide_as_the_pairwise_check_did():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    words = st.sampled_from(["LOW", "High", "very", "NEG", "pos", "01", "7", "Über", "x"])
    option = st.lists(words, min_size=1, max_size=3).map("_".join)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(option, option), min_size=1, max_size=6))
    def check(pairs):
        options, renamed = [a for a, _ in pairs], [b.lower() for _, b in pairs]
        assert drops_distinguishing_word(options, renamed) == _drops_reference(options, renamed)

    check()


def test_a_field_past_the_option_limit_gets_no_candidates_as_none_would_be_kept(
    write_schema, qwen, monkeypatch
):
    """Every renaming keeps a field's count of options, and PCD003 (an error past 255) refuses
    each re-lint: a field that large is given no candidates, which changes no finding."""
    from auditor.linter import suggest
    from auditor.pcd.scoring import SiteTokens

    options = [f"ITEM_{i:03d}_Part" for i in range(300)]
    path = write_schema({"type": "object", "properties": {"part": {"enum": options}}})

    def findings():
        return [f.to_dict() for f in lint([str(path)], [qwen], LintOptions(jobs=1)).findings]

    shortcut = findings()
    site = lint([str(path)], [qwen], LintOptions(jobs=1)).files[0].model.sites[0]
    assert suggest.kept_candidates(SiteTokens(site, qwen), "ABC") == []
    monkeypatch.setattr(suggest, "_max_options", lambda: 10**9)  # candidates built and re-linted
    tokens = SiteTokens(site, qwen)
    assert suggest.kept_candidates(tokens, "ABC")  # there are renamings to try ...
    assert suggest.verified_suggestions(tokens) == []  # ... and the re-lint keeps none
    assert findings() == shortcut and any(f["code"] == "PCD001" for f in shortcut)
