"""Design fixes of decision requests: the mechanical edit a design finding names in its data
(`data.fix`: add a way out to a choice, set the request's model, write a question's text),
applied to a copy of the
request and re-linted before `pcdlint suggest` offers it, and written as text edits that
change nothing else of the file.

A fix is offered only where it is unambiguous (the rule leaves `fix` out otherwise: an option
named `other` already there, no dated version to pin) and verified: the patched request,
linted with the default rule set under the same engine, no longer has the finding, and the
question it touched gains no warning or error it did not have.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.linter.context import Finding
from auditor.linter.registry import codes_where, load_rules, severity_rank
from auditor.schema.documents import Document, parse_document, resolve_pointer
from auditor.schema.sites import FileModel, Site, analyse

if TYPE_CHECKING:
    from auditor.linter.engine import LintRun

KINDS = ("add-option", "set-model", "set-text")
# the member that holds an option's name and the list it is in, per list shape
LIST_MEMBERS = {"openai-decisions": ("choices", "value"), "sglang-decisions": ("options", "name")}


def fix_codes() -> frozenset[str]:
    """The rules of the default set whose findings carry a design fix (`fixes=True`): those
    `pcdlint suggest` offers. An opt-in rule's fix (PCD200's) comes from `design_entries` on a
    run that selected the rule."""
    return codes_where(lambda r: r.fixes and r.default)


@dataclass(frozen=True)
class DesignFix:
    finding: Finding
    site: Site
    fix: dict


def _site(model: FileModel, pointer: str) -> Site | None:
    return next((s for s in model.sites if s.pointer == pointer), None)


def design_fixes(model: FileModel, findings: list[Finding]) -> list[DesignFix]:
    """The findings of this file that carry a design fix of a known kind, with their sites."""
    out = []
    for finding in findings:
        fix = finding.data.get("fix") if isinstance(finding.data, dict) else None
        site = _site(model, finding.site_pointer) or next(
            (s for s in model.sites if s.request_pointer == finding.site_pointer), None
        )
        if isinstance(fix, dict) and fix.get("kind") in KINDS and site is not None:
            out.append(DesignFix(finding, site, fix))
    return out


# --------------------------------------------------------------------------- the patched value


def _list_shape(site: Site) -> str:
    """The list shape a question's options are in (a promptfoo provider's are OpenAI's)."""
    return site.request_shape if site.request_shape in LIST_MEMBERS else "openai-decisions"


def _option(shape: str, fix: dict) -> dict:
    _, member = LIST_MEMBERS[shape]
    item = {member: fix["option"]}
    if fix.get("option_description"):
        item["description"] = fix["option_description"]
    return item


def patched(data: Any, fix: DesignFix) -> Any:
    """A copy of the document's value with the fix applied."""
    out = copy.deepcopy(data)
    site, spec = fix.site, fix.fix
    if spec["kind"] == "add-option":
        question = resolve_pointer(out, site.pointer)
        if site.request_shape == "systemone":
            question["criteria"][spec["option"]] = spec.get("option_description")
        else:
            shape = _list_shape(site)
            question[LIST_MEMBERS[shape][0]].append(_option(shape, spec))
    elif spec["kind"] == "set-text":
        resolve_pointer(out, site.pointer)[spec["key"]] = spec["text"]
    elif site.request_source == "promptfoo":
        provider = resolve_pointer(out, site.request_pointer.rsplit("/", 1)[0])
        provider["id"] = f"openai:decisions:{spec['model']}"
    else:
        resolve_pointer(out, site.request_pointer)["model"] = spec["model"]
    return out


def _problems(
    model: FileModel, site_pointer: str, engine: str | None, tokenizers: list, code: str
) -> dict[str, str]:
    """code → worst severity of the findings of the default rules and of the fixed rule `code`
    (an opt-in rule a caller selected) on one question (or its request)."""
    from auditor.linter.engine import LintOptions, lint_model
    from auditor.linter.registry import default_codes

    codes = sorted(set(default_codes()) | {code})
    options = LintOptions(select=codes, suggestions=False)
    if engine:
        options.engines = [engine]
    rules = [r for r in load_rules().values() if r.code in set(codes)]
    found: dict[str, str] = {}
    for f in lint_model(model, tokenizers, rules, options).findings:
        if (
            f.site_pointer == site_pointer
            or f.pointer.startswith(site_pointer + "/")
            or f.pointer == site_pointer
        ):
            if f.severity != "info" and severity_rank(f.severity) >= severity_rank(found.get(f.code, "info")):
                found[f.code] = f.severity
    return found


