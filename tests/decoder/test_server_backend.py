"""The OpenAI-compatible server backend against a real llama-cpp-python server on 127.0.0.1.

The server serves the same SmolLM2 GGUF the in-process backend loads. llama-cpp-python's
server refuses token-id prompts, so pcdlint sends text and the server tokenizes prompt + suffix
+ option as one string. Its scores are therefore compared two ways:

- with the same model in-process fed the same tokens (pcdlint's tokenization of the whole
  text, one plain forward per text): every scored token's log-prob within LOGPROB_TOLERANCE,
  the same picks. The two are not bit-identical: llama.cpp runs the Q4_1 weights with its own
  quantized kernels, the in-process model runs them de-quantized in float32.
- with the in-process PCD run (prompt cache cut after ``{\n``, suffix ``  "field": "``): the
  server sees ``\n  `` as one token where PCD feeds two, so the contexts differ; the picks must
  still agree and the backend must report the cut difference, not a tokenizer mismatch.

`.ci/run` builds (once, cached) and installs llama-cpp-python[server] and sets
PCDLINT_SERVER_TESTS=1, which makes a missing package a failure; elsewhere it skips.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.decoder import FieldSpec

pytestmark = [pytest.mark.model, pytest.mark.slow]

# Per scored token, server vs the same tokens in-process (Q4_1 kernels vs de-quantized float32).
LOGPROB_TOLERANCE = 0.15
CONTEXT = "Invoice: 40 kg of green tea and 10 kg of roasted coffee beans, shipped urgently."
# Few, short fields: llama-cpp-python's server sorts the whole vocabulary in Python for every
# echoed token (about 70 ms a token), so every scored prompt costs seconds.
FIELDS = [
    FieldSpec("category", ["CAT_101_Tea", "CAT_102_Coffee", "CAT_203_Steel"], "Tariff category", ("PCD001",)),
    FieldSpec("urgent", [True, False]),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def gguf_path():
    pytest.importorskip("torch")
    from auditor.decoder import DecoderError
    from auditor.decoder.model import default_gguf_path

    try:
        return default_gguf_path()
    except DecoderError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def server(gguf_path, tmp_path_factory):
    try:
        import llama_cpp.server  # noqa: F401
    except ImportError:
        if os.environ.get("PCDLINT_SERVER_TESTS") == "1":
            pytest.fail(
                "llama-cpp-python[server] is not installed: .ci/run installs it with PCDLINT_SERVER_TESTS=1"
            )
        pytest.skip("llama-cpp-python[server] not installed (pip install 'llama-cpp-python[server]')")
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf_path),
        "--model_alias",
        "smollm2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--logits_all",
        "true",
        "--n_threads",
        "1",
        "--verbose",
        "false",
    ]
    with open(log, "wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"llama-cpp-python server exited ({process.returncode}): {log.read_text()[-800:]}"
                )
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as response:
                    json.loads(response.read())
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama-cpp-python server did not come up: {log.read_text()[-800:]}")
                time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture(scope="module")
def both(server, gguf_path, smollm2_model):
    from auditor.decoder import verify_fields
    from auditor.decoder.backends import OpenAIBackend
    from auditor.decoder.model import load_tokenizer_only

    # letters off: the server's cost is per echoed token, and the letter prompts (two legend
    # orders) would more than double it; they go through the same scoring path as the options
    local = verify_fields(FIELDS, CONTEXT, model=smollm2_model, progress=False, parity="off", letters=False)
    tokenizer, name = load_tokenizer_only(str(gguf_path))
    backend = OpenAIBackend(server, None, tokenizer, name, concurrency=2, batch_size=4)
    remote = verify_fields(FIELDS, CONTEXT, model=backend, progress=False, parity="off", letters=False)
    return local, remote


@pytest.fixture(scope="module")
def whole_text(smollm2_model):
    """Per field and option: the scored tokens' log-probs with the whole text tokenized as one string."""
    import torch

    from auditor.decoder.prompt import build_prompt, plan_field

    tokenizer = smollm2_model.linter_tokenizer
    prompt_text = build_prompt(smollm2_model.tokenizer, FIELDS, CONTEXT)
    prompt_ids = tokenizer.encode(prompt_text)
    result = []
    for spec in FIELDS:
        plan = plan_field(tokenizer, spec, prompt_text, prompt_ids)
        per_option = []
        for option, (text, sequence) in enumerate(zip(plan.option_texts, plan.sequences)):
            close = tokenizer.decode(sequence[len(plan.option_ids[option]) :])
            ids = tokenizer.encode(prompt_text + plan.suffix_text + text + close)
            assert ids[-len(sequence) :] == list(sequence), (
                spec.name,
                option,
            )  # the option's own cut is canonical
            with torch.no_grad():
                logits = smollm2_model.model(torch.tensor([ids])).logits[0].float()
            rows = torch.log_softmax(logits[-len(sequence) - 1 : -1], dim=-1)
            per_option.append([float(rows[i, token]) for i, token in enumerate(sequence)])
        result.append(per_option)
    return result


