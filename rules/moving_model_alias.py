"""A decision request names its hosted model by an alias that moves, or names none and gets the
SDK's moving default.

## What it does
Reads the `model` of each decision request (and the model of a promptfoo `openai:decisions:`
provider) and looks it up in the alias table (`auditor/pcd/engines/aliases.toml`: per hosted
engine, the names its vendor repoints, the dated versions each has answered with, and the
sources, with the date they were read): `jev-latest`, `jev-preview`, an OpenAI `*-latest` or
`*-preview` name, under the hosted engine named with `--engine` (`jev`, `openai-decisions`).
Under an engine whose SDK sends a default model when the request names none (TypeSafe Jev:
`typesafe-sdk` sends `jev-latest`), a request without `model` is reported too. Under a local
engine (SGLang, llama.cpp, llm2jev), which serves the model it was started with whatever the
request names, and with no engine named (many Jev-compatible local servers take `jev-latest`
and ignore it), nothing is reported: name the hosted engine you call.

## Why is this bad?
An alias answers with whatever model the vendor points it at that day: `jev-latest` answered
with Jev 1.13 from 15 September 2026 and with Jev 1.14 from October 2026. The same request
then gets other probabilities, and thresholds tuned on last month's answers cut elsewhere,
with nothing changed in the team's code. A dated version keeps the answers reproducible until
the team moves it on purpose.

## Example
Under `--engine jev`:
```json
{"model": "jev-latest", "state": "Refund please.", "questions": {"refund": {"type": "noul",
  "instructions": "Does the customer ask for a refund?"}}}
```

## Use instead
```json
{"model": "jev-1.14.0", "state": "Refund please.", "questions": {"refund": {"type": "noul",
  "instructions": "Does the customer ask for a refund?"}}}
```

## How to fix it
Pin the dated version the results were measured with (`pcdlint suggest` offers the newest one
the alias table names), and move it on purpose, re-running the evaluation.

## How to silence it
A per-file-ignores entry with a JSON Pointer fragment, `"requests/*.json#/model" =
["PCD202"]`; a team that tracks the newest model on purpose passes `--ignore PCD202`.

## Source
`auditor/pcd/engines/aliases.toml`: typesafe-sdk 0.7.5 `constants.py` (`DEFAULT_MODEL =
"jev-latest"`) and `_schemas/models.py` (the response model "may differ from the alias
supplied"); OpenAI on aliases and snapshots (community.openai.com/t/1246138); the dated
versions' sources, each with the date it was read.

## Measured precision
On the real requests of `tests/data/decision-requests/` under the engine each file's repository
sends it to: 1 of 1 findings right (found 1 of the 2 expected; the other file is not read as a
request). Five more files name `jev-latest` but are sent to local Jev-compatible servers, which
ignore the name: with no engine named the rule is silent, so they raise nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import alias_engines, moving_alias, request_body, sdk_default

PROMPTFOO_PREFIX = "provider openai:decisions:"


def _model(site: Site, data) -> tuple[object, str, bool]:
    """(the request's model, its pointer, whether the request has the field)."""
    if site.request_source == "promptfoo":
        name = site.field.split(" › ", 1)[0]
        model = name[len(PROMPTFOO_PREFIX) :] if name.startswith(PROMPTFOO_PREFIX) else None
        return model, site.request_pointer.rsplit("/", 1)[0] + "/id", model is not None
    body = request_body(data, site)
    if body is not None and "model" in body:
        return body["model"], f"{site.request_pointer}/model", True
    return None, site.request_pointer, False


@rule(
    code="PCD202",
    name="moving-model-alias",
    severity="warning",
    per_engine=True,
    applies_to="labels",
    needs_tokenizer=False,
    fixes=True,
    example_engine="jev",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if site.question_index != 0 or site.request_shape not in row.shapes:
        return
    engines = [row.name]
    if row.name not in alias_engines(site.request_shape):
        return  # (a local engine, or none named: the name selects nothing)
    model, pointer, given = _model(site, ctx.file.document.data)
    if given and isinstance(model, str):
        alias = moving_alias(model, engines)
        if alias is None:
            return
        pin = alias.pin
        moves = (
            f"{alias.engine} repoints {model!r} at each release"
            if alias.why == "latest"
            else f"{model!r} is a preview name {alias.engine} repoints"
        )
        history = (
            "; it has answered with " + ", ".join(f"{v.version} (from {v.since})" for v in alias.versions)
            if alias.versions
            else ""
        )
        data: dict = {"model": model, "engine": alias.engine, "why": alias.why, "read": alias.read}
        if pin:
            data["pin"] = pin
            data["fix"] = {"kind": "set-model", "description": f"pin the model to {pin}", "model": pin}
        yield ctx.finding(
            f"{moves}{history}: answers can change with nothing changed here; "
            + (f"pin the dated version, e.g. {pin!r}" if pin else "pin a dated version")
            + f" (alias table read {alias.read})",
            pointer=pointer,
            data=data,
        )
        return
    if given:
        return
    default = sdk_default(row.name)
    if default is None:
        return
    alias = moving_alias(default.default, [row.name])
    if alias is None:
        return
    data = {"model": None, "engine": row.name, "sdk_default": default.default, "read": default.read}
    if alias.pin:
        data["pin"] = alias.pin
        data["fix"] = {"kind": "set-model", "description": f"name the model {alias.pin}", "model": alias.pin}
    yield ctx.finding(
        f"no model named: {default.sdk} then sends {default.default!r}, which {row.name} repoints at each "
        f"release; name a dated version" + (f", e.g. {alias.pin!r}" if alias.pin else ""),
        pointer=pointer,
        data=data,
    )
