"""The chat prompt and each field's cut: suffix text, scored tokens, canonical checks.

The prompt is the model's chat template: a system line, a user turn holding the
context and a catalog of the fields, and the assistant turn opened at ``{``.
Each field is then continued by its own suffix, as shipped PCD engines do:

* string options: ``\\n  "<field>": "`` plus the options' common prefix (hoisted,
  ``os.path.commonprefix``); the scored token of an option is the first token of
  its remainder encoded alone, or the closing quote ``"`` when nothing remains;
* other JSON scalars (booleans, numbers, null): their JSON literal after
  ``\\n  "<field>": ``, cut where the canonical tokenization cuts, so booleans are
  scored as ``…":`` + `` true``.

Every cut is checked against the tokenization of the whole text.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass, field

SYSTEM_LINE = (
    "You fill in JSON objects. Reply with one JSON object whose keys are the listed fields, "
    "in order, each set to exactly one of its allowed values."
)
LETTER_INSTRUCTION = "Answer these fields with the letter of the chosen value instead of the value:"
STRING_CLOSE = '"'
LITERAL_CLOSE = ","


@dataclass
class FieldPlan:
    """How one field is scored: the suffix after ``{`` and each option's tokens."""

    name: str
    options: list
    kind: str  # "string" or "literal"
    prefix: str
    suffix_text: str
    suffix_ids: list[int]
    option_texts: list[str]
    option_ids: list[list[int]]
    close_id: int
    scored_ids: list[int]
    noncanonical_options: list[int] = field(default_factory=list)
    prompt_cut_ok: bool = True
    letter_ids: list[int] | None = None
    letter_note: str = ""

    @property
    def sequences(self) -> list[list[int]]:
        """Teacher-forced token sequence of every option, closing token included."""
        return [ids + [self.close_id] for ids in self.option_ids]

    def collision_groups(self) -> list[list[int]]:
        """Groups (of two or more option indices) that share their scored token."""
        groups: dict[int, list[int]] = {}
        for index, token in enumerate(self.scored_ids):
            groups.setdefault(token, []).append(index)
        return [members for members in groups.values() if len(members) > 1]


def field_head(name: str) -> str:
    """The JSON text that opens a field's value: ``\n  "<name>": ``."""
    return f"\n  {json.dumps(name, ensure_ascii=False)}: "


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def _option_list(options: list) -> str:
    return ", ".join(json.dumps(option, ensure_ascii=False) for option in options)


def catalog(fields) -> str:
    lines = ["Fields to fill, with their allowed values:"]
    for spec in fields:
        about = f" ({spec.description.strip()})" if spec.description.strip() else ""
        lines.append(f"- {spec.name}{about}: one of {_option_list(spec.options)}")
    return "\n".join(lines)


def letter_legend(fields, letter_fields: frozenset[str], reversed_order: bool = False) -> str:
    """The letter block appended after the catalog: ``A = "<option>"; B = …`` per letter field.

    ``reversed_order`` gives A to the last option: the same question with the letters
    permuted, to tell a letter (position) bias from a preference for the value.
    """
    lines = ["", LETTER_INSTRUCTION]
    for spec in fields:
        if spec.name in letter_fields:
            options = list(reversed(spec.options)) if reversed_order else list(spec.options)
            legend = "; ".join(
                f"{letter} = {json.dumps(option, ensure_ascii=False)}"
                for letter, option in zip(string.ascii_uppercase, options)
            )
            lines.append(f"- {spec.name}: {legend}")
    return "\n".join(lines)


def build_prompt(tokenizer, fields, context: str, letter_fields: frozenset[str] = frozenset(),
                 reversed_letters: bool = False) -> str:
    """Chat-templated prompt text ending with the opened JSON object ``{``.

    With ``letter_fields`` the letter legend follows the catalog at the end of the user turn,
    so the letter prompt shares every token of the plain prompt up to there (its scores
    continue the plain prompt's cache instead of a second full prefill).
    """
    user = f"{context.strip()}\n\n{catalog(fields)}"
    if letter_fields:
        user += "\n" + letter_legend(fields, letter_fields, reversed_letters)
    messages = [{"role": "system", "content": SYSTEM_LINE}, {"role": "user", "content": user}]
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    else:
        text = f"{SYSTEM_LINE}\n\nUser:\n{user}\n\nAssistant:\n"
    return text + "{"


def _is_string_field(options: list) -> bool:
    return all(isinstance(option, str) for option in options)


def _literal_cut(tokenizer, head: str, literals: list[str]) -> int:
    """Character offset in ``head`` of the last token boundary at or before every value."""
    cut = len(head)
    for literal in literals:
        ids = encode(tokenizer, head + literal)
        offset, best = 0, 0
        for token in ids:
            offset += len(tokenizer.decode([token]))
            if offset <= len(head):
                best = offset
        cut = min(cut, best)
    return cut


def plan_field(tokenizer, spec, prompt_text: str, prompt_ids: list[int]) -> FieldPlan:
    """Cut one field as shipped engines do and check the cut against whole-text tokenization."""
    head = field_head(spec.name)
    if _is_string_field(spec.options):
        prefix = os.path.commonprefix(spec.options)
        suffix_text = head + '"' + prefix
        texts = [option[len(prefix):] for option in spec.options]
        kind, close = "string", STRING_CLOSE
    else:
        literals = [json.dumps(option, ensure_ascii=False) for option in spec.options]
        cut = _literal_cut(tokenizer, head, literals)
        suffix_text, prefix = head[:cut], ""
        texts = [head[cut:] + literal for literal in literals]
        kind, close = "literal", LITERAL_CLOSE
    (close_id,) = encode(tokenizer, close)
    suffix_ids = encode(tokenizer, suffix_text)
    option_ids = [encode(tokenizer, text) if text else [] for text in texts]
    scored = [ids[0] if ids else close_id for ids in option_ids]
    noncanonical = [
        index
        for index, (text, ids) in enumerate(zip(texts, option_ids))
        if encode(tokenizer, suffix_text + text + close) != suffix_ids + ids + [close_id]
    ]
    prompt_cut_ok = encode(tokenizer, prompt_text + suffix_text) == prompt_ids + suffix_ids
    return FieldPlan(
        name=spec.name,
        options=list(spec.options),
        kind=kind,
        prefix=prefix,
        suffix_text=suffix_text,
        suffix_ids=suffix_ids,
        option_texts=texts,
        option_ids=option_ids,
        close_id=close_id,
        scored_ids=scored,
        noncanonical_options=noncanonical,
        prompt_cut_ok=prompt_cut_ok,
    )


def letter_slots(tokenizer, plan: FieldPlan) -> tuple[list[int] | None, str]:
    """Token ids of letters A, B, … for a remap, or None and the reason it is not viable.

    Viable: every needed letter encodes to one token that decodes back to itself, the
    tokens are distinct, and the letter stays that one token right after the opening quote.
    """
    count = len(plan.options)
    if plan.kind != "string":
        return None, "not a string enum"
    if count > len(string.ascii_uppercase):
        return None, f"{count} options exceed the 26 single letters"
    opened = encode(tokenizer, '": "')
    ids = []
    for letter in string.ascii_uppercase[:count]:
        alone = encode(tokenizer, letter)
        if len(alone) != 1 or tokenizer.decode(alone) != letter:
            return None, f"letter {letter} is not a single token"
        if encode(tokenizer, '": "' + letter) != opened + alone:
            return None, f"letter {letter} merges with the opening quote"
        ids.append(alone[0])
    if len(set(ids)) != count:
        return None, "letters share a token"
    return ids, "viable"
