"""A choice question with more options than single-letter labels: some get two-letter labels.

## What it does
Finds choice questions whose engine labels options past 26 with two letters (`AA`, `AB`, …):
SGLang `/v1/systemone` relabels every option of such a choice, llama.cpp's lev and llm2jev the
options past 26. The labels come from the engine table's label scheme for choices.

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
from auditor.pcd import LETTERS, two_letter_labels


@rule(
    code="PCD104",
    name="two-letter-labels",
    severity="warning",
    per_engine=True,
    applies_to="labels",
    needs_tokenizer=False,
    example_engine="sglang-systemone",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if site.question_kind != "choice":
        return
    scheme = row.labels_for("choice")
    relabelled = two_letter_labels(scheme, len(site.options))
    if not relabelled:
        return
    n = len(site.options)
    which = "every option gets" if len(relabelled) == n else f"options {relabelled[0] + 1} to {n} get"
    order = "; it reads the choice in two orders to cancel their priors" if row.order_probe else ""
    yield ctx.finding(
        f"{n} options: under {row.name} {which} two-letter labels (past {LETTERS} letters), whose "
        f"priors differ, so answers depend on option order{order}",
        option=relabelled[0],
        data={
            "engine": row.name,
            "scheme": scheme,
            "options": n,
            "two_letter": len(relabelled),
            "first": relabelled[0],
        },
    )
