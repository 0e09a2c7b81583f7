"""`pcdlint conform`'s input handling: the servers file (one line, exit 2, for each mistake), the
requests, an unreachable server (exit 2, the report says which), and the key never shown. The
runs on real servers are tests/served/test_conform.py."""

from __future__ import annotations

import json
import socket

import pytest

from auditor.decoder.conform import Outcome, parse_servers, question_differences
from auditor.decoder.errors import DecoderError
from auditor.decoder.systemone import QuestionAnswer
from support import run_cli

GOOD = '[[server]]\nname = "a"\nbase_url = "http://127.0.0.1:9"\nengine = "vllm-systemone"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no [[server]] tables"),
        ("[[server]\n", "not TOML"),
        ('servers = 1\n[[server]]\nname = "a"\n', "unknown top-level key 'servers'"),
        ('[[server]]\nname = "a"\nengine = "llm2jev"\n', "server 1: base_url is required"),
        (GOOD + 'colour = "red"\n', "unknown key 'colour'"),
        (GOOD + GOOD, "server 'a': listed twice"),
        (GOOD.replace("vllm-systemone", "gather"), "engine: unknown decision engine 'gather'"),
        (GOOD.replace("vllm-systemone", "vllm-decisions"), "takes openai-decisions bodies"),
        (GOOD.replace("http://127.0.0.1:9", "http://u:secret@127.0.0.1:9"), "user or password in the URL"),
        (GOOD + 'route = "v1/systemone"\n', "route must be a path"),
        (GOOD.replace('name = "a"', "name = 3"), "name must be a non-empty string"),
    ],
)
def test_a_bad_servers_file_is_one_line(text, message):
    with pytest.raises(DecoderError) as caught:
        parse_servers(text, "servers.toml")
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert "secret" not in str(caught.value)


def test_bad_input_exits_2_with_one_line(tmp_path):
    request = tmp_path / "r.json"
    request.write_text(json.dumps({"state": "x", "questions": {"q": {"type": "noul"}}}))
    servers = tmp_path / "servers.toml"
    servers.write_text(GOOD + 'api_key_env = "X"\nbogus = 1\n')
    done = run_cli("conform", "--servers", str(servers), str(request))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "unknown key 'bogus'" in done.stderr
    missing = run_cli("conform", "--servers", str(tmp_path / "nope.toml"), str(request))
    assert missing.returncode == 2 and "no such servers file" in missing.stderr
    servers.write_text(GOOD)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"a": {"enum": ["x", "y"]}}}))
    none = run_cli("conform", "--servers", str(servers), str(schema))
    assert none.returncode == 2 and "no decision request" in none.stderr
    assert "Traceback" not in done.stderr + missing.stderr + none.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


def test_an_unreachable_server_fails_the_run_and_the_key_is_never_shown(tmp_path):
    request = tmp_path / "r.json"
    request.write_text(json.dumps({"state": "x", "questions": {"q": {"type": "noul"}}}))
    servers = tmp_path / "servers.toml"
    servers.write_text(
        f'[[server]]\nname = "down"\nbase_url = "http://127.0.0.1:{_closed_port()}"\n'
        'engine = "vllm-systemone"\napi_key_env = "PCDLINT_TEST_KEY"\n'
    )
    done = run_cli(
        "conform",
        "--servers",
        str(servers),
        "--retries",
        "0",
        "-f",
        "json",
        str(request),
        env={"PCDLINT_TEST_KEY": "sk-do-not-show-123"},
    )
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)["conform"]
    assert report["summary"]["failed"] == 1 and report["requests"][0]["failed"] == ["down"]
    assert "cannot reach the server" in report["requests"][0]["servers"][0]["message"]
    assert report["servers"][0]["api_key_env"] == "PCDLINT_TEST_KEY"
    assert "sk-do-not-show-123" not in done.stdout + done.stderr
    assert "could not be asked" in done.stderr


def _answer(name: str, probs: list[float], mass: float | None = None) -> QuestionAnswer:
    keys = ["a", "b", "c"]
    chosen = keys[max(range(3), key=probs.__getitem__)]
    return QuestionAnswer(name, "choice", keys, probs, chosen, label_mass=mass)


def test_question_differences_line_the_servers_up():
    outcomes = [
        Outcome("one", "answered", 200, "", [_answer("q", [0.7, 0.2, 0.1], 0.9)]),
        Outcome("two", "answered", 200, "", [_answer("q", [0.1, 0.3, 0.6])]),
        Outcome("three", "refused", 400, "no"),
    ]
    (q,) = question_differences(outcomes)
    assert q.answers == {"one": "a", "two": "c"} and not q.answers_agree
    assert q.largest_difference == pytest.approx(0.6) and q.at_key == "a"
    assert q.label_mass == {"one": 0.9, "two": None}
    assert question_differences(outcomes[2:]) == []
