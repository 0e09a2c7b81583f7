"""`pcdlint verify --backend openai` in front of a misbehaving completions server on 127.0.0.1.

The server speaks the OpenAI legacy completions shape (``GET /v1/models``, ``POST
/v1/completions`` with ``echo`` and ``logprobs``) and echoes the prompt's token ids as the
tokens pcdlint's real SmolLM2 tokenizer decodes them to, so the well-formed answer runs the
whole scoring path; each fault case then breaks one thing in that answer or in the transport.
Every case asserts exit 2, one line on stderr, no API key in any output or written file, and
that the key went only to the server's own origin.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from faultserver import FaultServer, Reply, json_reply

from auditor.cli.main import cli
from support import get_tokenizer

pytest.importorskip("transformers")

KEY = "sk-fault-test-0b7e5c9d"
SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"enum": ["CAT_101_Tea", "CAT_102_Coffee", "CAT_203_Steel"]},
        "urgent": {"type": "boolean"},
    },
}
MODELS = {"object": "list", "data": [{"id": "smollm2", "object": "model", "owned_by": "test"}]}


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    """SmolLM2's real tokenizer as a Hugging Face tokenizer directory (the shape --tokenizer takes)."""
    loaded = get_tokenizer("smollm2")
    directory = tmp_path_factory.mktemp("smollm2-tokenizer")
    loaded.hf.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<|im_start|>",
                "eos_token": "<|im_end|>",
                "chat_template": "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
            }
        )
    )
    return directory, loaded


def well_formed(body: dict, decode) -> dict:
    prompt = body["prompt"]
    prompts = prompt if prompt and isinstance(prompt[0], list) else [prompt]
    choices = []
    for index, ids in enumerate(prompts):
        tokens = [decode([token]) for token in ids]
        choices.append(
            {
                "index": index,
                "text": "".join(tokens),
                "finish_reason": "length",
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": [None] + [-0.25 - 0.01 * (k % 50) for k in range(1, len(ids))],
                    "top_logprobs": None,
                    "text_offset": list(range(len(ids))),
                },
            }
        )
    return {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "smollm2", "choices": choices}


def completions_server(decode, mutate=None, models=None):
    """A server whose completions answer is ``mutate(well_formed answer)`` (bytes or a Reply)."""

    def respond(seen):
        if seen.method == "GET" and seen.path == "/v1/models":
            return json_reply(json.dumps(MODELS) if models is None else models)
        if seen.method == "POST" and seen.path == "/v1/completions":
            answer = well_formed(json.loads(seen.body), decode)
            if mutate is None:
                return json_reply(json.dumps(answer))
            out = mutate(answer)
            return (
                out
                if isinstance(out, Reply)
                else json_reply(out if isinstance(out, bytes) else json.dumps(out))
            )
        return json_reply('{"error": {"message": "not found"}}', 404)

    return FaultServer(respond)


def run_verify(schema_path, url, tokenizer, tmp_path, *extra):
    out = tmp_path / "report.json"
    args = [
        "verify",
        str(schema_path),
        "--backend",
        "openai",
        "--base-url",
        url,
        "--tokenizer",
        str(tokenizer),
        "--api-key-env",
        "PCDLINT_FAULT_KEY",
        "--quiet",
        "-f",
        "json",
        "-o",
        str(out),
        *extra,
    ]
    result = CliRunner().invoke(cli, args, env={"PCDLINT_FAULT_KEY": KEY})
    written = out.read_text() if out.exists() else ""
    assert KEY not in result.stdout and KEY not in result.stderr and KEY not in written
    return result, written


def assert_one_line_exit_2(result, says: str):
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    assert says in lines[0], lines[0]
    return lines[0]


def test_a_well_formed_server_runs_the_whole_path(tokenizer_dir, write_schema, tmp_path):
    directory, loaded = tokenizer_dir
    with completions_server(loaded.decode) as server:
        result, written = run_verify(
            write_schema(SCHEMA), server.url, directory, tmp_path, "--batch-size", "4"
        )
    assert result.exit_code in (0, 1), result.output
    report = json.loads(written)
    stats = report["verify"][0]["server"]
    assert stats["requests"] >= 1 and stats["mismatches"] == 0 and stats["prompt_kind"] == "token ids"
    assert all(seen.headers.get("authorization") == f"Bearer {KEY}" for seen in server.seen)


