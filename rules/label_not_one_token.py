"""A decision engine's answer label that is not one distinct token where the engine reads it.

## What it does
Under a decision engine named with `--engine`, renders each question of a decision request as
that engine does (SGLang: the question, its option lines and closing instruction as one user
message in the model's chat template with thinking off; llm2jev: `A. …` under `Options:` and an
assistant turn prefilled with `Answer:`; llama.cpp: the labels alone) and checks every label as
the engine checks it: SGLang, that `encode(text + label)` is `encode(text)` plus one id no other
label has; llama.cpp and Intern-Decision, each symbol alone; llama.cpp's lev, llm2jev and
SGLang's `/v1/systemone` above 26 options, which codes they skip. The chat template is the
tokenizer's own (Qwen's ChatML, a GGUF's, mistral-common's) or `--chat-template FILE`; with
none, the label is checked alone after a newline.

## Why is this bad?
The engine cannot read a label that is two tokens or shares a token with another: SGLang refuses
the request (400); llama.cpp's openjev and Intern-Decision refuse to serve the model at all;
llama.cpp's lev, llm2jev and SGLang's two-letter codes skip the code, so every later option gets
another label than a client expects and fewer options fit, and llm2jev refuses to start with
fewer labels than its option limit (255). Which labels fail depends on the tokenizer and
template, not the request.

## Example
```json
{"state": "ticket", "questions": {"topic": {"type": "choice", "instructions": "Which topic?",
 "criteria": {"t00": null, "t01": null, "t02": null, "t03": null, "t04": null, "t05": null,
  "t06": null, "t07": null, "t08": null, "t09": null, "t10": null, "t11": null, "t12": null,
  "t13": null, "t14": null, "t15": null, "t16": null, "t17": null, "t18": null, "t19": null,
  "t20": null, "t21": null, "t22": null, "t23": null, "t24": null, "t25": null, "t26": null,
  "t27": null, "t28": null, "t29": null, "t30": null, "t31": null, "t32": null, "t33": null,
  "t34": null, "t35": null, "t36": null, "t37": null, "t38": null, "t39": null, "t40": null,
  "t41": null, "t42": null, "t43": null, "t44": null}}}}
```

## Use instead
```json
{"state": "ticket", "questions": {"topic": {"type": "choice", "instructions": "Which topic?",
 "criteria": {"billing": null, "technical": null, "sales": null}}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import ChatTemplateError, check_labels, describe_failures, site_question

SHOWN = 4  # failing labels named in the message; data lists all


@rule(
    code="PCD106",
    name="label-not-one-token",
    severity="error",
    per_engine=True,
    applies_to="labels",
    example_engine="sglang-systemone",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    if row is None or row.label_check == "none" or ctx.tokenizer is None or not site.options:
        return
    try:
        report = check_labels(
            row, site_question(ctx.file.document.data, site), ctx.tokenizer, ctx.chat_template
        )
    except ChatTemplateError as error:
        yield ctx.finding(
            f"{error} — {row.name} cannot render this question",
            data={"engine": row.name, "template": getattr(ctx.chat_template, "origin", None)},
        )
        return
    if site.question_index > 0 and (
        report.check == "model-load" or (report.check == "startup" and report.short)
    ):
        return  # the tokenizer, not the question, fails: said once, at the request's first question
    failures = report.failures
    if not failures and not report.short:
        return
    data = {
        "engine": row.name,
        "check": report.check,
        "labels": list(report.labels),
        "template": report.template,
        "failures": [
            {"label": c.label, "option": c.option, "ids": list(c.ids), "tokens": list(c.pieces), "why": c.why}
            for c in failures
        ],
        "usable": report.usable,
        "needed": report.needed,
    }
    if report.note:
        data["note"] = report.note
    if report.short:
        if report.check == "startup":
            message = (
                f"{ctx.tokenizer.id} gives {row.name} only {report.usable} single-token labels "
                f"(it needs {report.needed}) — the engine refuses to start"
            )
        else:
            message = (
                f"{ctx.tokenizer.id} gives {row.name} labels for only {report.usable} options; this "
                f"question has {report.needed} — the engine refuses the request ({row.status})"
            )
        if report.note and report.check != "startup":
            message += f" ({report.note})"
        yield ctx.finding(message, data=data)
        return
    option = failures[0].option
    yield ctx.finding(
        f"label not one token under {row.name}: {describe_failures(report, SHOWN)}",
        data=data,
        option=option if option is not None and option < len(site.options) else None,
    )