def verified(model: FileModel, fix: DesignFix, tokenizers: list) -> tuple[bool, list[str]]:
    """Whether the fix holds: the patched request's question has no finding of the fixed rule at
    the finding's severity or above, and gains no warning or error of another rule; with what
    is left there (`PCD200 warning`: writing a question's id as its text removes the error and
    leaves a question of two words)."""
    engine = fix.finding.engine
    where = fix.finding.site_pointer
    code = fix.finding.code
    before = _problems(model, where, engine, tokenizers, code)
    value = patched(model.document.data, fix)
    text = json.dumps(value, ensure_ascii=False, indent=2)
    after_model = analyse(parse_document(text.encode("utf-8"), ".json", model.path))
    after = _problems(after_model, where, engine, tokenizers, code)
    if code in after and severity_rank(after[code]) >= severity_rank(fix.finding.severity):
        return False, []
    holds = all(
        c == code or (c in before and severity_rank(level) <= severity_rank(before[c]))
        for c, level in after.items()
    )
    return holds, [f"{c} {level}" for c, level in sorted(after.items()) if c == code]


# --------------------------------------------------------------------------- text edits

Edit = tuple[int, int, str]  # replace text[begin:end] (begin == end: insert)


def _offsets(text: str, yaml_file: bool) -> list[int]:
    ends = re.compile("\r\n|\r|\n") if yaml_file else re.compile("\n")
    return [0] + [m.end() for m in ends.finditer(text)]


def _at(starts: list[int], line: int, column: int) -> int:
    return starts[line - 1] + column - 1


def _scalar(value: str, yaml_file: bool) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if yaml_file and re.fullmatch(r"[A-Za-z][A-Za-z0-9 _.,-]*[A-Za-z0-9.]", value):
        import yaml

        if yaml.safe_load(value) == value:
            return value
    return text


def text_edits(document: Document, fix: DesignFix, yaml_file: bool) -> list[Edit] | None:
    """The edits that write the fix into the file's text, or None where it cannot be written
    without guessing the file's layout (a flow mapping in YAML, an empty list)."""
    text, site, spec = document.text, fix.site, fix.fix
    starts = _offsets(text, yaml_file)
    if spec["kind"] == "set-model":
        if site.request_source == "promptfoo":
            pointer, value = (
                site.request_pointer.rsplit("/", 1)[0] + "/id",
                f"openai:decisions:{spec['model']}",
            )
        else:
            pointer, value = f"{site.request_pointer}/model", spec["model"]
        body = resolve_pointer(document.data, pointer.rsplit("/", 1)[0])
        if isinstance(body, dict) and pointer.rsplit("/", 1)[1] in body:
            span = document.span(pointer)
            return [
                (
                    _at(starts, span.line, span.column),
                    _at(starts, span.end_line, span.end_column),
                    _scalar(value, yaml_file),
                )
            ]
        if yaml_file:
            return None
        open_at = _at(starts, *document.span(site.request_pointer)[:2])
        if text[open_at : open_at + 1] != "{":
            return None
        return [(open_at + 1, open_at + 1, f'"model": {json.dumps(value)}, ')]
    if spec["kind"] == "set-text":
        return _text_edits(document, fix, yaml_file, starts)
    # add-option: after the last option, copying the layout between the last two
    if not site.option_pointers:
        return None
    if site.request_shape == "systemone":
        keys = [document.key_span(p) for p in site.option_pointers]
        values = document.spans(site.option_pointers)
        last_end = _at(starts, values[-1].end_line, values[-1].end_column)
        name, described = spec["option"], spec.get("option_description")
        if yaml_file:
            if (
                text[
                    _at(starts, keys[-1].line, keys[-1].column) - 1 : _at(
                        starts, keys[-1].line, keys[-1].column
                    )
                ]
                in "{,"
            ):
                return None  # (a flow mapping)
            indent = " " * (keys[-1].column - 1)
            entry = f"{name}: {_scalar(described, True) if described else 'null'}"
            at = _block_end(text, starts, keys[-1].line, keys[-1].column - 1)
            return [(at, at, f"\n{indent}{entry}")]
        if len(keys) >= 2:
            between = text[
                _at(starts, values[-2].end_line, values[-2].end_column) : _at(
                    starts, keys[-1].line, keys[-1].column
                )
            ]
        else:
            between = ", "
        entry = f"{json.dumps(name, ensure_ascii=False)}: {json.dumps(described, ensure_ascii=False)}"
        return [(last_end, last_end, f"{between}{entry}")]
    shape = _list_shape(site)
    key, _ = LIST_MEMBERS[shape]
    items = document.spans([f"{site.pointer}/{key}/{i}" for i in range(len(site.options))])
    item = _option(shape, spec)
    last_end = _at(starts, items[-1].end_line, items[-1].end_column)
    if yaml_file:
        line_start = starts[items[-1].line - 1]
        dash = text.rfind("-", line_start, _at(starts, items[-1].line, items[-1].column))
        if dash < 0:
            return None
        indent = " " * (dash - line_start)
        inner = " " * (_at(starts, items[-1].line, items[-1].column) - dash)
        lines = [f"{k}: {_scalar(v, True)}" for k, v in item.items()]
        body = f"\n{indent}-{inner[1:] or ' '}" + f"\n{indent}{inner}".join(lines)
        at = _block_end(text, starts, items[-1].line, dash - line_start)
        return [(at, at, body)]
    between = ", "
    if len(items) >= 2:
        between = text[
            _at(starts, items[-2].end_line, items[-2].end_column) : _at(
                starts, items[-1].line, items[-1].column
            )
        ]
    return [(last_end, last_end, f"{between}{json.dumps(item, ensure_ascii=False)}")]


