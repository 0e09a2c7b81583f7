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
