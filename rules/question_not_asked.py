"""A decision question whose text the model never sees: blank or missing instructions, or one or
two words.

## What it does
Asks each engine's renderer (`auditor/pcd/readouts/`, one module per engine family) what the
model is shown of a question's text, and reports a question whose own text is missing, null or
blank (an error: the model is asked nothing, and every engine but Intern-Decision shows no
question id either), or is one or two words (a warning). The message is the renderer's sentence
for the engine: under SGLang the `Question:` line is left out (a noul shows only `Is the
following true?`); llm2jev shows its default question for missing or null instructions and an
empty `Question: ` line for `""`; llama.cpp hands the text to the GGUF's `systemone` template;
Intern-Decision's trained prompt shows the id and no text; the System One specification, TypeSafe
Jev, OpenAI, Fireworks and Perplexity render their own prompts from the instructions and never
send the id. A question the engine refuses as written (SGLang `/v1/decisions`: a blank question;
llama.cpp: missing instructions) is PCD103's.

## Why is this bad?
The id (`urgent`, `team`) is often the only place the question is stated, and the model never
sees it: it scores the options against the state with no question, so the answer is whatever
the options alone suggest. One or two words (`Urgent?`) leave the criterion to the model's
guess, and the guess moves with the model version.

## Example
```json
{"state": "The integration keeps failing.", "questions": {"urgent": {"type": "noul",
  "instructions": "", "criteria": {"true": "A reply is needed today", "false": "It can wait"}}}}
```

## Use instead
```json
{"state": "The integration keeps failing.", "questions": {"urgent": {"type": "noul",
  "instructions": "The customer needs a reply today.", "criteria": {"true": "A reply is needed today",
  "false": "It can wait"}}}}
```

## How to fix it
Write the question in the question's own text (`instructions`; SGLang's `question`): a full
question or, for a yes/no question, the statement to judge. The finding's `data.fix` writes a
yes/no question's id as its statement (`refund_requested` → `Refund requested.`) where the id
has two words or more (`pcdlint suggest` offers only the default rules' fixes; this one comes
from `auditor.linter.fixes.design_entries`); edit it into the question you mean.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:urgent" = ["PCD200"]`; `--ignore PCD200`
turns it off.

## Source
The renderers in `auditor/pcd/readouts/`, read from SGLang `serving_decisions.py` and
`decision_models.mdx` ("a choice or score question without them drops its question line"),
llm2jev 0.6.1 `prompt.py`, llama.cpp `server-decision.cpp`, SGLang's Intern-Decision family;
for the hosted engines, the System One API (typesafe-sdk 0.7.5: `instructions`, no id in the
prompt) and the cobusgreyling/Jev notes ("Question IDs are not sent to the model").

## Measured precision
On the real requests of `tests/data/decision-requests/` and the reach issue's code files: 0 of
3 findings right. The request files gave none (every question there has three words or more);
the three in code were a client test's placeholder (`instructions: 'i'`), a mock library's
example (`choice(null, …)`) and a parser test, none of which sends its request, so no author
would change them. It stays opt-in until real requests show it right.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import id_statement, question_shown, site_question, text_key, word_count

SHORT = 2  # words: a question this short leaves its criterion to the model


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or value in ({}, [])


@rule(
    code="PCD200",
    name="question-not-asked",
    severity="error",
    per_engine=True,
    applies_to="labels",
    needs_tokenizer=False,
    example_engine="sglang-systemone",
    fixes=True,
    default=False,
    opt_in_reason=(
        "0 of 3 findings right on the collected real requests: all three were in tests and mock "
        "examples, whose requests are never sent (select it with `extend-select`)"
    ),
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if site.request_shape not in row.shapes:
        return
    question = site_question(ctx.file.document.data, site)
    shown = question_shown(row, question, ctx.chat_template)
    if shown.refused:
        return  # (the engine refuses it as written: PCD103)
    key = text_key(site.request_shape)
    name = site.question_name
    data: dict = {"engine": row.name, "shown": shown.text, "rendered": shown.rendered}
    if _blank(question.text):
        what = "null" if question.null_text else "missing" if question.text is None else "blank"
        data["text"] = what
        id_shown = bool(shown.text) and name in (shown.text or "")
        described = site.question_kind == "binary" and any(not _blank(d) for d in site.option_details)
        statement = id_statement(name) if site.question_kind == "binary" else None
        if statement and not id_shown:
            data["fix"] = {
                "kind": "set-text",
                "description": f"write the question's {key}: {statement!r}",
                "key": key,
                "text": statement,
            }
        id_said = " id " in f" {shown.sentence} "  # (the sentence says what becomes of the id)
        unseen = "" if id_said else f"; its id {name!r} is not shown either"
        if id_shown:
            tail = f"; the id {name!r} stands in for the question: write it in `{key}`"
        elif described:
            tail = (
                f"{unseen}; the model judges only the true/false descriptions: write the statement in `{key}`"
            )
        else:
            tail = f"{unseen}: write the question in `{key}`"
        yield ctx.finding(
            f"no question asked ({key} {what}): {shown.sentence}{tail}",
            severity="warning" if id_shown or described else None,
            data=data,
        )
        return
    words = word_count(question.text)
    if words <= SHORT:
        data["words"] = words
        yield ctx.finding(
            f"the question is {words} word{'s' if words != 1 else ''}: {shown.sentence}; the model is left "
            f"to guess the criterion{'' if ' id ' in f' {shown.sentence} ' else ' (and never sees the id)'}: "
            "say what to judge",
            severity="warning",
            data=data,
        )