def _text_edits(document: Document, fix: DesignFix, yaml_file: bool, starts: list[int]) -> list[Edit] | None:
    """Write a question's text: over its value where it has one, else as the question's first
    member (JSON: after its `{`; YAML: a line above its first member, at that member's indent)."""
    text, site, spec = document.text, fix.site, fix.fix
    key, value = spec["key"], spec["text"]
    question = resolve_pointer(document.data, site.pointer)
    if not isinstance(question, dict) or not question:
        return None
    if key in question:
        span = document.span(f"{site.pointer}/{key}")
        begin = _at(starts, span.line, span.column)
        end = _at(starts, span.end_line, span.end_column)
        return [(begin, end, _scalar(value, yaml_file))]
    if not yaml_file:
        open_at = _at(starts, *document.span(site.pointer)[:2])
        if text[open_at : open_at + 1] != "{":
            return None
        return [(open_at + 1, open_at + 1, f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}, ")]
    first = next(iter(question))
    span = document.key_span(f"{site.pointer}/{first}")
    begin = _at(starts, span.line, span.column)
    if text[starts[span.line - 1] : begin].strip():
        return None  # (a flow mapping, or a member sharing its line)
    return [(begin, begin, f"{key}: {_scalar(value, True)}\n{' ' * (span.column - 1)}")]


def _block_end(text: str, starts: list[int], line: int, indent: int) -> int:
    """Where the YAML block that starts on `line` (1-based) at `indent` ends: after its last
    line that is more indented than it (blank lines inside it kept), before that line's end."""
    end_line = line
    for number in range(line + 1, len(starts) + 1):
        begin = starts[number - 1]
        stop = starts[number] if number < len(starts) else len(text)
        row = text[begin:stop].rstrip("\r\n")
        if not row.strip():
            continue
        if len(row) - len(row.lstrip(" ")) <= indent:
            break
        end_line = number
    begin = starts[end_line - 1]
    stop = starts[end_line] if end_line < len(starts) else len(text)
    return begin + len(text[begin:stop].rstrip("\r\n"))


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with the edits made (none may overlap another)."""
    out, cursor = [], 0
    for begin, end, value in sorted(edits):
        out.append(text[cursor:begin])
        out.append(value)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def design_entries(run: LintRun, tokenizers: list) -> list[dict]:
    """One `pcdlint suggest` entry per design finding of the run (`fix`: what the edit does and
    whether the patched request re-lints clean)."""
    entries = []
    for result in run.files:
        for fix in design_fixes(result.model, result.findings):
            if fix.finding.severity == "info":
                continue
            holds, left = verified(result.model, fix, tokenizers)
            entries.append(
                {
                    "path": fix.finding.path,
                    "pointer": fix.finding.site_pointer,
                    "field": fix.finding.field,
                    "line": fix.finding.line,
                    "tokenizer": None,
                    "engine": fix.finding.engine
                    or (run.decision_engines[0].name if run.decision_engines else None),
                    "codes": [fix.finding.code],
                    "suggestions": [],
                    "fix": {**fix.fix, "verified": holds, "remaining": left},
                }
            )
    return entries


def write_edits(run: LintRun, entries: list[dict], yaml_file: bool) -> list[Edit]:
    """The text edits of the verified design fixes among `entries` (one file's run)."""
    [result] = run.files
    wanted = {(e["pointer"], e["codes"][0]) for e in entries if e.get("fix", {}).get("verified")}
    edits: list[Edit] = []
    for fix in design_fixes(result.model, result.findings):
        if (fix.finding.site_pointer, fix.finding.code) in wanted:
            found = text_edits(result.model.document, fix, yaml_file)
            edits.extend(found or ())
    return edits
