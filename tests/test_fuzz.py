"""Property-based fuzzing of `pcdlint check` (issue 13); the property is in tests/fuzzing.py.

CI runs a few hundred examples (PCDLINT_FUZZ_EXAMPLES overrides); benchmarks/fuzz_long.py runs
at least 10,000. The real qwen2.5 tokenizer is loaded once and handed to every run.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from fuzzing import check_property, completions_answers, documents, system_one_answers
from hypothesis import HealthCheck, given, settings

EXAMPLES = int(os.environ.get("PCDLINT_FUZZ_EXAMPLES", "200"))


@pytest.fixture
def runner(qwen, monkeypatch, tmp_path):
    import auditor.tokenizers.loader

    monkeypatch.setattr(auditor.tokenizers.loader, "load_tokenizer", lambda *args, **kwargs: qwen)
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return CliRunner()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@pytest.mark.slow  # hypothesis: many whole CLI runs
@given(document=documents())
def test_check_never_crashes_and_points_into_the_document(runner, document):
    from auditor.cli.main import cli

    check_property(document, runner, cli)


# -- server answers through the one HTTP client (issue 36) ---------------------------------------
@pytest.fixture(scope="module")
def answering_server():
    """A server on 127.0.0.1 that answers every request with the bytes the example put in ``next``."""
    from faultserver import FaultServer, json_reply

    from auditor.decoder.http import HttpClient

    state = {"next": b"{}"}
    server = FaultServer(lambda seen: json_reply(state["next"]))
    with server, HttpClient(server.url + "/v1", read_deadline=10, retries=0, max_bytes=1 << 20) as http:
        yield http, state


def _one_line_error(error) -> None:
    text = str(error)
    assert text and "\n" not in text and "\r" not in text and len(text) < 600, text


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=completions_answers())
def test_completions_answers_are_read_or_refused_in_one_line(answering_server, case):
    import math

    from auditor.decoder.answers import completion_choices
    from auditor.decoder.errors import DecoderError

    http, state = answering_server
    count, state["next"] = case
    try:
        choices = completion_choices(
            http.post_json("completions", {"prompt": [1]}), count, "POST completions"
        )
    except DecoderError as error:
        _one_line_error(error)
        return
    if choices is not None:
        assert len(choices) == count
        for choice in choices:
            assert isinstance(choice.text, str) and all(isinstance(t, str) for t in choice.tokens)
            assert len(choice.tokens) == len(choice.token_logprobs)
            assert all(
                v is None or (type(v) is float and math.isfinite(v) and v <= 0.0)
                for v in choice.token_logprobs
            )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=system_one_answers())
def test_system_one_answers_are_read_or_refused_in_one_line(answering_server, case):
    systemone = pytest.importorskip("auditor.decoder.systemone")  # the System One backend (issue 31)
    from auditor.decoder.errors import DecoderError

    http, state = answering_server
    body, state["next"] = case
    try:
        answers = systemone.read_answers(body, http.post_json("systemone", body))
    except DecoderError as error:
        _one_line_error(error)
        return
    assert [answer.name for answer in answers] == list(body["questions"])
    for answer in answers:
        assert answer.probabilities is None or all(0.0 <= p <= 1.0 + 1e-9 for p in answer.probabilities)