def test_server_tokenizes_like_pcdlint(both):
    _local, remote = both
    assert remote.backend == "openai" and remote.model.startswith("smollm2 at http://127.0.0.1")
    # the same tokenizer: no mismatch; only PCD's cut at the seed boundary differs (text prompts)
    assert remote.server["mismatches"] == 0, [f.tokenization_mismatches for f in remote.fields]
    assert remote.server["prompt_kind"] == "text"
    options = sum(len(f.options) for f in FIELDS)
    # one prompt per option; llama-cpp-python takes one prompt a request
    assert remote.server["prompts"] == options
    assert remote.server["cut_differences"] == options
    assert remote.server["requests"] >= remote.server["prompts"] - 1
    assert any("one prompt per request" in note for note in remote.notes)
    assert any("refuses token-id prompts" in note for note in remote.notes)
    (cut,) = [note for note in remote.notes if "another cut than PCD's" in note]
    # SmolLM2 has a `\n ` token: the whole text cuts `{\n` + `  "` as `\n `, ` "`; PCD feeds `\n`, ` `, ` "`
    assert repr(["\n ", ' "'])[:-1] in cut and repr(["\n", " ", ' "'])[:-1] in cut, cut


def test_server_matches_the_same_tokens_in_process(both, whole_text):
    _local, remote = both
    worst = 0.0
    for far, reference in zip(remote.fields, whole_text):
        for option, (served, ours) in enumerate(zip(far.full_sequence_logprob_sum, reference)):
            assert abs(served - sum(ours)) <= LOGPROB_TOLERANCE * len(ours), (far.name, far.options[option])
            worst = max(worst, abs(served - sum(ours)) / len(ours))
        sums = [sum(values) for values in reference]
        assert far.full_sequence_pick == sums.index(max(sums)), far.name
        firsts = [values[0] for values in reference]
        assert far.first_token_pick == firsts.index(max(firsts)), far.name
    print(f"max |Δ log-prob| per token, server vs the same tokens in-process: {worst:.4f}")


def test_server_picks_agree_with_the_pcd_run(both):
    local, remote = both
    worst = 0.0
    for near, far in zip(local.fields, remote.fields):
        assert near.name == far.name
        assert far.first_token_pick == near.first_token_pick, near.name
        assert far.full_sequence_pick == near.full_sequence_pick, near.name
        assert far.constrained_pick == near.constrained_pick, near.name
        assert far.collision_groups == near.collision_groups
        worst = max(
            worst,
            *(abs(a - b) for a, b in zip(near.full_sequence_logprob_sum, far.full_sequence_logprob_sum)),
        )
    print(f"max |Δ full-sequence log-prob| server (its cut) vs in-process PCD cut: {worst:.4f}")


def test_tie_is_bit_identical_through_the_server(both):
    _local, remote = both
    category = next(f for f in remote.fields if f.name == "category")
    assert category.collision_groups == [[0, 1]]
    assert category.ties_bit_identical is True


