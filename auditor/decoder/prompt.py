"""The chat prompt, and each field's plan read off the one PCD scoring model (auditor.pcd).

The prompt is the model's chat template: a system line, a user turn holding the context and a
catalog of the fields, and the assistant turn opened with ``{`` and a newline
(``auditor.pcd.PREFILL_END``). Each field is then continued by the suffix the linter computes:
``  "<field>": "<prefix>`` for string options (the JSON-escaped options' common prefix hoisted),
the canonically cut literal head for booleans, numbers and null. Nothing here computes a
suffix, a prefix, a scored token or a letter slot; it only reads them from ``SiteTokens``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.decoder.errors import DecoderError
from auditor.pcd import PREFILL_END, SLOT_LETTERS, SiteTokens, collision_groups, field_head, letter_slots
from auditor.schema.sites import Site
from auditor.tokenizers import LoadedTokenizer

SYSTEM_LINE = (
    "You fill in JSON objects. Reply with one JSON object whose keys are the listed fields, "
    "in order, each set to exactly one of its allowed values."
)
LETTER_INSTRUCTION = "Answer these fields with the letter of the chosen value instead of the value:"


@dataclass
class FieldSpec:
    """One enum-like field: its options are JSON scalars in schema order."""

    name: str
    options: list
    description: str = ""
    flagged_codes: tuple[str, ...] = ()
    label: str = ""  # how the catalog names the field when its key is not unique (its path)
    array_depth: int = 0  # items of an array: the value is typed after `"<field>": [`


@dataclass
class PromptField:
    """One field as the prompt places it: how it is scored: the suffix after the prefill and each option's tokens."""

    name: str
    options: list
    kind: str  # "string" or "literal"
    prefix: str
    suffix_text: str
    suffix_ids: list[int]
    option_texts: list[str]
    option_ids: list[list[int]]
    sequences: list[list[int]]  # teacher-forced tokens of every option, closing token included
    scored_ids: list[int]
    noncanonical_options: list[int] = field(default_factory=list)
    prompt_cut_ok: bool = True
    letters: tuple[str, ...] = ()
    letter_ids: list[int] | None = None
    letter_note: str = ""
    array_depth: int = 0  # items of an array: typed after `"<field>": [`

    def collision_groups(self) -> list[list[int]]:
        """Groups (of two or more option indices) that share their scored token."""
        return collision_groups(self.scored_ids)


def preset_context(data: Any) -> str | None:
    """A PCD preset's own context (`context`, or `input.context`), when it has one."""
    for holder in (data, data.get("input") if isinstance(data, dict) else None):
        if isinstance(holder, dict) and isinstance(holder.get("context"), str):
            return holder["context"]
    return None


def load_fields(path: str | Path) -> tuple[list[FieldSpec], str]:
    """The fields of a schema or preset file, read by the linter's own parser, and its context."""
    from auditor.errors import InputFileError
    from auditor.schema.cache import analyse_file

    try:
        model = analyse_file(Path(path), str(path))
    except InputFileError as exc:
        raise DecoderError(str(exc)) from None
    return specs_for_sites(model.sites), preset_context(model.document.data) or ""


def specs_for_sites(sites: Iterable[Site], flagged: dict[str, set[str]] | None = None) -> list[FieldSpec]:
    """Fields to verify from the linter's sites (schema order). The key is the site's name, as
    the linter scored it; a name used twice is labelled with its path in the catalog.

    ``flagged`` maps a site pointer to the codes found there; they are carried, not read.
    """
    flagged = flagged or {}
    names = [s.name for s in sites]
    return [
        FieldSpec(
            name=s.name,
            options=list(s.options),
            description=s.description,
            flagged_codes=tuple(sorted(flagged.get(s.pointer, ()))),
            label=s.field if names.count(s.name) > 1 else "",
            array_depth=getattr(s, "array_depth", 0),
        )
        for s in sites
    ]


def _option_list(options: list) -> str:
    return ", ".join(json.dumps(option, ensure_ascii=False) for option in options)


def catalog(fields: Iterable[FieldSpec]) -> str:
    """The user turn's list of fields with their allowed values."""
    lines = ["Fields to fill, with their allowed values:"]
    for spec in fields:
        about = f" ({spec.description.strip()})" if spec.description.strip() else ""
        shown = f"{spec.name} [{spec.label}]" if spec.label else spec.name
        lines.append(f"- {shown}{about}: one of {_option_list(spec.options)}")
    return "\n".join(lines)