def _set_last_logprob(value):
    def mutate(answer):
        answer["choices"][0]["logprobs"]["token_logprobs"][-1] = value
        return answer

    return mutate


def _raw(transform):
    return lambda answer: transform(json.dumps(answer))


MALFORMED = {
    "answer-is-a-list": (lambda a: [a], "the answer is a list; expected an object"),
    "choices-is-an-object": (
        lambda a: {**a, "choices": {"0": a["choices"][0]}},
        "choices is an object; expected a list",
    ),
    "choice-is-a-list": (
        lambda a: {**a, "choices": [[c] for c in a["choices"]]},
        "choices[0] is a list; expected an object",
    ),
    "logprobs-is-a-list": (
        lambda a: {**a, "choices": [{**c, "logprobs": []} for c in a["choices"]]},
        "choices[0].logprobs is a list; expected an object",
    ),
    "tokens-is-a-string": (
        lambda a: {
            **a,
            "choices": [{**c, "logprobs": {**c["logprobs"], "tokens": "abc"}} for c in a["choices"]],
        },
        "logprobs.tokens is a string",
    ),
    "logprob-is-a-string": (_set_last_logprob("-0.5"), "is a string '-0.5'; expected a log-prob"),
    "logprob-is-a-boolean": (_set_last_logprob(True), "is a boolean True; expected a log-prob"),
    "logprob-is-nan": (
        _raw(lambda text: text.replace("-0.25", "NaN", 1).encode()),
        "is nan; expected a finite log-prob",
    ),
    "logprob-is-minus-infinity": (_set_last_logprob(-math.inf), "is -inf; expected a finite log-prob"),
    "logprob-is-positive": (_set_last_logprob(0.75), "is 0.75; a log-prob is ≤ 0"),
    "logprob-scored-is-null": (_set_last_logprob(None), "is null for a scored token"),
    "lengths-differ": (
        lambda a: {
            **a,
            "choices": [
                {**c, "logprobs": {**c["logprobs"], "token_logprobs": c["logprobs"]["token_logprobs"][:-1]}}
                for c in a["choices"]
            ],
        },
        "elements; expected",
    ),
    "mixed-index-types": (
        lambda a: {
            **a,
            "choices": [
                {**c, "index": str(c["index"]) if i else c["index"]} for i, c in enumerate(a["choices"])
            ],
        },
        "choices[1].index is a string '1'; expected an integer",
    ),
    "repeated-index": (
        lambda a: {**a, "choices": [{**c, "index": 0} for c in a["choices"]]},
        "repeats an index",
    ),
    "token-is-a-number": (
        lambda a: {
            **a,
            "choices": [
                {**c, "logprobs": {**c["logprobs"], "tokens": [7] * len(c["logprobs"]["tokens"])}}
                for c in a["choices"]
            ],
        },
        "logprobs.tokens[0] is an integer 7; expected a string",
    ),
    "text-is-a-number": (
        lambda a: {**a, "choices": [{**c, "text": 3.5} for c in a["choices"]]},
        "choices[0].text is a number 3.5; expected a string",
    ),
    "invalid-utf8": (
        _raw(lambda text: text.encode().replace(b'"tokens": [', b'"tokens": ["\xff\xfe", ', 1)),
        "the answer is not UTF-8",
    ),
    "5000-digit-integer": (
        _raw(lambda text: text.replace('"created": 0', '"created": ' + "7" * 5000).encode()),
        "an integer of 5000 digits",
    ),
    "deep-nesting": (
        _raw(lambda text: text.replace('"created": 0', '"created": ' + "[" * 50_000 + "]" * 50_000).encode()),
        "nested too deeply",
    ),
    "key-echoed-as-a-logprob": (_set_last_logprob(KEY), "is a string '***'; expected a log-prob"),
    "too-many-choices": (lambda a: {**a, "choices": a["choices"] * 2}, "wrong number of choices"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_completions_answer_is_one_line_exit_2(case, tokenizer_dir, write_schema, tmp_path):
    directory, loaded = tokenizer_dir
    mutate, says = MALFORMED[case]
    with completions_server(loaded.decode, mutate) as server:
        result, written = run_verify(
            write_schema(SCHEMA), server.url, directory, tmp_path, "--batch-size", "4", "--retries", "0"
        )
    assert_one_line_exit_2(result, says)
    assert written == ""


@pytest.mark.parametrize(
    ("models", "says"),
    [
        ('[{"id": "smollm2"}]', "the answer is a list; expected an object"),
        ('{"data": {"id": "smollm2"}}', "data is an object; expected a list"),
        ('{"data": [{"id": 12}]}', "data[0].id is an integer 12; expected a string"),
        ('{"data": [{"id": "a"}, {"id": "b"}]}', "serves 2 models ('a', 'b'): pass --model NAME"),
        (json.dumps({"data": [{"id": KEY}, {"id": "b"}]}), "serves 2 models ('***', 'b'): pass --model NAME"),
    ],
)
def test_a_malformed_models_answer_is_one_line_exit_2(models, says, tokenizer_dir, write_schema, tmp_path):
    directory, loaded = tokenizer_dir
    with completions_server(loaded.decode, models=models) as server:
        result, _ = run_verify(write_schema(SCHEMA), server.url, directory, tmp_path)
    assert_one_line_exit_2(result, says)


@pytest.mark.parametrize(
    ("base_url", "says"),
    [
        ("file:///etc/passwd", "only http:// and https://"),
        ("http://user:pw-SECRET@127.0.0.1:9/v1", "user or password in the URL is refused"),
        ("http://127.0.0.1:99999/v1", "the port must be a number from 1 to 65535"),
    ],
)
def test_a_bad_base_url_is_refused_before_any_request(base_url, says, tokenizer_dir, write_schema, tmp_path):
    directory, _ = tokenizer_dir
    result, _ = run_verify(write_schema(SCHEMA), base_url, directory, tmp_path)
    line = assert_one_line_exit_2(result, says)
    assert "pw-SECRET" not in result.output and "pw-SECRET" not in line


def test_a_cross_origin_redirect_keeps_the_key_home(tokenizer_dir, write_schema, tmp_path):
    directory, loaded = tokenizer_dir
    with (
        completions_server(loaded.decode) as elsewhere,
        FaultServer(
            lambda seen: Reply(302, {"Location": elsewhere.url + seen.path, "Content-Length": "0"})
        ) as home,
    ):
        result, _ = run_verify(write_schema(SCHEMA), home.url, directory, tmp_path)
    assert_one_line_exit_2(result, "redirects to another origin")
    assert elsewhere.seen == [] and len(home.seen) == 1


@pytest.mark.parametrize(
    ("value", "says"), [("sk-a\nb", "a newline"), ("sk-\u0100x", "outside visible ASCII")]
)
def test_a_key_that_cannot_be_sent_is_one_line_and_not_shown(
    value, says, tokenizer_dir, write_schema, tmp_path
):
    directory, _ = tokenizer_dir
    args = [
        "verify",
        str(write_schema(SCHEMA)),
        "--backend",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--tokenizer",
        str(directory),
        "--api-key-env",
        "PCDLINT_FAULT_KEY",
        "--quiet",
    ]
    result = CliRunner().invoke(cli, args, env={"PCDLINT_FAULT_KEY": value})
    assert_one_line_exit_2(result, says)
    assert value not in result.output and "sk-" not in result.output


def test_endless_429_is_bounded(tokenizer_dir, write_schema, tmp_path):
    directory, _ = tokenizer_dir
    with FaultServer(lambda seen: json_reply("{}", 429, **{"Retry-After": "0"})) as server:
        result, _ = run_verify(write_schema(SCHEMA), server.url, directory, tmp_path, "--retries", "10")
    assert_one_line_exit_2(result, "HTTP 429 after 11 tries")
    assert len(server.seen) == 11


@pytest.mark.slow  # a process that imports transformers
def test_the_server_backend_runs_without_torch(tokenizer_dir, write_schema, tmp_path):
    """No model runs in-process with --backend openai, so torch is not needed (it is hidden here)."""
    import os
    import subprocess
    import sys

    directory, loaded = tokenizer_dir
    hide = tmp_path / "hide-torch"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hide), os.environ.get("PYTHONPATH", "")]),
        "PCDLINT_FAULT_KEY": KEY,
    }
    with completions_server(loaded.decode) as server:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "auditor",
                "verify",
                str(write_schema(SCHEMA)),
                "--backend",
                "openai",
                "--base-url",
                server.url,
                "--tokenizer",
                str(directory),
                "--quiet",
                "--api-key-env",
                "PCDLINT_FAULT_KEY",
                "-f",
                "json",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["verify"][0]["server"]["requests"] >= 1
    assert KEY not in result.stdout + result.stderr


