"""vLLM's prompt as pcdlint renders it, against the real server: for each question, the number of
prompt tokens the server reports reading (``usage.input_tokens`` of a one-question request)
equals the tokens of pcdlint's rendering (the state, the question's lines, the reply
instruction, in the chat template with thinking off), with the same tokenizer and template the
server was given (pcdlint's qwen3.6 conversion and its ChatML, tests/served/vllm_model.py)."""

from __future__ import annotations

import pytest

from auditor.decoder.http import HttpClient
from auditor.pcd.engines.table import ENGINE_ROWS
from auditor.pcd.readouts import DecisionQuestion, render_prompt
from auditor.tokenizers import load_tokenizer
from auditor.tokenizers.templates import builtin_chat_template

pytestmark = pytest.mark.slow

ROW = ENGINE_ROWS["vllm-systemone"]
STATE = "My card was charged twice for order 1182 and nobody answers my emails."

# (name, System One question, the same question as pcdlint's renderers see it)
QUESTIONS = [
    (
        "choice-described",
        {
            "type": "choice",
            "instructions": "Which team?",
            "criteria": {"billing": "Payments and refunds", "technical": None},
        },
        DecisionQuestion(
            "choice", ("billing", "technical"), ("Payments and refunds", None), "Which team?", STATE
        ),
    ),
    (
        "choice-no-instructions",
        {"type": "choice", "criteria": {"Billing": None, "billing ": None, "sales": None}},
        DecisionQuestion("choice", ("Billing", "billing ", "sales"), (None, None, None), None, STATE),
    ),
    (
        "score",
        {"type": "score", "instructions": "How upset?", "criteria": ["calm", "annoyed", "angry", "furious"]},
        DecisionQuestion("score", ("calm", "annoyed", "angry", "furious"), (), "How upset?", STATE),
    ),
    (
        "noul-described",
        {"type": "noul", "instructions": "Urgent?", "criteria": {"true": "needs an answer today"}},
        DecisionQuestion("binary", ("true", "false"), ("needs an answer today", None), "Urgent?", STATE),
    ),
    (
        "noul-bare",
        {"type": "noul", "instructions": "Is this spam?"},
        DecisionQuestion("binary", ("true", "false"), (None, None), "Is this spam?", STATE),
    ),
]


@pytest.fixture(scope="module")
def qwen36():
    return load_tokenizer("qwen3.6"), builtin_chat_template("qwen3.6")


@pytest.mark.parametrize(("name", "spec", "question"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_the_server_reads_as_many_tokens_as_pcdlint_renders(served_vllm, qwen36, name, spec, question):
    tokenizer, template = qwen36
    with HttpClient(served_vllm.url, api_key=served_vllm.api_key, read_deadline=300) as client:
        answer = client.post_json("/v1/systemone", {"state": STATE, "questions": {name: spec}})
    rendered = render_prompt(ROW, question, tokenizer, template)
    assert rendered.text is not None and rendered.text.endswith("<think>\n\n</think>\n\n")
    assert answer["usage"]["input_tokens"] == len(tokenizer.encode(rendered.text)), rendered.text
