"""Static vs live: pcdlint's verdict under --engine llm2jev against what the real llm2jev server does.

A table of boundary requests (options, questions and levels on both sides of the engine's
limits); for every row, pcdlint's prediction (a finding that names the status the engine refuses
with) must equal the server's accept (200) or refuse (4xx), and both the documented limit.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from served.boundary import choice as _choice
from served.boundary import questions as _questions
from served.boundary import score as _score

from auditor.cli.main import cli

pytestmark = [pytest.mark.model, pytest.mark.slow]


# (name, body, what the documented limits say: accept or refuse)
ROWS = [
    ("options-1", _choice(1), "refuse"),
    ("options-2", _choice(2), "accept"),
    ("options-255", _choice(255), "accept"),
    ("options-256", _choice(256), "refuse"),
    ("questions-64", _questions(64), "accept"),
    ("questions-65", _questions(65), "refuse"),
    ("levels-1", _score(1), "refuse"),
    ("levels-2", _score(2), "accept"),
    ("levels-255", _score(255), "accept"),
    ("levels-256", _score(256), "refuse"),
]


@pytest.fixture(scope="module")
def table(served_llm2jev, tmp_path_factory):
    folder = tmp_path_factory.mktemp("boundary")
    paths = []
    for name, body, _expected in ROWS:
        path = folder / f"{name}.json"
        path.write_text(json.dumps(body))
        paths.append(str(path))
    # the 64-question request is 64 prefills on the server's CPU: a generous per-request timeout
    result = CliRunner().invoke(
        cli,
        [
            "verify",
            "--backend",
            "systemone",
            "--base-url",
            served_llm2jev,
            "--engine",
            "llm2jev",
            "--probe",
            "off",
            "--timeout",
            "1200",
            "-f",
            "json",
            "--quiet",
            *paths,
        ],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)["decisions"]


@pytest.mark.parametrize(("index", "row"), list(enumerate(ROWS)), ids=[name for name, _b, _e in ROWS])
def test_pcdlint_verdict_equals_the_server(table, index, row):
    name, _body, expected = row
    entry = table[1][index]
    assert entry["path"].endswith(f"{name}.json")
    live = "refuse" if entry["refused"] else "accept"
    assert entry["static"]["predicted"] == live == expected, entry
    assert entry["static_vs_live"] == []
    if live == "refuse":
        assert entry["refused"]["status"] == 422
        assert {f["status"] for f in entry["static"]["findings"]} == {422}
        assert entry["answers"] == []
    else:
        assert entry["refused"] is None and entry["answers"]


def test_refusals_make_exit_1_and_no_disagreement_is_reported(table):
    code, entries = table
    assert code == 1  # the refused rows are findings
    assert not any(e["static_vs_live"] for e in entries)
