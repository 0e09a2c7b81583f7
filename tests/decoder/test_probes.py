"""The probes' request building, key mapping and verdicts (pure logic, no server).

Against the real llm2jev server, each probe's numbers are checked against the test's own posts
in tests/served/test_gates.py; here the answers are given, to pin every verdict form.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.decoder.probes import (
    OFF_TOPIC_STATE,
    PROBE_CHOICES,
    PROBES,
    criteria_body,
    names_body,
    neutral_ids,
    planned_requests,
    realign,
    resolve_probes,
    run_probes,
    scope_bodies,
    scope_verdict,
)
from auditor.decoder.systemone import QuestionAnswer
from auditor.errors import UsageError
from support import FIXTURES

BODY = {
    "state": "s",
    "questions": {
        "team": {"type": "choice", "criteria": {"billing": "money", "shipping": "parcels", "tech": None}},
        "bare": {"type": "choice", "criteria": {"x": None, "y": None}},
        "level": {"type": "score", "criteria": ["low", "high"]},
        "urgent": {"type": "noul", "criteria": {"true": "today", "false": "later"}},
        "plain": {"type": "noul"},
    },
}


def test_the_cli_offers_the_probes_the_decoder_has():
    from auditor.cli.main import cli

    verify = cli.commands["verify"]  # type: ignore[attr-defined]
    probe = next(p for p in verify.params if p.name == "probe")
    assert probe.multiple and list(probe.type.choices) == list(PROBE_CHOICES)
    assert set(PROBE_CHOICES) == {"auto", "off", *PROBES}


@pytest.mark.parametrize(
    "values,probes,mode",
    [
        ((), ["order"], "auto"),
        (("auto",), ["order"], "auto"),
        (("off",), [], "off"),
        (("scope",), ["scope"], "off"),
        (("names", "order", "scope"), ["order", "scope", "names"], "order"),
        (("auto", "criteria"), ["order", "criteria"], "auto"),
    ],
)
def test_resolve_probes(values, probes, mode):
    assert resolve_probes(values) == (probes, mode)


def test_off_with_another_probe_is_a_usage_error():
    with pytest.raises(UsageError, match="--probe off runs no probe"):
        resolve_probes(("off", "scope"))


def test_each_probe_changes_only_what_it_names():
    scoped = scope_bodies(BODY)
    assert list(scoped) == ["empty state", "off-topic state"]
    assert scoped["empty state"]["state"] == "" and scoped["off-topic state"]["state"] == OFF_TOPIC_STATE
    assert list(scoped["empty state"]["questions"]) == ["team", "bare"]  # choices only
    criteria = criteria_body(BODY)
    assert list(criteria["questions"]) == ["team", "urgent"]  # described choices, nouls with criteria
    assert criteria["questions"]["team"]["criteria"] == {"billing": None, "shipping": None, "tech": None}
    assert criteria["questions"]["urgent"]["criteria"] == {"true": "later", "false": "today"}
    named = names_body(BODY)
    assert list(named["questions"]) == ["team"]
    assert list(named["questions"]["team"]["criteria"].items()) == [
        ("opt1", "money"),
        ("opt2", "parcels"),
        ("opt3", None),
    ]
    assert BODY["questions"]["urgent"]["criteria"]["true"] == "today"  # the request is not changed
    assert planned_requests(BODY, ["order", "scope", "criteria", "names"], "order", 4) == {
        "order": 3,
        "scope": 2,
        "criteria": 1,
        "names": 1,
    }


def test_neutral_ids_never_equal_an_option_and_map_back_by_position():
    assert neutral_ids(["a", "b"]) == ["opt1", "opt2"]
    assert neutral_ids(["opt2", "b"]) == ["optx1", "optx2"]
    answer = QuestionAnswer("team", "choice", ["opt1", "opt2", "opt3"], [0.2, 0.7, 0.1], "opt2")
    assert realign(answer, ["billing", "shipping", "tech"]) == [0.2, 0.7, 0.1]
    shown = QuestionAnswer("team", "choice", ["tech", "billing", "shipping"], [0.1, 0.2, 0.7], "shipping")
    assert realign(shown, ["billing", "shipping", "tech"]) == [0.2, 0.7, 0.1]


def test_scope_verdicts():
    team = {"type": "choice", "criteria": {"billing": "money", "shipping": "parcels", "tech": None}}
    keys = list(team["criteria"])
    ref = "PCD201 no-way-out: https://example/rules/PCD201/"
    forced = [("empty state", "tech", 0.91), ("off-topic state", "billing", 0.6)]
    assert scope_verdict(team, keys, forced, ref) == (
        f"forced: 0.91 on 'tech' for an empty state; the question offers no way out ({ref})",
        True,
    )
    spread = [("empty state", "tech", 0.4), ("off-topic state", "billing", 0.45)]
    verdict, flagged = scope_verdict(team, keys, spread, ref)
    assert verdict.startswith("spread: at most 0.45") and not flagged
    with_out = {"type": "choice", "criteria": {"billing": "money", "other": "fits none of these"}}
    keys = list(with_out["criteria"])
    taken = [("empty state", "other", 0.8), ("off-topic state", "other", 0.7)]
    assert scope_verdict(with_out, keys, taken, None) == (
        "takes its way out: 'other' 0.80 for an empty state, 0.70 for an off-topic state",
        False,
    )
    missed = [("empty state", "other", 0.8), ("off-topic state", "billing", 0.7)]
    assert scope_verdict(with_out, keys, missed, None) == (
        "misses its way out: 0.70 on 'billing' for an off-topic state, not on 'other'",
        True,
    )


class Given:
    """Answers given per request (pure logic: the server side is tests/served/test_gates.py)."""

    def __init__(self, answer):
        self.answer, self.sent = answer, []

    def decide(self, body):
        self.sent.append(body)
        return {"answers": {qid: self.answer(body, qid) for qid in body["questions"]}}


def test_criteria_verdicts_for_a_noul():
    body = {"state": "s", "questions": {"urgent": BODY["questions"]["urgent"]}}
    original = [QuestionAnswer("urgent", "noul", ["true", "false"], [0.9, 0.1], "true", noul=0.9)]
    for swapped, start in ((0.2, "follows its descriptions"), (0.85, "ignores its descriptions")):
        engine = Given(lambda b, q, p=swapped: {"noul": p})
        (result,), sent = run_probes(engine, body, original, ["criteria"])
        assert sent == 1 and result.verdict.startswith(start)
        assert result.measures["followed"] == pytest.approx((0.9 - swapped) / 0.8)
        assert result.flagged is (start == "ignores its descriptions")


def test_names_probe_maps_neutral_ids_back():
    body = {"state": "s", "questions": {"team": BODY["questions"]["team"]}}
    keys = ["billing", "shipping", "tech"]
    original = [QuestionAnswer("team", "choice", keys, [0.6, 0.3, 0.1], "billing")]
    engine = Given(lambda b, q: {"probabilities": {"opt1": 0.1, "opt2": 0.8, "opt3": 0.1}})
    (result,), sent = run_probes(engine, body, original, ["names"])
    assert sent == 1 and list(engine.sent[0]["questions"]["team"]["criteria"]) == ["opt1", "opt2", "opt3"]
    assert result.variants[1] == {
        "variant": "neutral ids",
        "answer": "shipping",
        "probabilities": {"billing": 0.1, "shipping": 0.8, "tech": 0.1},
    }
    assert result.measures == {
        "total_variation": pytest.approx(0.5),
        "answer_changed": True,
        "ids": {"billing": "opt1", "shipping": "opt2", "tech": "opt3"},
    }
    assert result.verdict == "rests on the names: billing → shipping with neutral ids (total variation 0.50)"


def test_a_schema_verify_says_the_decision_probes_were_not_run(tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "verify",
            str(FIXTURES / "schemas" / "clean_sentiment.json"),
            "--probe",
            "scope",
            "--backend",
            "openai",
        ],
        catch_exceptions=False,
    )
    assert "--probe scope needs a decision request" in result.stderr


def test_a_schema_eval_says_the_decision_probes_were_not_run():
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            str(FIXTURES / "eval" / "support_triage_eval.json"),
            "--data",
            str(FIXTURES / "eval" / "support_triage.jsonl"),
            "--perturb",
            "order",
            "--perturb",
            "names",
            "--perturb",
            "scope",
            "--backend",
            "openai",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 2  # (no --base-url: the note comes first)
    assert (
        "pcdlint: --perturb names, scope needs a decision request (--backend systemone); not run on a schema eval"
        in result.stderr
    )