def letter_legend(
    fields: Iterable[FieldSpec], letter_fields: dict[str, tuple[str, ...]], reversed_order: bool = False
) -> str:
    """The letter block appended after the catalog: ``A = "<option>"; B = …`` per letter field.

    ``reversed_order`` gives the first letter to the last option: the same question with the
    letters permuted, to tell a letter (position) bias from a preference for the value.
    """
    lines = ["", LETTER_INSTRUCTION]
    for spec in fields:
        if spec.name in letter_fields:
            options = list(reversed(spec.options)) if reversed_order else list(spec.options)
            legend = "; ".join(
                f"{letter} = {json.dumps(option, ensure_ascii=False)}"
                for letter, option in zip(letter_fields[spec.name], options)
            )
            lines.append(f"- {spec.name}: {legend}")
    return "\n".join(lines)


def build_prompt(
    chat_tokenizer: Any,
    fields: Iterable[FieldSpec],
    context: str,
    letter_fields: dict[str, tuple[str, ...]] | None = None,
    reversed_letters: bool = False,
) -> str:
    """Chat-templated prompt text ending with the opened JSON object (PREFILL_END).

    With ``letter_fields`` the letter legend follows the catalog at the end of the user turn,
    so the letter prompt shares every token of the plain prompt up to there: its scores
    continue the plain prompt's cache instead of a second full prefill.
    """
    user = f"{context.strip()}\n\n{catalog(fields)}"
    if letter_fields:
        user += "\n" + letter_legend(fields, letter_fields, reversed_letters)
    messages = [{"role": "system", "content": SYSTEM_LINE}, {"role": "user", "content": user}]
    if getattr(chat_tokenizer, "chat_template", None):
        text = chat_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    else:
        text = f"{SYSTEM_LINE}\n\nUser:\n{user}\n\nAssistant:\n"
    return text + PREFILL_END


def written_field(name: str, value: Any, array_depth: int = 0) -> str:
    """A field as the model writes it after the prefill, up to the next field's suffix."""
    closing = "]" * array_depth
    return field_head(name, array_depth) + json.dumps(value, ensure_ascii=False) + closing + ",\n"


def plan_field(
    tokenizer: LoadedTokenizer, spec: FieldSpec, prompt_text: str, prompt_ids: list[int]
) -> PromptField:
    """Read one field's cut off the scoring model and check it against the prompt's tokens."""
    tokens = SiteTokens(spec, tokenizer)
    if tokens.mixed:
        raise DecoderError(
            f"field {spec.name!r} mixes string and non-string options; "
            "PCD scores them after different suffixes"
        )
    if tokens.has_strings:
        kind, suffix_text, suffix_ids = "string", tokens.suffix, list(tokens.suffix_ids)
    else:
        kind, suffix_text, suffix_ids = "literal", tokens.literal_suffix, list(tokens.literal_suffix_ids)
    slots = letter_slots(tokenizer, spec.name, len(spec.options))
    plan = PromptField(
        name=spec.name,
        options=list(spec.options),
        kind=kind,
        prefix=tokens.prefix,
        suffix_text=suffix_text,
        suffix_ids=suffix_ids,
        option_texts=[o.remainder for o in tokens.options],
        option_ids=[list(o.ids) for o in tokens.options],
        sequences=[list(tokens.sequence(o)) for o in tokens.options],
        scored_ids=[o.scored_id for o in tokens.options],
        noncanonical_options=tokens.noncanonical_options,
        prompt_cut_ok=tokenizer.encode(prompt_text + suffix_text) == prompt_ids + suffix_ids,
        array_depth=tokens.array_depth,
    )
    if kind != "string":
        plan.letter_note = "not a string enum"
    elif not slots.viable:
        reasons = [
            f"letter {letter} {slots.failures[letter]}"
            for letter in SLOT_LETTERS[: len(spec.options)]
            if letter in slots.failures
        ]
        plan.letter_note = (
            reasons[0]
            if reasons
            else (f"{len(spec.options)} options exceed the {len(SLOT_LETTERS)} single letters")
        )
    else:
        plan.letters = slots.letters[: len(spec.options)]
        plan.letter_ids = [tokenizer.encode(letter)[0] for letter in plan.letters]
        plan.letter_note = "viable"
    return plan


def letter_suffix(name: str, array_depth: int = 0) -> str:
    """The suffix a letter slot is scored after: the field head and the opening quote."""
    return field_head(name, array_depth) + '"'
