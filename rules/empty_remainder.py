"""An option equals the options' common prefix, so it is scored by the closing quote.

## What it does
After the common prefix is hoisted into the suffix `  "<field>": "<prefix>`, an option that is
exactly the prefix has nothing left to score: its score is the probability of the closing-quote
token. The rule reports each such option.

## Why is this bad?
It is correct, but easy to misread: the option's probability is the model's wish to stop
typing after the prefix, not a judgement about the option. With `CANCEL`, `CANCELLED` and
`CANCEL_PENDING`, the suffix ends in `CANCEL`, and `CANCEL` wins only when the model would
rather close the string than continue it, which depends on how the other options continue.

## Example
```json
{"type": "object", "properties": {"status": {"enum": ["CANCEL", "CANCELLED", "CANCEL_PENDING"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"status": {"enum": ["CANCEL_NOW", "CANCELLED", "CANCEL_PENDING"]}}}
```
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from auditor.lint import FileModel, Finding, RuleContext, at_site, rule
from auditor.pcd import json_text


@rule(code="PCD006", name="empty-remainder", severity="info", scope="file", default=False,
       opt_in_reason="advisory: the closing quote is a distinct scored token, so the decision is still made")
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    # The common prefix is a string property, the same for every tokenizer: one finding, not one
    # per tokenizer.
    for site in ctx.sites:
        strings = [(i, json_text(o)) for i, o in enumerate(site.options) if isinstance(o, str)]
        if len(strings) < 2:
            continue
        prefix = os.path.commonprefix([t for _, t in strings])
        if not prefix:
            continue
        for index, text in strings:
            if text == prefix:
                message = (f"{text!r} equals the common prefix {prefix!r}: it is scored by the "
                           f"closing-quote token, i.e. the model's wish to stop after {prefix!r}")
                yield at_site(ctx, site).finding(message, option=index,
                                                 data={"option": site.options[index], "prefix": prefix})
