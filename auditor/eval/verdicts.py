"""The verdict sentences of a verify run: what a field's measured scores say about the findings
the linter flagged on it (a collision confirmed or harmless, first-token and full-sequence picks
agreeing or not, letter scoring). Judged here, above the linter (which rule confirms what) and the
decoder (the measurements); auditor.reporting.verdict prints them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.linter.registry import CONFIRMS, confirming
from auditor.shown import shown

if TYPE_CHECKING:  # the decoder (and its HTTP client) is loaded only by a verify run
    from auditor.decoder.result import FieldResult, VerifyResult

MAX_LISTED = 5


def confirmation_labels() -> dict[str, str]:
    """What verify confirms ("collision", "agreement") → the code of the rule that declares it."""
    found = {what: confirming(what) for what in CONFIRMS}
    return {what: rule.code for what, rule in found.items() if rule is not None}


def _code(what: str) -> str:
    return confirmation_labels().get(what, what)


def _listing(options: list) -> str:
    listed = ", ".join(shown(option) for option in options[:MAX_LISTED])
    return listed if len(options) <= MAX_LISTED else f"{listed}, … ({len(options)} options)"


def _full(field: FieldResult, index: int) -> str:
    return f"{shown(field.options[index])} (p={field.full_sequence_probs[index]:.3f})"


def collision_verdict(field: FieldResult) -> str | None:
    if not field.collision_groups:
        if _code("collision") in field.flagged_codes:
            return f"{_code('collision')} not reproduced: with this model's tokenizer every option has its own scored token"
        return None
    probs = field.first_token_probs
    top = max(probs)
    tied = [index for index, p in enumerate(probs) if p == top]
    identical = "bit-identical" if field.ties_bit_identical else "NOT bit-identical (unexpected)"
    full_pick = field.full_sequence_pick
    if len(tied) > 1:
        inside = "inside" if full_pick in tied else "outside"
        return (
            f"{_code('collision')} confirmed: options {_listing([field.options[i] for i in tied])} got {identical} "
            f"first-token scores (p={top:.3f} each); a plain gather returns {shown(field.options[field.first_token_pick])}; "
            f"full-sequence scoring picks {_full(field, full_pick)}, {inside} the tie"
        )
    groups = "; ".join(_listing([field.options[i] for i in group]) for group in field.collision_groups)
    return (
        f"{_code('collision')}: collision present but harmless on this context: colliding options ({groups}) got {identical} "
        f"scores and lose to {shown(field.options[field.first_token_pick])} (p={top:.3f})"
    )


def agreement_verdict(field: FieldResult) -> str:
    first, full = field.first_token_pick, field.full_sequence_pick
    p_first = field.first_token_probs[first]
    if first == full:
        ranked = sorted(field.full_sequence_probs, reverse=True)
        margin = ranked[0] - ranked[1] if len(ranked) > 1 else ranked[0]
        return (
            f"{_code('agreement')}: first-token and full-sequence argmax agree on {shown(field.options[first])} "
            f"(first-token p={p_first:.3f}, full-sequence p={field.full_sequence_probs[full]:.3f}, "
            f"margin over runner-up {margin:.3f})"
        )
    gap = field.full_sequence_probs[full] - field.full_sequence_probs[first]
    return (
        f"{_code('agreement')} confirmed: first-token picks {shown(field.options[first])} (p={p_first:.3f}) but full-sequence "
        f"picks {_full(field, full)}; the first-token pick has full-sequence p={field.full_sequence_probs[first]:.3f} "
        f"(gap {gap:.3f})"
    )


def remap_verdict(field: FieldResult) -> str | None:
    if not field.letter_viable or field.letter_pick is None or field.letter_probs is None:
        return None
    letter = chr(ord("A") + field.letter_pick)
    agree = "agrees" if field.letter_pick == field.full_sequence_pick else "disagrees"
    line = (
        f"remap: letter scoring picks {letter} = {shown(field.options[field.letter_pick])} "
        f"(p={field.letter_probs[field.letter_pick]:.3f}); {agree} with full-sequence {_full(field, field.full_sequence_pick)}"
    )
    if field.letter_pick_reversed is not None:
        back = chr(ord("A") + len(field.options) - 1 - field.letter_pick_reversed)
        same = "the same value" if field.letter_pick_reversed == field.letter_pick else "a different value"
        line += f"; with the legend reversed it picks {back} = {shown(field.options[field.letter_pick_reversed])} ({same})"
    return line


def field_verdicts(field: FieldResult) -> list[str]:
    first, full = field.first_token_pick, field.full_sequence_pick
    lines = [
        f"first-token picks {shown(field.options[first])} (p={field.first_token_probs[first]:.3f}); "
        f"full-sequence picks {_full(field, full)}"
        + (
            ""
            if field.constrained_pick is None
            else f"; constrained decoding returns {shown(field.options[field.constrained_pick])}"
        )
    ]
    collision = collision_verdict(field)
    if collision:
        lines.append(collision)
    if _code("agreement") in field.flagged_codes or first != full:
        lines.append(agreement_verdict(field))
    remap = remap_verdict(field)
    if remap:
        lines.append(remap)
    for mismatch in field.tokenization_mismatches[:3]:
        lines.append(f"tokenization mismatch: {mismatch}")
    if len(field.tokenization_mismatches) > 3:
        lines.append(f"… {len(field.tokenization_mismatches) - 3} more tokenization mismatch(es)")
    if not field.prompt_cut_ok or field.noncanonical_options:
        where = [f"for {len(field.noncanonical_options)} option(s)"] if field.noncanonical_options else []
        where += [] if field.prompt_cut_ok else ["at the prompt/suffix boundary"]
        lines.append(
            f"warning: non-canonical cut {' and '.join(where)}: "
            "the scored tokens differ from the tokenization of the whole text"
        )
    return lines


def annotate(result: VerifyResult) -> VerifyResult:
    """Fill each field's verdict sentences (what its measured scores say about its findings)."""
    for field in result.fields:
        field.verdicts = field_verdicts(field)
    return result
