"""A choice question whose options leave an input that fits none of them no way out.

## What it does
Checks each choice question of a decision request (System One, OpenAI Decisions, SGLang
`/v1/decisions`) for an option an input can take when none of the others fits: an option
named or described as one of the `fallback-options` (`other`, `none`, `unknown`, `not
applicable`, `n/a`, and their equivalents in Spanish, Portuguese, Italian, French, German,
Dutch, Polish, Russian, Chinese, Japanese and Korean). Left alone: questions with two options (typed `true`/`false` values count as two);
answer keys of an evaluation item (`A`–`D`, whose answers are written in the question);
options that differ only by a number (`P1`–`P3`, `face_1`–`face_6`: a scale or a complete
enumeration); questions that ask for the best of the options (the next action, the most likely
cause: every input has a best one) or for a tone, sentiment or mood (every message has one,
and its options span a scale); and questions whose instructions or descriptions declare
that every input fits one option (`always one of`, `exactly one of these`, `every ticket is …`).

## Why is this bad?
Every decision engine normalises the answer over the options offered: SGLang and llama.cpp
take a softmax over the option labels, llm2jev over its label tokens, and the hosted engines
(TypeSafe Jev, OpenAI, Fireworks, Perplexity) return probabilities that sum to 1 over the
options. An input that fits none of them (a spam message routed among `billing`, `technical`
and `sales`) is still given one, often with a confident probability, and code that thresholds
on it acts. No engine differs here: the way out has to be in the request. JevLint-LE
(`nolindnaidoo/jevlint-le`, rule JEV004) counts a missing way out as the costliest design
mistake it measures.

## Example
```json
{"state": "Win a free cruise! Click here.", "questions": {"team": {"type": "choice",
  "instructions": "Which team should handle this ticket?",
  "criteria": {"billing": "Charges and refunds", "technical": "Bugs and outages",
  "sales": "Pricing and upgrades"}}}}
```

## Use instead
```json
{"state": "Win a free cruise! Click here.", "questions": {"team": {"type": "choice",
  "instructions": "Which team should handle this ticket?",
  "criteria": {"billing": "Charges and refunds", "technical": "Bugs and outages",
  "sales": "Pricing and upgrades", "other": "Fits none of the other teams"}}}}
```

## Options
`fallback-options` (list of strings): the names and description phrases that count as a way
out, replacing the defaults (`pcdlint explain PCD201` lists them with the configuration):
```toml
[tool.pcdlint.rules.no-way-out]
fallback-options = ["other", "none", "needs_human", "escalate"]
```

## How to fix it
Add an option for inputs that fit none of the others and route it to a person or a default
path (`pcdlint suggest` offers `other` where the engine's option limit leaves room), or say in
the instructions that every input is one of the options when that is true by construction.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD201"]`; `--ignore PCD201`
turns it off.

## Source
The engines' answer normalisation: SGLang `docs/docs/supported-models/decision_models.mdx`
("probabilities … summing to 1"), llama.cpp `tools/server/server-decision.cpp`, llm2jev 0.6.1
`scoring.py`, typesafe-sdk 0.7.5 `_schemas/models.py`; JevLint-LE JEV004.


## Measured precision
On the real requests of `tests/data/decision-requests/` (SOURCES.md, judged in JUDGEMENTS.md)
and the reach issue's code files, with no engine named: 14 of 14 findings right (10 on the
request files, 4 on code). Recall on the request files: 10 of the 19 questions reading them made
us expect; the 9 missed are in dialects pcdlint does not read (and one choice whose criteria
are a list, which has no options). Three exclusions (a tone; a next action; "what should we
do") came from findings judged wrong on these files, so the precision is measured on the files
the rule was tuned on.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import (
    FALLBACK_OPTIONS,
    answer_keys,
    asks_for_affect,
    asks_for_best,
    declares_exhaustive,
    fallback_index,
    numbered,
)

FALLBACK_NAME = "other"
FALLBACK_DESCRIPTION = "Fits none of the other options"


@rule(
    code="PCD201",
    name="no-way-out",
    severity="warning",
    applies_to="labels",
    needs_tokenizer=False,
    fixes=True,
    options={"fallback-options": list(FALLBACK_OPTIONS)},
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    distinct = {
        str(o).strip().casefold() if not isinstance(o, bool) else str(o).lower() for o in site.options
    }
    if site.question_kind != "choice" or len(distinct) <= 2 or answer_keys(site.options):
        return
    if asks_for_best(site.question_text) or asks_for_affect(site.question_text, site.question_name):
        return
    if numbered(site.options):
        return
    terms = ctx.options.get("fallback-options", FALLBACK_OPTIONS)
    if fallback_index(site.options, site.option_details, terms) is not None:
        return
    if declares_exhaustive([site.question_text, *site.option_details]):
        return
    names = ", ".join(str(o) for o in site.options[:6]) + (", …" if len(site.options) > 6 else "")
    described = any(isinstance(d, str) and d.strip() for d in site.option_details)
    taken = any(str(o).strip().casefold() == FALLBACK_NAME for o in site.options)
    data: dict = {"options": len(site.options)}
    if not taken:
        data["fix"] = {
            "kind": "add-option",
            "description": f"add a way out: option {FALLBACK_NAME!r}",
            "option": FALLBACK_NAME,
            "option_description": FALLBACK_DESCRIPTION if described else None,
        }
    yield ctx.finding(
        f"no way out: an input that fits none of {names} is still given one of them, with a "
        f"probability that can read confident; add an option such as {FALLBACK_NAME!r} for "
        "inputs that fit none, or say in the instructions that every input fits one",
        data=data,
    )
