"""Whether a flagged flaw decides a field's answer on this context, and the letter-bias tally.

These are measurements of a verify run (the exit code is derived from them), so they live in
the decoder; ``auditor.eval.verdicts`` turns them into sentences.
"""

from __future__ import annotations

from collections.abc import Mapping

from auditor.decoder.result import FieldResult
from auditor.shown import shown


def tied_top(field: FieldResult) -> list[int]:
    top = max(field.first_token_probs)
    return [index for index, p in enumerate(field.first_token_probs) if p == top]


def decision(field: FieldResult, labels: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """Does a flagged flaw change this field's answer on this context? And why, in one line.

    It does when the first-token scores of the top options are tied (the engine's tie-break
    decides, not the model), or when the first-token pick differs from the full-sequence pick.
    The line starts with the label of what it confirms: `labels` maps "collision" and
    "agreement" to the rule code that declares it (the caller reads the registry; the decoder
    names no rule), else the word itself.
    """
    labels = labels or {}
    if not field.flagged_codes:
        return False, ""
    first, full = field.first_token_pick, field.full_sequence_pick
    tied = tied_top(field)
    if len(tied) > 1:
        return True, (
            f"{labels.get('collision', 'collision')}: {len(tied)} options tie on their first token; a plain gather returns "
            f"{shown(field.options[first])}, full-sequence picks {shown(field.options[full])}"
        )
    if first != full:
        return True, (
            f"{labels.get('agreement', 'agreement')}: first-token picks {shown(field.options[first])}, full-sequence picks "
            f"{shown(field.options[full])}"
        )
    return False, f"first-token and full-sequence agree on {shown(field.options[first])}"


def letter_bias(fields: list[FieldResult]) -> dict:
    """How letter picks spread over the letters, and how many change when the legend is reversed."""
    scored = [f for f in fields if f.letter_pick is not None]
    if not scored:
        return {}
    forward: dict[str, int] = {}
    backward: dict[str, int] = {}
    flips = same_letter = agree = 0
    for f in scored:
        assert f.letter_pick is not None
        letter = chr(ord("A") + f.letter_pick)
        forward[letter] = forward.get(letter, 0) + 1
        agree += f.letter_pick == f.full_sequence_pick
        if f.letter_pick_reversed is not None:
            reversed_letter = len(f.options) - 1 - f.letter_pick_reversed
            name = chr(ord("A") + reversed_letter)
            backward[name] = backward.get(name, 0) + 1
            flips += f.letter_pick_reversed != f.letter_pick
            same_letter += reversed_letter == f.letter_pick
    last = sum(f.letter_pick == len(f.options) - 1 for f in scored)
    return {
        "fields": len(scored),
        "letters": dict(sorted(forward.items())),
        "letters_reversed_legend": dict(sorted(backward.items())),
        "last_letter": last,
        "flips_when_reversed": flips,
        "same_letter_both_orders": same_letter,
        "agree_with_full_sequence": agree,
    }
