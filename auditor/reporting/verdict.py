"""The plain-text report of a verify run (its verdict sentences: auditor.eval.verdicts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.shown import shown

if TYPE_CHECKING:  # the decoder (and its HTTP client) is loaded only by a verify run
    from auditor.decoder.result import VerifyResult


def verdict_block(result: VerifyResult) -> list[str]:
    """The closing verdict: which flagged findings decide the answer on this context."""
    deciding, harmless = result.deciding, result.harmless
    lines = [
        f"verdict: {len(deciding)} finding(s) decide the answer on this context" + (":" if deciding else "")
    ]
    lines.extend(f"  {f.name}: {f.decision}" for f in deciding)
    lines.append(
        f"{len(harmless)} flagged field(s) are present but harmless on this context"
        + (": " + ", ".join(f.name for f in harmless) if harmless else "")
    )
    mismatched = [f.name for f in result.fields if f.tokenization_mismatches]
    if mismatched:
        lines.append(
            f"tokenization: the server tokenized {len(mismatched)} field(s) differently from pcdlint: "
            + ", ".join(mismatched)
        )
    bias = result.letter_bias
    if bias:
        lines.append(
            f"letters: picks by letter {bias['letters']} over {bias['fields']} field(s); "
            f"{bias['flips_when_reversed']} pick(s) flip with the legend reversed, "
            f"{bias['same_letter_both_orders']} keep the same letter; "
            f"{bias['agree_with_full_sequence']} agree with full-sequence"
        )
    return lines


def format_text(result: VerifyResult) -> str:
    """Human-readable report of a verify run."""
    out = [
        f"model: {result.model} ({result.backend})",
        f"tokenizer: {result.tokenizer} (also used for linting)",
        f"device: {result.device}, dtype: {result.dtype}, prompt: {result.prompt_tokens} tokens",
        "forward passes: " if result.backend == "in-process" else "scored prompts: ",
    ]
    out[-1] += ", ".join(f"{stage} {count}" for stage, count in result.passes.items()) + (
        f" (total {sum(result.passes.values())})"
    )
    if result.server:
        out.append(
            "server: " + ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in result.server.items())
        )
    times = ([f"load {result.load_seconds:.2f}s"] if result.load_seconds is not None else []) + [
        f"{stage} {seconds:.2f}s" for stage, seconds in result.seconds.items()
    ]
    out.append("wall time: " + ", ".join(times))
    parity = result.parity_max_abs_diff
    if parity is not None:
        out.append(f"parity (shared-cache packed pass vs plain forwards, max |Δlogit|): {parity:.2e}")
    out.extend(f"note: {note}" for note in result.notes)
    for field in result.fields:
        flagged = f" [{', '.join(field.flagged_codes)}]" if field.flagged_codes else ""
        out.append("")
        out.append(f"{field.name}{flagged}: {len(field.options)} options")
        out.extend(f"  {line}" for line in field.verdicts)
        for flip in field.coupling_flips:
            out.append(
                f"  coupling: with {flip['given']}={shown(flip['value'])} written, answer flips "
                f"{shown(flip['before'])} -> {shown(flip['after'])}"
            )
    if result.coupling:
        flips = sum(len(entry["flips"]) for entry in result.coupling)
        out.append("")
        out.append(f"coupling: {len(result.coupling)} field(s) written in, {flips} flip(s)")
    out.append("")
    out.extend(verdict_block(result))
    return "\n".join(out)
