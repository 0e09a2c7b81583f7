"""Options whose scored remainder spans more than one token.

## What it does
After the common prefix is hoisted into the suffix, each option's remainder is encoded alone.
The rule reports options whose remainder is two or more tokens, with their token pieces.

## Why is this bad?
First-token scoring reads only the first piece: `MEDIUM` is `M` + `EDIUM` under Qwen2.5, so
the engine scores the model's wish to write `M`, which `MAYBE` or `MANUAL` would share. The
rest of the option never influences the decision, and a model that prefers `MEDIUM` only
after seeing `EDIUM` is never asked.

When the field's only risk is a first-token collision that PCD001 reports on the same field and
tokenizer, this finding adds nothing to that one: it is folded into it (the PCD001 finding's
`data.folded` keeps this finding's message and multi-token list), so one problem is one line.

Severity follows the consequence. When every option still has a scored token of its own,
the decision is still made between distinguishable options; only the probabilities are
approximate, and the finding is `info`. It is a `warning` when the field also has a
first-token collision, or when one option's scored piece is a proper prefix of another
option's text (`N` for `NEGATIVE` also begins `NEUTRAL`), so the piece's probability stands
for more than one option. Measured with `pcdlint verify` (SmolLM2-135M and its tokenizer, the
own contexts of the support_triage, code_security and spam_email presets, 32 fields with this
finding): first-token and full-sequence argmax disagreed on 4 of the 8 fields with either
condition (50 %), and on 5 of the 24 with neither (21 %): info does not mean exact.

## Example
```json
{"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"risk": {"enum": ["low", "medium", "high"]}}}
```
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens

COLLISION_RISK = "the field also has a first-token collision"


def disagreement_risks(tokens: SiteTokens) -> list[str]:
    """Why first-token and full-sequence scoring may pick different options here; [] when the
    first pieces still tell every option apart and none can stand for another."""
    risks = []
    if tokens.collisions:
        risks.append(COLLISION_RISK)
    strings = [o for o in tokens.options if o.is_string and o.ids]
    remainders = [o.remainder for o in strings]
    scored_ids = [o.scored_id for o in strings]
    # the remainders in sorted order: those a piece begins are one run of it, from its bisection
    order = sorted(range(len(strings)), key=remainders.__getitem__)
    rests = [remainders[k] for k in order]
    piece = tokens.tokenizer.piece
    # Whether an option's piece begins another option (not one scored by the same token, which
    # is in a collision bucket: PCD001 says that) depends on its scored token alone: each
    # distinct token is looked at once, in the order of its first option, and the first
    # option scored by the first token that begins another is the one named.
    for token in dict.fromkeys(scored_ids):
        scored = piece(token)
        other = None  # the first option, in schema order, that the piece begins and is not
        for at in range(bisect_left(rests, scored), len(rests)):
            rest = rests[at]
            if not rest.startswith(scored):
                break
            k = order[at]
            if rest != scored and scored_ids[k] != token and (other is None or k < other):
                other = k
        if other is not None:
            option = strings[scored_ids.index(token)]
            risks.append(
                f"{option.text!r} is scored by {scored!r}, which also begins {strings[other].text!r}"
            )
            break
    return risks


@rule(
    code="PCD002",
    name="multi-token-option",
    severity="warning",
    folds_into="PCD001",
    suggests=True,
    confirms="agreement",
)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    multi = tokens.multi_token
    if not multi:
        return
    risks = disagreement_risks(tokens)
    first = multi[0]
    pieces = tokens.pieces(first)
    # (a literal — number, boolean, null — is scored after the bare suffix: no prefix before it)
    shown = (
        first.text
        if not tokens.prefix or not first.is_string
        else f"{first.text} (after prefix {tokens.prefix!r})"
    )
    example = (
        f"{shown} is {len(pieces)} tokens, {' + '.join(pieces)}: first-token scoring reads only {pieces[0]!r}"
    )
    count = f"{len(multi)} of {len(tokens.options)} options span" if len(multi) > 1 else "1 option spans"
    message = f"{count} more than one token; {example}"
    # a risk of its own (a piece that begins another option) is worth its line; the collision
    # alone only restates PCD001's finding on this field, and folds into it
    own = [risk for risk in risks if risk != COLLISION_RISK]
    if risks:
        message += f"; {(own or risks)[0]}, so first-token and full-sequence scoring may disagree"
    else:
        message += "; every option still has a distinct scored token, so the probability is approximate"
    data = {"risks": risks, "prefix": tokens.prefix, "restates": bool(risks) and not own}
    if ctx.details:  # per-option list: only outputs that show finding data want it
        data["multi_token_options"] = [
            {"option": o.value, "token_ids": list(o.ids), "pieces": tokens.pieces(o)} for o in multi
        ]
    if ctx.suggestions:
        data["suggestions"] = ctx.suggest(tokens)
    # By consequence: a warning when the decision may come out differently, else info. A
    # configured severity (ctx.severity differs from the rule's) is kept either way.
    severity = ctx.severity if risks or ctx.severity != ctx.rule.severity else "info"
    yield ctx.finding(message, data=data, option=first.index, severity=severity)
