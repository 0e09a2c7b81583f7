"""The reference decoder on the real SmolLM2-135M model (CPU; no timed assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.decoder import DecoderError, FieldSpec, load_fields
from auditor.decoder.tree import pack_forest, pack_tree
from auditor.eval.verdicts import annotate
from auditor.reporting.verdict import format_text
from support import CORPUS, NO_CORPUS

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]
PRESETS = CORPUS / "pcd-presets"
CONTEXT = "Transaction alert: 9,850 USD sent from a Tor exit node to a crypto exchange at 03:14 UTC."
PARITY_TOLERANCE = 1e-3


def declared_passes(fields: int, letters: bool) -> dict:
    """One prefill, one packed suffix pass, one packed teacher-forced pass; fast parity = one
    cache-copy continuation per field plus one fresh forward; letters = one pass per legend order
    (forward, reversed) on the prompt cache, no second prefill."""
    passes = {
        "prefill": 1,
        "suffix": 1,
        "teacher_forced": 1,
        "parity_continuation": fields,
        "parity_fresh": 1,
    }
    if letters:
        passes["letter"] = 2
    return passes


@pytest.fixture(scope="session")
def loaded(smollm2_model):
    return smollm2_model


@pytest.fixture(scope="session")
def small_result(loaded):
    from auditor.decoder import verify_fields

    fields = [
        FieldSpec("risk_level", ["LOW", "MEDIUM", "HIGH", "CRITICAL"], "Calculated risk tier", ("PCD002",)),
        FieldSpec("is_fraudulent", [True, False], "Whether the transaction is fraudulent"),
        FieldSpec(
            "category",
            ["CAT_000_Live_Animals", "CAT_101_Tea", "CAT_102_Coffee", "CAT_203_Steel"],
            "Tariff category",
            ("PCD001",),
        ),
    ]
    return annotate(verify_fields(fields, CONTEXT, model=loaded, progress=False))


@pytest.fixture(scope="session")
def customs_subset():
    preset = PRESETS / "high_cardinality_255.json"
    if not preset.is_file():
        pytest.skip(NO_CORPUS)
    fields, context = load_fields(preset)
    (customs,) = [field for field in fields if field.name == "customs_category"]
    # 20 options spread over the CAT_0xx, CAT_1xx and CAT_2xx buckets.
    subset = customs.options[::13][:20]
    return FieldSpec(customs.name, subset, customs.description, ("PCD001",)), context


def by_name(result, name):
    return next(field for field in result.fields if field.name == name)


def test_import_is_cheap():
    code = (
        "import sys, auditor.decoder; assert 'torch' not in sys.modules and 'transformers' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={"PYTHONPATH": str(REPO)})


def test_tree_packing_shares_prefixes():
    tree = pack_tree([7, 8], [[1, 2, 99], [1, 3, 99], [4, 99]])
    assert tree.ids == [7, 8, 1, 2, 3, 4]
    assert tree.positions == [0, 1, 2, 3, 3, 2]
    assert tree.parents == [-1, 0, 1, 2, 2, 1]
    assert tree.targets[1] == [(1, 1), (2, 3), (4, 99)]


def test_forest_keeps_fields_apart_and_splits_big_ones():
    (row,) = pack_forest([([7], [[1, 99], [2, 99]]), ([8], [[1, 99]])], row_tokens=100)
    assert row[0].ids == [7, 1, 2, 8, 1]
    assert row[0].parents == [-1, 0, 0, -1, 3]
    assert row[1] == [0, 1, 2]
    assert row[0].targets[2] == [(3, 1), (4, 99)]
    rows = pack_forest([([7], [[1, 2, 99], [3, 4, 99], [5, 6, 99]])], row_tokens=5)
    assert [owners for _, owners in rows] == [[0, 1], [2]]


def test_smollm2_digit_pretokenizer_is_restored(loaded):
    from transformers import AutoTokenizer

    from auditor.decoder.model import default_gguf_path, digit_probe_ok, repair_gguf_tokenizer

    assert loaded.tokenizer.encode("a  1", add_special_tokens=False) == [81, 256, 33]
    assert len(loaded.tokenizer.encode("2026", add_special_tokens=False)) == 4
    path = default_gguf_path()
    raw = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    if digit_probe_ok(raw):  # a transformers release that keeps the digit splitter needs no repair
        assert repair_gguf_tokenizer(raw, "smollm") is None
    else:
        assert raw.encode("a  1", add_special_tokens=False) == [81, 216, 216, 33]
        assert repair_gguf_tokenizer(raw, "smollm") is not None
        assert digit_probe_ok(raw)


def test_small_schema_passes_and_parity(small_result):
    assert small_result.passes == declared_passes(3, letters=True)
    assert small_result.parity_max_abs_diff <= PARITY_TOLERANCE
    assert set(small_result.seconds) >= {"prefill", "suffix", "teacher_forced", "parity"}
    data = json.loads(json.dumps(small_result.to_dict()))
    assert data["total_passes"] == sum(declared_passes(3, letters=True).values())
    assert data["model"].startswith("SmolLM2-135M-Instruct")
    assert "tokenizer" in data and data["device"] == "cpu" and data["dtype"] == "float32"


def test_small_schema_collision_is_bit_identical_and_separated(small_result):
    category = by_name(small_result, "category")
    assert category.prefix == "CAT_"
    assert category.collision_groups == [[1, 2]]
    assert category.ties_bit_identical is True
    assert category.first_token_probs[1] == category.first_token_probs[2]
    assert category.full_sequence_logprob_sum[1] != category.full_sequence_logprob_sum[2]
    text = format_text(small_result)
    assert "PCD001 confirmed" in text or "collision present but harmless" in text


def test_boolean_cut_is_canonical(small_result):
    flag = by_name(small_result, "is_fraudulent")
    assert flag.kind == "literal"
    assert flag.suffix_text.endswith('":')
    assert flag.scored_tokens == [" true", " false"]
    assert not flag.noncanonical_options
    # The seed convention (prefill ends after "{\n", suffix starts with two spaces) is what PCD
    # engines feed; SmolLM2 writes "\n  " differently in one piece of text, and verify says so.
    assert flag.prompt_cut_ok is False
    assert any("prompt/suffix boundary" in line for line in flag.verdicts)
    assert not flag.letter_viable


def test_letter_slot_and_agreement_verdicts(small_result):
    risk = by_name(small_result, "risk_level")
    assert risk.suffix_text == '  "risk_level": "'
    assert risk.letter_viable and risk.letter_pick is not None
    assert any(line.startswith("PCD002") for line in risk.verdicts)
    assert any(line.startswith("remap:") for line in risk.verdicts)


@pytest.fixture(scope="session")
def customs_result(loaded, customs_subset):
    """One verify of the customs subset (tree mode, fast parity), shared by the tests below."""
    from auditor.decoder import verify_fields

    field, context = customs_subset
    return annotate(verify_fields([field], context, model=loaded, progress=False, coupling=False))


def test_customs_subset(customs_result):
    result = customs_result
    assert result.passes == declared_passes(1, letters=result.fields[0].letter_viable)
    assert result.parity_max_abs_diff <= PARITY_TOLERANCE
    (customs,) = result.fields
    assert sorted(set(customs.scored_tokens)) == ["0", "1", "2"]
    assert len(customs.collision_groups) == 3 and customs.ties_bit_identical
    for group in customs.collision_groups:
        assert len({customs.first_token_probs[i] for i in group}) == 1
        sums = [customs.full_sequence_logprob_sum[i] for i in group]
        assert len(set(sums)) == len(sums), "full-sequence scores must separate colliding options"
    assert customs.verdicts[1].startswith("PCD001")


def test_tree_matches_one_row_per_option(loaded, customs_subset, customs_result):
    from auditor.decoder import verify_fields

    field, context = customs_subset
    rows = verify_fields(
        [field], context, full_sequence_mode="rows", model=loaded, progress=False, parity=False
    )
    tree = customs_result
    diffs = [
        abs(a - b)
        for a, b in zip(tree.fields[0].full_sequence_logprob_sum, rows.fields[0].full_sequence_logprob_sum)
    ]
    assert max(diffs) <= PARITY_TOLERANCE
    assert tree.passes["teacher_forced"] == 1


def test_coupling_counts_its_passes(loaded):
    from auditor.decoder import verify_fields

    fields = [
        FieldSpec("risk_level", ["LOW", "MEDIUM", "HIGH", "CRITICAL"]),
        FieldSpec("action", ["APPROVE", "REVIEW", "BLOCK"]),
        FieldSpec("is_fraudulent", [True, False]),
    ]
    result = verify_fields(
        fields, CONTEXT, model=loaded, progress=False, parity=False, coupling=["risk_level"]
    )
    assert result.passes["coupling_prefill"] == 1 and result.passes["coupling_suffix"] == 1
    assert [entry["given"] for entry in result.coupling] == ["risk_level"]
    with pytest.raises(DecoderError, match="unknown field"):
        verify_fields(fields, CONTEXT, model=loaded, progress=False, coupling=["nope"])


def test_neutral_context_is_noted(loaded):
    from auditor.decoder import verify_fields

    result = verify_fields([FieldSpec("ok", [True, False])], "", model=loaded, progress=False, parity=False)
    assert any("no context given" in note for note in result.notes)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("/nonexistent/model.gguf", "model file not found"),
        ("not a model", "unknown model spec"),
        ("pcdlint-test/definitely-not-cached", "--allow-download"),
    ],
)
def test_user_errors_are_decoder_errors(spec, message):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from auditor.decoder import load_model

    with pytest.raises(DecoderError, match=message):
        load_model(spec, device="cpu", progress=False)


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (b"PK\x03\x04" + b"\0" * 60, "no GGUF magic"),  # a zip renamed .gguf
        (b"GGUF\x09\0\0\0" + b"\0" * 56, "GGUF version 9"),
    ],
)
def test_a_file_that_is_not_gguf_is_refused_before_torch_loads(tmp_path, head, message):
    from auditor.decoder import load_model

    fake = tmp_path / "fake.gguf"
    fake.write_bytes(head)
    with pytest.raises(DecoderError, match=message):
        load_model(str(fake), device="cpu", progress=False)


def test_preset_loader(tmp_path):
    preset = tmp_path / "p.json"
    preset.write_text(
        json.dumps(
            {
                "context": "ctx",
                "schema": {
                    "flag": {"type": "boolean", "description": "d"},
                    "tier": {"type": "enum", "choices": ["A", "B"]},
                    "note": {"type": "string"},
                },
            }
        )
    )
    fields, context = load_fields(preset)
    assert context == "ctx"
    assert [(f.name, f.options) for f in fields] == [("flag", [True, False]), ("tier", ["A", "B"])]
    with pytest.raises(DecoderError, match=r"missing\.json"):
        load_fields(tmp_path / "missing.json")
