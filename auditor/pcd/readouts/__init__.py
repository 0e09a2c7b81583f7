"""How each decision engine shows a question to its model and reads the answer label: one module
per rendering family, named by the engine table's `prompt` column (`sglang-chat` →
`sglang_chat.py`), chosen for an engine by its row. The linter (PCD104, PCD106) and the decoder
(the in-process llm2jev) call the same module, so the decoder's parity with a live server covers
the linter's renderer too.

A family module provides what `base.Readout` names: `PROMPT`, `SCHEMES` (the label schemes it
introduces), `CHAT_TEMPLATE`, and `labels`, `render`, `check`, `question_shown`. Adding a family
is one engine-table row naming it in `prompt` and one module here; nothing lists the families:
they are read from the table when this package is imported, and a row whose family has no
module, a module that names another family, or a label scheme no family defines fails then,
loudly.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, cast

from auditor.pcd.chat import ChatTemplateError
from auditor.pcd.engines.table import LABEL_COLUMN, EngineRow, EngineTableError, decision_engines, row_module
from auditor.pcd.readouts import base
from auditor.pcd.readouts.base import (
    CONSEQUENCES,
    LETTERS,
    DecisionQuestion,
    LabelCheck,
    LabelReport,
    QuestionShown,
    Readout,
    RenderedPrompt,
    RenderError,
    Scheme,
    added_after,
    decision_question,
    describe_failures,
    label_context,
    request_state,
    site_question,
)
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate


def _load(rows: list[EngineRow]) -> dict[str, Readout]:
    """Each `prompt` value the decision rows name, with its module (in table order)."""
    out: dict[str, Readout] = {}
    for row in rows:
        if row.prompt in out:
            continue
        module: Any = row_module(__name__, row, "prompt")
        if getattr(module, "PROMPT", None) != row.prompt:
            raise EngineTableError(f"{module.__name__}.PROMPT must be {row.prompt!r}")
        out[row.prompt] = cast(Readout, module)
    return out


def _schemes(families: dict[str, Readout], rows: list[EngineRow]) -> dict[str, Scheme]:
    """Every label scheme: the shared alphabets and each family's own (a name defined twice,
    or a row naming a scheme neither its family nor the shared ones define, fails)."""
    out = dict(base.SCHEMES)
    for prompt, family in families.items():
        for name, scheme in family.SCHEMES.items():
            if name in out or name != scheme.name:
                raise EngineTableError(
                    f"label scheme {name!r} of the {prompt} family is defined twice or misnamed"
                )
            out[name] = scheme
    for row in rows:
        own = families[row.prompt].SCHEMES
        for column in LABEL_COLUMN.values():
            scheme = getattr(row, column)
            if scheme not in own and scheme not in base.SCHEMES:
                raise EngineTableError(
                    f"engines.toml: engine {row.name!r} {column} {scheme!r} is no scheme of the {row.prompt} "
                    f"family ({', '.join(sorted({*own, *base.SCHEMES}))})"
                )
    return out


READOUTS: MappingProxyType[str, Readout] = MappingProxyType(_load(decision_engines()))
SCHEMES: MappingProxyType[str, Scheme] = MappingProxyType(_schemes(dict(READOUTS), decision_engines()))


def readout(row: EngineRow) -> Readout:
    """The family module that renders for `row`'s engine."""
    return READOUTS[row.prompt]


def _question(question: DecisionQuestion | Any) -> DecisionQuestion:
    return question if isinstance(question, DecisionQuestion) else decision_question(question)


def labels_for(scheme: str, n: int, tokenizer: LoadedTokenizer | None = None, context: str = "") -> list[str]:
    """The labels `scheme` gives n options, in order, as the engine scores them; fewer than n
    where the scheme runs out. Skipping schemes need the tokenizer (and the prompt text their
    family checks codes after, `context`) to know which codes they keep; without one every code
    counts as kept."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown label scheme {scheme!r}")
    return SCHEMES[scheme].labels(n, tokenizer, context)


def question_labels(
    row: EngineRow,
    question: DecisionQuestion | Any,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None = None,
) -> list[str]:
    """The labels `row`'s engine reads for the question's options (a DecisionQuestion, or a
    decision site), in option order: fewer where the tokenizer leaves it too few codes."""
    return readout(row).labels(row, _question(question), tokenizer, chat_template)


def render_prompt(
    row: EngineRow,
    question: DecisionQuestion | Any,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None = None,
) -> RenderedPrompt:
    """The prompt `row`'s engine renders for `question`, and the labels it reads after it."""
    return readout(row).render(row, _question(question), tokenizer, chat_template)


def check_labels(
    row: EngineRow,
    question: DecisionQuestion | Any,
    tokenizer: LoadedTokenizer,
    chat_template: ChatTemplate | None = None,
) -> LabelReport:
    """Whether every label `row`'s engine gives `question` is one distinct token where the
    engine reads it, checked as that engine checks it (each family's module says how)."""
    return readout(row).check(row, _question(question), tokenizer, chat_template)


def question_shown(
    row: EngineRow, question: DecisionQuestion | Any, chat_template: ChatTemplate | None = None
) -> QuestionShown:
    """What `row`'s engine shows its model of the question's text (None: none at all), and one
    sentence saying so: rendered where pcdlint renders the engine's prompt, the engine's
    documented behaviour where it does not."""
    return readout(row).question_shown(row, _question(question), chat_template)


def renders_in_chat_template(row: EngineRow) -> bool:
    """Whether `row`'s engine renders questions in the model's chat template."""
    return row.is_decision and readout(row).CHAT_TEMPLATE


def two_letter_options(labels: list[str]) -> list[int]:
    """The options (indexes) whose label is two letters (a leading space aside)."""
    return [i for i, label in enumerate(labels) if len(label.strip()) == 2]


__all__ = [
    "CONSEQUENCES",
    "LETTERS",
    "READOUTS",
    "SCHEMES",
    "ChatTemplateError",
    "DecisionQuestion",
    "LabelCheck",
    "LabelReport",
    "QuestionShown",
    "Readout",
    "RenderError",
    "RenderedPrompt",
    "Scheme",
    "added_after",
    "check_labels",
    "decision_question",
    "describe_failures",
    "label_context",
    "labels_for",
    "question_labels",
    "question_shown",
    "readout",
    "render_prompt",
    "renders_in_chat_template",
    "request_state",
    "site_question",
    "two_letter_options",
]