def _context_cases(tmp_path):
    invalid = tmp_path / "latin1.txt"
    invalid.write_bytes("Rechnung über 40 kg".encode("latin-1"))
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(4 * 1024 * 1024 + 1)  # sparse: no disk used
    return {
        "dev-zero": ("@/dev/zero", "not a regular file"),
        "directory": (f"@{tmp_path}", "is a directory"),
        "invalid-utf8": (f"@{invalid}", "not UTF-8 (byte 9)"),
        "unknown-user": (
            "@~pcdlint-no-such-user/ctx.txt",
            "no home directory known for user 'pcdlint-no-such-user'",
        ),
        "name-too-long": ("@" + str(tmp_path / ("x" * 5000)), "path too long (5,0"),
        "component-too-long": (
            "@" + str(tmp_path / ("x" * 300)),
            "file name too long (a component of 300 bytes",
        ),
        "missing": (f"@{tmp_path / 'missing.txt'}", "cannot read file (No such file or directory)"),
        "too-big": (f"@{big}", "file is 4,194,305 bytes, over the limit of 4,194,304"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "dev-zero",
        "directory",
        "invalid-utf8",
        "unknown-user",
        "name-too-long",
        "component-too-long",
        "missing",
        "too-big",
    ],
)
def test_a_bad_context_file_is_one_line_exit_2(case, tokenizer_dir, write_schema, tmp_path):
    directory, _ = tokenizer_dir
    value, says = _context_cases(tmp_path)[case]
    with FaultServer(lambda seen: json_reply("{}", 500)) as server:
        result, _ = run_verify(write_schema(SCHEMA), server.url, directory, tmp_path, "--context", value)
    assert_one_line_exit_2(result, says)
    assert server.seen == []  # refused before any request


