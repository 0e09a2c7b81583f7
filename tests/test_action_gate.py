"""The GitHub Action's decision gate (action/decision-gate.sh) run locally the way the runner runs
it: GITHUB_STEP_SUMMARY and GITHUB_OUTPUT set, inputs as environment variables, no server.

The recorded answers are constructed (the --replay input format, each answer written out), so
the gate's exit codes are known: B worse by 12 of 40 rows (every flip one way) fails a margin
of 0.05; a drop within chance passes; a request the recording does not hold is exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from auditor.decoder.record import Recording
from support import FIXTURES, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
REQUEST = FIXTURES / "served" / "ticket_triage.json"
KEYS = ["billing", "shipping", "technical"]


def test_the_gate_step_passes_its_inputs_through_env():
    step = next(s for s in ACTION["runs"]["steps"] if s.get("id") == "decision-gate")
    assert step["run"].strip() == 'bash "$GITHUB_ACTION_PATH/action/decision-gate.sh"'
    assert step["if"] == "${{ !cancelled() && inputs.decision-request != '' }}"
    for name, value in {
        "PCDLINT_DECISION_REQUEST": "decision-request",
        "PCDLINT_DECISION_DATA": "decision-data",
        "PCDLINT_DECISION_REQUEST_B": "decision-request-b",
        "PCDLINT_REPLAY": "replay",
        "PCDLINT_FAIL_IF_WORSE": "fail-if-worse",
        "PCDLINT_ALPHA": "alpha",
    }.items():
        assert step["env"][name] == f"${{{{ inputs.{value} }}}}"
        assert ACTION["inputs"][value]["description"]
    assert ACTION["outputs"]["decision-exit-code"]["value"] == "${{ steps.decision-gate.outputs.exit-code }}"


def _workspace(tmp_path: Path, b_right: int) -> dict[str, str]:
    labels = [KEYS[i % 3] for i in range(40)]
    rows = [{"id": f"r{i:02d}", "state": f"ticket {i}", "labels": {"team": k}} for i, k in enumerate(labels)]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    body = json.loads(REQUEST.read_text())
    body_b = json.loads(json.dumps(body))
    body_b["questions"]["team"]["instructions"] = "Which team owns this ticket?"
    (tmp_path / "request.json").write_text(json.dumps(body))
    (tmp_path / "request_b.json").write_text(json.dumps(body_b))
    wrong = {k: KEYS[(KEYS.index(k) + 1) % 3] for k in KEYS}
    recording = Recording()
    for version, right in ((body, 30), (body_b, b_right)):
        for i, row in enumerate(rows):
            winner = row["labels"]["team"] if i < right else wrong[row["labels"]["team"]]
            probs = {k: 0.8 if k == winner else 0.1 for k in KEYS}
            answer = {
                "model": "smollm2",
                "answers": {"team": {"probabilities": probs}, "urgent": {"noul": 0.4}},
            }
            recording.add({**version, "state": row["state"]}, None, None, answer, None)
    (tmp_path / "answers.jsonl").write_text(recording.dumps("test"))
    return {
        "PCDLINT_DECISION_REQUEST": "request.json",
        "PCDLINT_DECISION_DATA": "rows.jsonl",
        "PCDLINT_DECISION_REQUEST_B": "request_b.json",
        "PCDLINT_REPLAY": "answers.jsonl",
        "PCDLINT_FAIL_IF_WORSE": "0.05",
        "PCDLINT_ALPHA": "0.05",
    }


def _gate(tmp_path: Path, inputs: dict[str, str]) -> tuple[subprocess.CompletedProcess, str, str]:
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = dict(
        os.environ,
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_OUTPUT=str(outputs),
        HF_HUB_OFFLINE="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **inputs,
    )
    done = subprocess.run(
        ["bash", str(REPO / "action" / "decision-gate.sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    read = lambda p: p.read_text(encoding="utf-8") if p.exists() else ""  # noqa: E731
    return done, read(summary), read(outputs)


@pytest.mark.parametrize("b_right,code", [(18, 1), (27, 0)])
def test_the_gate_fails_on_a_worse_version_and_passes_a_drop_within_chance(tmp_path, b_right, code):
    done, summary, outputs = _gate(tmp_path, _workspace(tmp_path, b_right))
    assert done.returncode == code, done.stderr
    assert outputs == f"exit-code={code}\n"
    assert summary.startswith("## pcdlint decision gate\n\n```text\n")
    assert ("gate: FAIL: B is worse than A by more than 0.05 on team" in summary) is (code == 1)
    assert "answers recorded " in summary and (tmp_path / "pcdlint-decisions.html").is_file()


def test_the_gate_refuses_a_request_that_was_not_recorded(tmp_path):
    inputs = _workspace(tmp_path, 27)
    changed = json.loads((tmp_path / "request_b.json").read_text())
    changed["questions"]["team"]["criteria"]["billing"] = "money"
    (tmp_path / "request_b.json").write_text(json.dumps(changed))
    done, summary, outputs = _gate(tmp_path, inputs)
    assert done.returncode == 2 and outputs == "exit-code=2\n"
    assert "request_b.json: --replay answers.jsonl: no recorded answer" in done.stderr
    assert "No report (exit code 2)" in summary


def test_the_gate_replays_the_recorded_fixture_offline(tmp_path):
    """fixtures/served/ticket_triage.answers.jsonl: the real llm2jev server's answers to both
    versions of the triage request (the docs' example); the gate passes at a margin of 0.02."""
    served = FIXTURES / "served"
    done, summary, outputs = _gate(
        tmp_path,
        {
            "PCDLINT_DECISION_REQUEST": str(served / "ticket_triage.json"),
            "PCDLINT_DECISION_DATA": str(served / "ticket_triage.jsonl"),
            "PCDLINT_DECISION_REQUEST_B": str(served / "ticket_triage_v2.json"),
            "PCDLINT_REPLAY": str(served / "ticket_triage.answers.jsonl"),
            "PCDLINT_FAIL_IF_WORSE": "0.02",
            "PCDLINT_ALPHA": "0.05",
        },
    )
    assert done.returncode == 0, done.stderr
    assert outputs == "exit-code=0\n"
    assert "gate: pass: B is not worse than A by more than 0.02 at alpha 0.05" in summary
    assert "from model smollm2" in summary
