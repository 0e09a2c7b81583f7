"""The field offers more options than a single constrained choice can hold.

## What it does
Counts a field's options against `max-options` (default 255, the documented cap of production
Choice questions and RLCD engines). When it is exceeded, the finding proposes a concrete
two-pass split: windows of at most `max-options` options, each with its own collision status
(a window hoists its own common prefix, so its buckets differ from the whole field's).

## Why is this bad?
Engines past the cap reject the schema at request time, truncate the option list, or fall back
to free generation; none of them is what the schema promises. A split into passes keeps every
option reachable, and checking each window's buckets shows whether the split is sound.

## Example
With `max-options = 16`:
```json
{"type": "object", "properties": {"code": {"enum": [
  "A000","A001","A002","A003","A004","A005","A006","A007","A008","A009","A010","A011",
  "A012","A013","A014","A015","A016","A017","A018","A019"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"code": {"enum": ["A000", "A001", "A002"]}}}
```

## Options
- `max-options` (int, default 255): the largest number of options one field may offer.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens, option_windows, scored_ids


@rule(
    code="PCD003",
    name="too-many-options",
    severity="error",
    options={"max-options": 255},
    example_options={"max-options": 16},
    option_limit="max-options",
)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    limit = int(ctx.options["max-options"])
    site = tokens.site
    n = len(site.options)
    if n <= limit:
        return
    count = math.ceil(n / limit)
    size = math.ceil(n / count)  # balanced windows
    windows = []
    for (start, _), part in zip(option_windows(n, limit), ctx.cache.windows(site, limit)):
        prefix, scored = scored_ids(part, tokens.tokenizer, ctx.cache)  # the window's own prefix hoisted
        sizes = Counter(scored).values()
        windows.append(
            {
                "first": start,
                "last": start + len(part.options) - 1,
                "options": len(part.options),
                "prefix": prefix,
                "distinct_tokens": len(sizes),
                "colliding_options": sum(size for size in sizes if size > 1),
            }
        )
    passes = 1 + math.ceil(math.log(count, limit)) if count > 1 else 1
    clean = sum(1 for w in windows if not w["colliding_options"])
    message = (
        f"{n} options exceed the limit of {limit}; split into {len(windows)} windows of "
        f"<= {size} options decided in {passes} passes ({clean} of {len(windows)} windows "
        f"free of first-token collisions)"
    )
    yield ctx.finding(message, data={"limit": limit, "options": n, "passes": passes, "windows": windows})