def test_a_fifo_context_is_refused_without_hanging(tokenizer_dir, write_schema, tmp_path):
    import os
    import subprocess
    import sys

    directory, _ = tokenizer_dir
    fifo = tmp_path / "context.fifo"
    os.mkfifo(fifo)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor",
            "verify",
            str(write_schema(SCHEMA)),
            "--backend",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--tokenizer",
            str(directory),
            "--context",
            f"@{fifo}",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.strip().endswith("not a regular file (a FIFO)"), (
        result.stderr
    )


def test_a_prompt_longer_than_the_served_context_is_an_error(tokenizer_dir, write_schema, tmp_path):
    directory, loaded = tokenizer_dir
    models = json.dumps({"object": "list", "data": [{"id": "smollm2", "max_model_len": 64}]})
    with completions_server(loaded.decode, models=models) as server:
        result, _ = run_verify(write_schema(SCHEMA), server.url, directory, tmp_path)
    line = assert_one_line_exit_2(result, "more than the model's context of 64 tokens")
    assert "shorten --context" in line
    assert [seen.path for seen in server.seen] == ["/v1/models"]  # nothing scored past the context


def test_a_trickling_server_is_bounded_by_timeout(tokenizer_dir, write_schema, tmp_path):
    import itertools
    import time

    directory, _ = tokenizer_dir
    trickle = Reply(200, {"Content-Type": "application/json"}, itertools.repeat(b" ", 2400), pause=0.05)
    with FaultServer(lambda seen: trickle) as server:
        started = time.monotonic()
        result, _ = run_verify(write_schema(SCHEMA), server.url, directory, tmp_path, "--timeout", "1")
        elapsed = time.monotonic() - started
    assert_one_line_exit_2(result, "no complete answer within the deadline of 1 s (--timeout)")
    assert elapsed < 60  # the trickle alone lasts 120 s


def test_an_endless_body_is_cut_at_the_cap(tokenizer_dir, write_schema, tmp_path):
    import resource

    directory, _ = tokenizer_dir
    chunk = b" " * (1 << 20)
    endless = Reply(200, {"Content-Type": "application/json"}, (chunk for _ in range(1600)))  # 1.6 GB at most
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with FaultServer(lambda seen: endless) as server:
        result, _ = run_verify(
            write_schema(SCHEMA), server.url, directory, tmp_path, "--max-response-bytes", "2097152"
        )
    assert_one_line_exit_2(result, "the answer passed the cap of 2097152 bytes (--max-response-bytes)")
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 200  # MiB
