"""A decision request's state holds more tokens than the engine's window.

## What it does
Counts the tokens of each request's `state` (System One) or `input` (OpenAI Decisions,
SGLang), as the engine writes it into its prompt (llm2jev flattens an object into `key: value`
lines; the others take a string as it is and an object as compact JSON), with the tokenizer
named by `-t`, and compares the count with the engine's window: the engine table's
`context_tokens` where a source documents one (Cloudflare Clef: a state of up to 65,536
tokens), else the served model's own, read from the model directory (`config.json`
`max_position_embeddings`) or GGUF (`<arch>.context_length`) that `-t` names. With no window known (a built-in tokenizer names no model; a hosted engine
whose window is undocumented), nothing is reported.

## Why is this bad?
Every engine renders the state first and the question, its options and the answer position
after it, so a state past the window leaves no room for the question: SGLang refuses the
request (400), and so does vLLM, llm2jev's backend refuses the prompt and llm2jev answers 422,
llama.cpp cannot fit it in its context. An engine that cut the prompt instead would score a state with no
question. The state is counted once per question (each question is its own prompt).

## Example
Under `--engine sglang-decisions` on a server started with `--context-length 48`
(`context-tokens = 48`), a transcript of 53 tokens under qwen2.5:
```json
{"input": "Agent: Hello, how can I help? Customer: My order 1042 arrived broken and the box was open. Agent: I am sorry. Can you send a photo? Customer: Yes, attached. Agent: Thanks, a replacement ships today.",
  "questions": [{"id": "resolved", "type": "yes_no", "question": "Was the problem solved?"}]}
```

## Use instead
Send the part of the transcript the question is about:
```json
{"input": "Agent: Thanks, a replacement ships today.",
  "questions": [{"id": "resolved", "type": "yes_no", "question": "Was the problem solved?"}]}
```

## Options
`context-tokens` (integer): the window the served engine reads, when it is smaller than the
model's (SGLang `--context-length`, llama.cpp `--ctx-size`). Default: the engine table's, else
the model's.

## How to fix it
Send the part of the state the questions are about, or a summary made in code; split a long
document into parts and decide per part.

## How to silence it
A per-file-ignores entry with a JSON Pointer fragment, `"requests/*.json#/state" =
["PCD207"]`, or `--ignore PCD207`.

## Source
SGLang `docs/docs/supported-models/decision_models.mdx`, section 'Errors' ("a prompt that
does not fit the model's context length"); llm2jev 0.6.1 `__main__.py` (a backend's 400 is
answered 422); the engine table's `context_tokens` column.

## Measured precision
No finding on the real requests of `tests/data/decision-requests/`, and none expected: their
states are short. A finding is a refusal by construction where the window is known.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import engine_window, over_window, rendered_state, request_body


@rule(
    code="PCD207",
    name="state-over-window",
    severity="error",
    per_engine=True,
    applies_to="labels",
    example_engine="sglang-decisions",
    options={"context-tokens": 0},
    example_options={"context-tokens": 48},
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if site.question_index != 0 or site.request_shape not in row.shapes:
        return
    window = engine_window(row, ctx.tokenizer, ctx.options.get("context-tokens") or None)
    body = request_body(ctx.file.document.data, site)
    if window is None or body is None or ctx.tokenizer is None:
        return
    key = "state" if "state" in body else "input" if "input" in body else None
    if key is None or body[key] is None:
        return
    count = len(ctx.tokenizer.ids(rendered_state(row, body[key])))
    if count <= window.tokens:
        return
    yield ctx.finding(
        f"the {key} is {count:,} tokens under {ctx.tokenizer.id}, past the {window.tokens:,}-token window "
        f"({window.origin}): the prompt starts with it, so its last {count - window.tokens:,} tokens, the "
        f"question, its options and the answer position fall outside; {over_window(row)}",
        pointer=f"{site.request_pointer}/{key}",
        data={
            "engine": row.name,
            "field": key,
            "tokens": count,
            "window": window.tokens,
            "window_origin": window.origin,
            "past": count - window.tokens,
        },
    )
