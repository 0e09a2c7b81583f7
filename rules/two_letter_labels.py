"""A choice question with more options than single-letter labels: some get two-letter labels.

## What it does
Finds choice questions whose engine labels options past 26 with two letters (`AA`, `AB`, …):
SGLang `/v1/systemone` relabels every option of such a choice, llama.cpp's lev and llm2jev the
options past 26. The labels are the ones the engine really uses with the tokenizer (and chat
template) named: the engine's rendering family keeps only the codes that are one token where it
reads them, so a skipped code is never named and the message gives the first and last
two-letter label in use. Without a tokenizer every code of the scheme counts as kept.

## Why is this bad?
Two-letter labels include common words (`AM`, `IT`, `NO`) and have unequal priors, so the
answer depends on the options' order; SGLang's docs warn of it, and llama.cpp's lev shows the
choice in two orders and averages to cancel it. Under `sglang-systemone` a choice above 26
options also needs a tokenizer and chat template that support it, else it is refused.

## Example
Under `--engine sglang-systemone`:
```json
{"state": "s", "questions": {"code": {"type": "choice", "instructions": "Which code?", "criteria": {
  "c01": null, "c02": null, "c03": null, "c04": null, "c05": null, "c06": null, "c07": null,
  "c08": null, "c09": null, "c10": null, "c11": null, "c12": null, "c13": null, "c14": null,
  "c15": null, "c16": null, "c17": null, "c18": null, "c19": null, "c20": null, "c21": null,
  "c22": null, "c23": null, "c24": null, "c25": null, "c26": null, "c27": null}}}}
```

## Use instead
Split the choice into two passes of at most 26 options (a group, then an option within it):
```json
{"state": "s", "questions": {"group": {"type": "choice", "instructions": "Which group?", "criteria": {
  "c01-c13": null, "c14-c27": null}}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import LETTERS, ChatTemplateError, question_labels, site_question, two_letter_options


@rule(
    code="PCD104",
    name="two-letter-labels",
    severity="warning",
    per_engine=True,
    applies_to="labels",
    example_engine="sglang-systemone",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if site.question_kind != "choice" or len(site.options) <= LETTERS:
        return
    try:
        question = site_question(ctx.file.document.data, site)
        labels = question_labels(row, question, ctx.tokenizer, ctx.chat_template)
    except ChatTemplateError:
        return  # (PCD106 says the template cannot render the question)
    relabelled = two_letter_options(labels)
    if not relabelled:
        return
    n = len(site.options)
    first, last = relabelled[0], relabelled[-1]
    which = "every option gets" if len(relabelled) == n else f"options {first + 1} to {last + 1} get"
    codes = [labels[i].strip() for i in relabelled]
    order = "; it reads the choice in two orders to cancel their priors" if row.order_probe else ""
    yield ctx.finding(
        f"{n} options: under {row.name} {which} two-letter labels ({codes[0]} … {codes[-1]}, past "
        f"{LETTERS} letters), whose priors differ, so answers depend on option order{order}",
        option=first,
        data={
            "engine": row.name,
            "scheme": row.labels_for("choice"),
            "options": n,
            "two_letter": len(relabelled),
            "first": first,
            "labels": codes,
        },
    )
