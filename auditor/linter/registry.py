"""Rule metadata, validated when a rule module is imported, and automatic discovery.

A rule is one module in `rules/` (installed as `auditor.rules`): its docstring is its
documentation, with ruff's headings; `@rule(...)` on its `check` generator declares code, name,
default severity and options. Everything else (`pcdlint rules`, `explain`, SARIF rule metadata,
the HTML help) is derived from this registry, never listed by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

SEVERITIES = ("info", "warning", "error")
APPLIES_TO = ("option-names", "labels")  # the engine table's `scores` values
DEFAULT_REASON = "can change which option an engine returns, or make the schema unusable"
REQUIRED_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")
CODE_PATTERN = re.compile(r"^PCD\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
SECTION_PATTERN = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.DOTALL)


class RuleDefinitionError(Exception):
    """A rule module is malformed; raised at import so a broken rule fails loudly."""


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    scope: str  # "site": one check per (site, tokenizer); "file": once per file;
    # "suppressions": once per file after suppressions, given a suppressions.SuppressionUsage
    options: dict
    doc: str
    check: Callable = field(compare=False, repr=False)
    module: str = ""
    example_options: dict = field(default_factory=dict)  # options the doc examples assume
    per_engine: bool = False  # runs once per engine profile (--engine); findings name the engine
    example_engine: str = ""  # the engine profile the doc examples assume ("" = the default)
    internal: bool = False  # the engine's own code (PCD999), not a check in auditor.rules
    # What an engine must score for this rule to check a decision request's questions
    # (engine table column `scores`): "option-names" (the PCD rules: a schema's fields always,
    # a decision request's questions only under an engine that scores names) or "labels" (the
    # decision-request rules: a decision request's questions only, per decision engine)
    applies_to: str = "option-names"
    # whether the check reads the tokenizer; a rule that does not runs once per site, its
    # findings naming no tokenizer
    needs_tokenizer: bool = True
    # whether its findings carry `data.suggestions` renamings that `pcdlint suggest` offers (a
    # suggestion must clear them when the field is re-linted)
    suggests: bool = False
    # whether its findings carry `data.fix`, a design fix of a decision request (add an option,
    # set the model) that `pcdlint suggest` applies to a copy, re-lints and can write
    fixes: bool = False
    # On in the default rule set (like ruff's): the rules whose findings can change which option
    # a PCD engine returns, or make the schema unusable. An opt-in rule says why it is off.
    default: bool = True
    opt_in_reason: str = ""
    # A finding of this rule whose data says `"restates": true` adds nothing to the reported
    # finding of this rule code on the same field and tokenizer: it is folded into that one (its
    # data kept under the host's `folded`), so one problem is one line.
    folds_into: str = ""
    # What the rule needs and offers, read by the engine, suggest, verify and the reports (so no
    # module outside rules/ names a rule by code):
    reads: tuple[str, ...] = ()  # scoring text groups it reads beyond "core" (scoring.TEXT_GROUPS)
    letter_slots: bool = False  # reads a field's letter slots when the field has a problem
    option_limit: str = ""  # the option holding its cap on a field's options (windows past it)
    confirms: str = ""  # what `verify` can confirm of its findings: "collision" | "agreement"
    # whether the check reads only the engine's plan and losses, so it holds for an evaluation
    # harness's scorer too: it runs on evaluation-config label sets, under the harness's engines
    harness: bool = False
    # the parts of a decision question the check reads; a question read out of code with one of
    # them built at run time (Site.runtime: "options", "text", "name") is not checked by it
    needs: tuple[str, ...] = ("options", "text", "name")

    @property
    def summary(self) -> str:
        return self.doc.strip().splitlines()[0].strip()

    @property
    def sections(self) -> dict[str, str]:
        parts = SECTION_PATTERN.split(self.doc)
        return {title: body.strip() for title, body in zip(parts[1::2], parts[2::2])}

    def examples(self, section: str) -> list[str]:
        return JSON_BLOCK.findall(self.sections.get(section, ""))

    @property
    def doc_markdown(self) -> str:
        body = self.doc.strip().split("\n", 1)
        rest = body[1].strip() if len(body) > 1 else ""
        return f"# {self.code} {self.name}\n\n{self.summary}\n\n{rest}\n"


_RULES: dict[str, Rule] = {}


CONFIRMS = ("collision", "agreement")
READ_GROUPS = ("canonical", "normal", "lengths")
RUNTIME_PARTS = ("options", "text", "name")  # what a question read out of code may lack


def rule(
    *,
    code: str,
    name: str,
    severity: str,
    options: dict | None = None,
    scope: str = "site",
    example_options: dict | None = None,
    default: bool = True,
    opt_in_reason: str = "",
    per_engine: bool = False,
    example_engine: str = "",
    applies_to: str = "option-names",
    needs_tokenizer: bool = True,
    suggests: bool = False,
    fixes: bool = False,
    folds_into: str = "",
    reads: tuple[str, ...] = (),
    letter_slots: bool = False,
    option_limit: str = "",
    confirms: str = "",
    internal: bool = False,
    harness: bool = False,
    needs: tuple[str, ...] = ("options", "text", "name"),
) -> Callable[[Callable], Callable]:
    """Register the decorated `check` generator as a rule, validating its metadata now.

    `default=False` leaves the rule out of the default set (`extend-select` or `--select ALL`
    bring it in); such a rule must say why in `opt_in_reason`. `per_engine` rules run once per
    engine profile (`--engine`). `reads`, `letter_slots`, `suggests`, `fixes`, `option_limit` and
    `confirms` declare what the rule needs and offers (see Rule). `internal=True` (scope
    "engine") is the engine's own finding for a rule that raised: it has no check to run.
    """

    def register(check: Callable) -> Callable:
        module = sys.modules.get(check.__module__)
        doc = (module.__doc__ if module else None) or ""
        where = check.__module__
        if not CODE_PATTERN.match(code):
            raise RuleDefinitionError(f"{where}: code {code!r} is not PCD + 3 digits")
        if not NAME_PATTERN.match(name):
            raise RuleDefinitionError(f"{where}: name {name!r} is not kebab-case")
        if severity not in SEVERITIES:
            raise RuleDefinitionError(f"{where}: severity {severity!r} not in {SEVERITIES}")
        if scope not in ("site", "file", "suppressions") and not (internal and scope == "engine"):
            raise RuleDefinitionError(f"{where}: scope {scope!r} must be 'site', 'file' or 'suppressions'")
        if set(reads) - set(READ_GROUPS):
            raise RuleDefinitionError(
                f"{where}: reads {sorted(set(reads) - set(READ_GROUPS))} are not text groups {READ_GROUPS}"
            )
        if confirms and confirms not in CONFIRMS:
            raise RuleDefinitionError(f"{where}: confirms {confirms!r} not in {CONFIRMS}")
        if option_limit and option_limit not in (options or {}):
            raise RuleDefinitionError(f"{where}: option_limit {option_limit!r} is not an option")
        for other in _RULES.values():
            if confirms and other.module != where and other.confirms == confirms:
                raise RuleDefinitionError(f"{where}: {other.code} already confirms {confirms!r}")
            if internal and other.module != where and other.internal:
                raise RuleDefinitionError(f"{where}: {other.code} is already the internal rule")
        for other in _RULES.values():
            if other.module != where and (other.code == code or other.name == name):
                raise RuleDefinitionError(f"{where}: {code} {name} clashes with {other.module}")
        headings = SECTION_PATTERN.findall(doc)
        missing = [h for h in REQUIRED_SECTIONS if h not in headings]
        if missing:
            raise RuleDefinitionError(f"{where}: docstring lacks headings {missing}")
        if default == bool(opt_in_reason):
            raise RuleDefinitionError(
                f"{where}: an opt-in rule (default=False) needs opt_in_reason, "
                "and only an opt-in rule has one"
            )
        if folds_into and (not CODE_PATTERN.match(folds_into) or folds_into == code or scope != "site"):
            raise RuleDefinitionError(
                f"{where}: folds_into {folds_into!r} must be another rule's code (site rules only)"
            )
        if per_engine and scope != "site":
            raise RuleDefinitionError(f"{where}: only site rules can run per engine")
        if set(needs) - set(RUNTIME_PARTS):
            raise RuleDefinitionError(
                f"{where}: needs {sorted(set(needs) - set(RUNTIME_PARTS))} not in {RUNTIME_PARTS}"
            )
        if applies_to not in APPLIES_TO:
            raise RuleDefinitionError(f"{where}: applies_to {applies_to!r} not in {APPLIES_TO}")
        if applies_to == "labels" and scope != "site":
            raise RuleDefinitionError(f"{where}: a decision-request rule is a site rule")
        if example_engine:
            from auditor.pcd.engines.table import ENGINE_ROWS

            if example_engine not in ENGINE_ROWS or not per_engine:
                raise RuleDefinitionError(
                    f"{where}: example_engine {example_engine!r} is not an "
                    "engine profile of a per-engine rule"
                )
        unknown = set(example_options or {}) - set(options or {})
        if unknown:
            raise RuleDefinitionError(f"{where}: example_options {sorted(unknown)} are not options")
        _RULES[code] = Rule(
            code,
            name,
            severity,
            scope,
            dict(options or {}),
            doc,
            check,
            where,
            dict(example_options or {}),
            per_engine=per_engine,
            example_engine=example_engine,
            internal=internal,
            default=default,
            opt_in_reason=opt_in_reason,
            applies_to=applies_to,
            needs_tokenizer=needs_tokenizer,
            suggests=suggests,
            fixes=fixes,
            folds_into=folds_into,
            reads=tuple(reads),
            letter_slots=letter_slots,
            option_limit=option_limit,
            confirms=confirms,
            harness=harness,
            needs=tuple(needs),
        )
        check.rule_code = code  # type: ignore[attr-defined]  # lets a test find a check's rule
        return check

    return register


_loaded = False


def load_rules() -> dict[str, Rule]:
    """Import every module of `auditor.rules` once; returns code → Rule, sorted by code."""
    global _loaded
    if not _loaded:
        package = importlib.import_module("auditor.rules")  # discovery, not a layer edge
        for info in pkgutil.iter_modules(package.__path__, "auditor.rules."):
            importlib.import_module(info.name)
        _loaded = True
    return dict(sorted(_RULES.items()))


def internal_error_rule() -> Rule:
    """The engine's own finding for a rule that raised (declared once, in rules/)."""
    (found,) = (r for r in load_rules().values() if r.internal)
    return found


def confirming(what: str) -> Rule | None:
    """The rule whose findings `verify` confirms as `what` ("collision" or "agreement")."""
    return next((r for r in load_rules().values() if r.confirms == what), None)


def codes_where(predicate: Callable[[Rule], object]) -> frozenset[str]:
    """The codes of the rules whose declarations satisfy `predicate`."""
    return frozenset(code for code, r in load_rules().items() if predicate(r))


def default_codes() -> list[str]:
    """The default rule set, derived from each rule's `default` flag."""
    return [code for code, r in load_rules().items() if r.default]


def severity_rank(severity: str) -> int:
    return SEVERITIES.index(severity)