def test_cli_verify_with_the_server_backend(server, gguf_path, write_schema):
    # one boolean field: two scored prompts (no letter legend), to keep the server's time short
    schema = {"type": "object", "properties": {"urgent": {"type": "boolean"}}}
    result = CliRunner().invoke(
        cli,
        [
            "verify",
            str(write_schema(schema)),
            "--backend",
            "openai",
            "--base-url",
            server,
            "--tokenizer",
            str(gguf_path),
            "--context",
            CONTEXT,
            "--quiet",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    assert "(openai)" in result.output and "server: requests" in result.output
    assert "verdict:" in result.output


# A made-up key: eval sends it to the server (llama-cpp-python ignores it) and writes it nowhere.
EVAL_KEY = "sk-pcdlint-eval-openai-3b9d27e1"


def test_cli_eval_with_the_server_backend(server, gguf_path, write_schema, tmp_path):
    """`eval --backend openai` on two labeled rows of the support-triage eval fixture, through the
    real server (one boolean field: two scored prompts a row) behind a proxy that injects a 429
    with Retry-After and fails the second row; then again once the row is answered, then from the
    cache alone."""
    from faultproxy import FaultProxy

    from support import FIXTURES

    schema = write_schema(
        {
            "type": "object",
            "properties": {
                "refund_requested": {
                    "type": "boolean",
                    "description": "Whether the customer asks for a refund or credit",
                }
            },
        }
    )
    source = [
        json.loads(line) for line in (FIXTURES / "eval" / "support_triage.jsonl").read_text().splitlines()
    ]
    picked = [next(r for r in source if r["labels"]["refund_requested"] is want) for want in (True, False)]
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(
            json.dumps({**r, "labels": {"refund_requested": r["labels"]["refund_requested"]}}) + "\n"
            for r in picked
        )
    )
    cache = tmp_path / "cache"
    # POST 1 is the token-id prompt the server refuses (500, not retried while probing); POST 2 a 429
    proxy = FaultProxy(
        server.removesuffix("/v1"), {2: (429, {"Retry-After": "1"})}, picked[1]["context"][:40]
    )

    def run(*extra: str):
        return CliRunner(env={"PCDLINT_EVAL_KEY": EVAL_KEY}).invoke(
            cli,
            [
                "eval",
                str(schema),
                "--data",
                str(data),
                "--backend",
                "openai",
                "--base-url",
                proxy.url,
                "--tokenizer",
                str(gguf_path),
                "--api-key-env",
                "PCDLINT_EVAL_KEY",
                "--concurrency",
                "2",
                "--retries",
                "1",
                "--cache-dir",
                str(cache),
                "--quiet",
                *extra,
            ],
            catch_exceptions=False,
        )

    try:
        first = run("-f", "json")
        proxy.fail_when = None
        second = run("-f", "json")
        third = run()  # the text table, every row from the cache: no scored prompt
    finally:
        proxy.close()
    assert first.exit_code == 1, first.output  # a row failed after the retries
    report = json.loads(first.stdout)
    assert report["backend"]["backend"] == "openai" and report["backend"]["endpoint"] == proxy.url + "/v1"
    assert report["backend"]["model"] == "smollm2"
    assert report["rows"] == 2 and report["cache"] == {**report["cache"], "hits": 0, "scored": 1, "failed": 1}
    (failed,) = report["failed"]
    assert failed["id"] == picked[1]["id"] and failed["variant"] == "original" and "500" in failed["error"]
    assert any(picked[1]["id"] in note and "left out of the metrics" in note for note in report["notes"])
    # GET /models; row 1: the refused token-id prompt, the 429 retried, its two options; row 2: 500, retried once
    assert report["server"]["by_status"] == {"200": 3, "429": 1, "500": 3}
    assert report["server"]["requests"] == 7 and report["server"]["retries"] == 2
    assert report["server"]["tokenization_mismatches"] == 0
    assert any("refuses token-id prompts" in note for note in report["notes"])
    assert report["fields"][0]["labeled"] == 1  # the failed row is listed, not scored
    assert report["predictions"][1] == {**report["predictions"][1], "picks": {}}

    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert report["failed"] == [] and report["cache"] == {
        **report["cache"],
        "hits": 1,
        "scored": 1,
        "failed": 0,
    }
    (field,) = report["fields"]
    assert field["name"] == "refund_requested" and field["labeled"] == 2
    for method in ("first_token", "full_sequence", "constrained"):
        block = field["methods"][method]
        assert block["available"] and block["n"] == 2
        assert sum(map(sum, block["confusion"])) == 2
        assert block["correct"] == sum(block["confusion"][i][i] for i in range(2))
    assert field["methods"]["letter"] == {"available": False, "reason": "not a string enum"}
    picks = [p["picks"]["refund_requested"]["full_sequence"] for p in report["predictions"]]
    assert field["methods"]["full_sequence"]["correct"] == sum(
        pick == row["labels"]["refund_requested"] for pick, row in zip(picks, picked)
    )

    assert third.exit_code == 0, third.output
    lines = third.output.splitlines()
    assert "(openai, server server); cache: 2 hit(s), 0 scored" in lines[1]
    assert any(line.startswith("refund_requested") and "full-sequence" in line for line in lines)
    # the key went to the server on every request and into nothing written
    assert proxy.authorizations and set(proxy.authorizations) == {f"Bearer {EVAL_KEY}"}
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" and p.parent == cache for p in written)
    assert not [p for p in written if EVAL_KEY in p.read_text(errors="replace")]
    assert EVAL_KEY not in first.output + second.output + third.output
