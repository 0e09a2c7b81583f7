"""Find the label sets of evaluation-harness configs and turn each into a site.

An evaluation harness scores a model by a closed set of labels, each harness in its own way;
a literal label set in its config is a decision pcdlint can check under that harness's scorer
(an engine-table row of kind "harness", auditor/pcd/engines/engines.toml). Three configs, one
`Recogniser` row each in `RECOGNISERS`:

- openai/evals model-graded specs (`evals/registry/modelgraded/*.yaml`, read by
  `evals/elsuite/modelgraded/base.py` ModelGradedSpec): `{NAME: {"prompt", "choice_strings",
  "choice_scores", "eval_type", "input_outputs"}}`; `choice_strings` is a list, or a string with
  one choice per character (`"ABCDE"`, `"12345"`: `get_choice_strings` iterates it), or
  `from_n*` (made from a run-time `n`: not literal). The grader's generated text is matched
  against the choices (`get_choice`): scored by `openai-evals-classify`.
- lm-evaluation-harness task YAML (`lm_eval/tasks/**.yaml`, `lm_eval/config/task.py`
  TaskConfig): `output_type: multiple_choice` with a literal `doc_to_choice` list; each choice
  is scored as the continuation `target_delimiter + choice` (default `" "`): by `lm-eval-acc`
  and `lm-eval-acc-norm`, as its `metric_list` asks (both when it names none: the default
  metrics of multiple_choice). A template (`"{{choices}}"`), a column name or a `!function`
  tag is no literal label set: a note, not linted.
- alpaca_eval evaluator configs (`alpaca_eval/evaluators_configs/*/configs.yaml`): `{NAME:
  {"fn_completion_parser": "logprob_parser", "completion_parser_kwargs": {"numerator_token",
  "denominator_tokens"}}}` (also inside a `pipeline_meta_parser`'s `parsers_to_kwargs`): the
  labels are the tokens whose log-probs the parser reads: scored by `alpaca-eval-logprob`.
  Other parsers (regex, ranking, JSON) read no literal label set: a note.

Nothing in a config is executed or imported: tags such as `!function utils.process_docs` are
read as text (auditor.schema.documents keeps a tagged scalar's tag). A label set's harness
engines and the text its scorer puts before each label travel in the site's `kind`
(`label_set_kind`, read back by `label_set_scoring`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from auditor.paths import shorten
from auditor.schema.documents import Document, Span, escape_token
from auditor.schema.includes import IncludeReader, include_names
from auditor.schema.model import refuse_long_texts
from auditor.schema.sites import FileModel, Site, analyse

KIND_PREFIX = "eval-label-set:"  # a label set's site kind: this, then its scoring as JSON

EVALS_ENGINE = "openai-evals-classify"
LM_EVAL_ACC = "lm-eval-acc"
LM_EVAL_ACC_NORM = "lm-eval-acc-norm"
ALPACA_LOGPROB = "alpaca-eval-logprob"
HARNESS_ENGINES = frozenset({EVALS_ENGINE, LM_EVAL_ACC, LM_EVAL_ACC_NORM, ALPACA_LOGPROB})

# lm-eval metrics → the engine whose argmax decides them (task.py process_results: acc, f1 and
# mcc read `argmax(lls)`; acc_norm reads `argmax(lls / len(choice))`)
LM_EVAL_METRICS = {"acc": LM_EVAL_ACC, "f1": LM_EVAL_ACC, "mcc": LM_EVAL_ACC, "acc_norm": LM_EVAL_ACC_NORM}
LM_EVAL_DEFAULT_DELIMITER = " "  # lm_eval/config/task.py TaskConfig.target_delimiter
LM_EVAL_KEYS = frozenset(
    {
        "output_type",
        "doc_to_choice",
        "doc_to_text",
        "doc_to_target",
        "dataset_path",
        "test_split",
        "validation_split",
        "metric_list",
        "target_delimiter",
        "include",
    }
)
EVALS_FROM_N = ("from_n", "from_n_abc", "from_n_ABC")  # classify_utils.get_choice_strings


@dataclass(frozen=True)
class Scoring:
    """How a harness scores one label set: its engines (engine-table rows) and the text its
    scorer puts before each label (lm-eval's target_delimiter; "" elsewhere)."""

    engines: tuple[str, ...]
    prefix: str = ""


@dataclass
class LabelSet:
    """One literal label set of a config, before it becomes a Site."""

    pointer: str  # the node that holds the labels
    field: str  # how findings name it
    name: str
    labels: list[str]
    label_pointers: list[str]
    scoring: Scoring
    description: str = ""
    characters: bool = False  # one label per character of the string at `pointer`


@dataclass
class EvalConfig:
    """What a recogniser read from a config: its label sets and what it could not lint."""

    format: str
    label_sets: list[LabelSet] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def label_set_kind(scoring: Scoring) -> str:
    """The site kind that carries a label set's scoring (see label_set_scoring)."""
    payload = {"engines": list(scoring.engines), "prefix": scoring.prefix}
    return KIND_PREFIX + json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def label_set_scoring(site: object) -> Scoring | None:
    """The harness scoring of a site made from a label set; None for any other site."""
    kind = getattr(site, "kind", "")
    return _kind_scoring(kind) if isinstance(kind, str) else None


def _kind_scoring(kind: str) -> Scoring | None:
    if not kind.startswith(KIND_PREFIX):
        return None
    try:
        payload = json.loads(kind[len(KIND_PREFIX) :])
        return Scoring(tuple(str(e) for e in payload["engines"]), str(payload.get("prefix", "")))
    except (ValueError, KeyError, TypeError):
        return None


def known_kind(kind: str) -> bool:
    """Whether a site kind that carries a label set's scoring names only the harness engines
    this module gives label sets (any other kind: True): an analysis cache entry that names
    another is not used (auditor.schema.cache)."""
    if not kind.startswith(KIND_PREFIX):
        return True
    scoring = _kind_scoring(kind)
    return scoring is not None and bool(scoring.engines) and set(scoring.engines) <= HARNESS_ENGINES


# --------------------------------------------------------------------------- openai/evals


def _is_evals_spec(node: object) -> bool:
    return isinstance(node, dict) and "prompt" in node and "choice_strings" in node


def _evals_specs(data: object) -> Iterator[tuple[str, str, dict]]:
    """(pointer, name, spec) of each model-graded spec: the document's root, or its members."""
    if isinstance(data, dict) and _is_evals_spec(data):
        yield "", "spec", data
        return
    if isinstance(data, dict):
        for name, spec in data.items():
            if _is_evals_spec(spec):
                yield f"/{escape_token(str(name))}", str(name), spec


def _is_evals(data: object) -> bool:
    return any(True for _ in _evals_specs(data))


def _read_evals(data: object) -> EvalConfig:
    """Each spec's choice strings, as `get_choice_strings` reads them."""
    out = EvalConfig("openai-evals-modelgraded")
    for at, name, spec in _evals_specs(data):
        choices = spec["choice_strings"]
        eval_type = spec.get("eval_type")
        shown = f"{name} › choice_strings" + (f" ({eval_type})" if isinstance(eval_type, str) else "")
        scoring = Scoring((EVALS_ENGINE,))
        prompt = spec.get("prompt")
        description = prompt if isinstance(prompt, str) else ""
        if isinstance(choices, str) and choices in EVALS_FROM_N:
            out.notes.append(
                f"{name}: choice_strings {choices!r} is made from the eval's run-time n: "
                "not a literal label set, not linted"
            )
        elif isinstance(choices, str):  # one choice per character (the function iterates it)
            pointers = [f"{at}/choice_strings"] * len(choices)
            out.label_sets.append(
                LabelSet(
                    f"{at}/choice_strings", shown, name, list(choices), pointers, scoring, description, True
                )
            )
        elif isinstance(choices, list) and all(isinstance(c, (str, int, float)) for c in choices):
            pointers = [f"{at}/choice_strings/{i}" for i in range(len(choices))]
            labels = [str(c) for c in choices]
            out.label_sets.append(
                LabelSet(f"{at}/choice_strings", shown, name, labels, pointers, scoring, description)
            )
        else:
            out.notes.append(f"{name}: choice_strings is not a literal label set, not linted")
    return out


# --------------------------------------------------------------------------- lm-evaluation-harness


def _is_lm_eval(data: object) -> bool:
    if not isinstance(data, dict) or _is_evals(data):
        return False
    keys = set(data)
    # a task, or a template tasks include (no `task` of its own: `_default_template_yaml`)
    named = "task" in keys or "include" in keys
    template = "output_type" in keys and bool(keys & {"doc_to_text", "doc_to_choice"})
    return (named and bool(LM_EVAL_KEYS & keys)) or template


# What a task takes from the files it `include`s (lm_eval/tasks/_yaml_loader.py load_yaml: each
# include relative to the including file's folder, a list in order, the task's own keys win;
# read within the project, once, within limits: auditor.schema.includes); only the keys that
# decide how its own label set is scored: its label set stays where written
INHERITED = ("output_type", "metric_list", "target_delimiter")


def _lm_eval_engines(metric_list: object) -> tuple[str, ...]:
    """The engines whose argmax the task's metrics read (both when it names none of them)."""
    names = (
        [m.get("metric") for m in metric_list if isinstance(m, dict)] if isinstance(metric_list, list) else []
    )
    engines = tuple(dict.fromkeys(LM_EVAL_METRICS[n] for n in names if n in LM_EVAL_METRICS))
    return engines or (LM_EVAL_ACC, LM_EVAL_ACC_NORM)


def _read_lm_eval(written: dict, includes: IncludeReader) -> EvalConfig:
    """The task's literal doc_to_choice list, scored as `target_delimiter + choice`, with the
    output type, metrics and delimiter its includes give it where it sets none."""
    out = EvalConfig("lm-eval-task")
    task = written.get("task")
    name = shorten(task if isinstance(task, str) else str(written.get("include") or "(template)"), 80)
    if isinstance(task, list):
        out.notes.append("a group of lm-eval tasks: no label set of its own")
        return out
    names = include_names(written.get("include"))
    inherited, problem = includes.merged(names, INHERITED)
    if problem is not None:
        out.notes.append(f"task {name}: include {problem}")
    data = {**inherited, **written}
    output_type = data.get("output_type")
    choices = written.get("doc_to_choice")
    unknown = output_type is None and problem is not None  # (an include not read may set it)
    if output_type not in ("multiple_choice", None) or (output_type is None and not unknown):
        if choices is not None:
            out.notes.append(
                f"task {name}: output_type {output_type or 'generate_until'!r} does not score "
                "doc_to_choice as continuations, not linted"
            )
        else:
            out.notes.append(f"task {name}: output_type {output_type or 'generate_until'!r}: no label set")
        return out
    if "doc_to_choice" not in written:
        where = "from its include" if names else "none given"
        out.notes.append(f"task {name}: doc_to_choice {where}: no literal label set here")
        return out
    if not (isinstance(choices, list) and choices and all(isinstance(c, (str, int, float)) for c in choices)):
        what = (
            "a !function tag"
            if isinstance(choices, str) and choices.startswith("!function")
            else "a template or column name"
            if isinstance(choices, str)
            else "no list of labels"
        )
        out.notes.append(f"task {name}: doc_to_choice is {what}: not a literal label set, not linted")
        return out
    delimiter = data.get("target_delimiter", LM_EVAL_DEFAULT_DELIMITER)
    delimiter = delimiter if isinstance(delimiter, str) else LM_EVAL_DEFAULT_DELIMITER
    scoring = Scoring(_lm_eval_engines(data.get("metric_list")), delimiter)
    if "metric_list" not in data and problem is not None:
        out.notes.append(f"task {name}: metric_list unknown: checked under acc and acc_norm")
    description = data.get("doc_to_text") if isinstance(data.get("doc_to_text"), str) else ""
    out.label_sets.append(
        LabelSet(
            "/doc_to_choice",
            f"task {name} › doc_to_choice",
            name,
            [str(c) for c in choices],
            [f"/doc_to_choice/{i}" for i in range(len(choices))],
            scoring,
            description or "",
        )
    )
    return out


# --------------------------------------------------------------------------- alpaca_eval


def _alpaca_configs(data: object) -> Iterator[tuple[str, str, dict]]:
    if isinstance(data, dict):
        for name, config in data.items():
            if isinstance(config, dict) and (
                "fn_completion_parser" in config or {"prompt_template", "fn_completions"} <= set(config)
            ):
                yield f"/{escape_token(str(name))}", str(name), config


def _is_alpaca(data: object) -> bool:
    return any(True for _ in _alpaca_configs(data))


def _logprob_kwargs(config: dict, at: str) -> tuple[str, dict] | None:
    """(pointer, kwargs) of the config's logprob_parser, alone or in a pipeline_meta_parser."""
    kwargs = config.get("completion_parser_kwargs")
    if not isinstance(kwargs, dict):
        return None
    if config.get("fn_completion_parser") == "logprob_parser":
        return f"{at}/completion_parser_kwargs", kwargs
    if config.get("fn_completion_parser") == "pipeline_meta_parser":
        parsers = kwargs.get("parsers_to_kwargs")
        if isinstance(parsers, dict) and isinstance(parsers.get("logprob_parser"), dict):
            return f"{at}/completion_parser_kwargs/parsers_to_kwargs/logprob_parser", parsers[
                "logprob_parser"
            ]
    return None


def _read_alpaca(data: object) -> EvalConfig:
    """Each logprob parser's tokens: the denominator tokens, and the numerator if not among them."""
    out = EvalConfig("alpaca-eval-evaluator")
    for at, name, config in _alpaca_configs(data):
        found = _logprob_kwargs(config, at)
        parser = config.get("fn_completion_parser") or "the default parser"
        if found is None:
            out.notes.append(f"{name}: {parser} reads no literal label set (pcdlint lints logprob_parser's)")
            continue
        where, kwargs = found
        tokens = kwargs.get("denominator_tokens")
        numerator = kwargs.get("numerator_token")
        if not (isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens)):
            out.notes.append(f"{name}: denominator_tokens is not a literal label set, not linted")
            continue
        labels = list(tokens)
        pointers = [f"{where}/denominator_tokens/{i}" for i in range(len(tokens))]
        if isinstance(numerator, str) and numerator not in labels:
            labels.append(numerator)
            pointers.append(f"{where}/numerator_token")
        index = kwargs.get("log_prob_index", "batch")
        position = "first reply token" if index == "batch" else f"reply token {index}"
        out.label_sets.append(
            LabelSet(
                f"{where}/denominator_tokens",
                f"{name} › {parser} ({position})",
                name,
                labels,
                pointers,
                Scoring((ALPACA_LOGPROB,)),
            )
        )
    return out


# --------------------------------------------------------------------------- recognition


@dataclass(frozen=True)
class Recogniser:
    """One config kind: a test on the document's value and the reader of its label sets."""

    format: str
    test: Callable[[object], bool]
    read: Callable[[object, IncludeReader], EvalConfig]  # (the document's value, its includes)


RECOGNISERS: tuple[Recogniser, ...] = (
    Recogniser("openai-evals-modelgraded", _is_evals, lambda data, _: _read_evals(data)),
    Recogniser("lm-eval-task", _is_lm_eval, _read_lm_eval),  # type: ignore[arg-type]
    Recogniser("alpaca-eval-evaluator", _is_alpaca, lambda data, _: _read_alpaca(data)),
)


def recognise(data: object, path: str = "", includes: IncludeReader | None = None) -> EvalConfig | None:
    """The evaluation config the document (at `path`: includes are found beside it, read by
    `includes`) is, or None."""
    for recogniser in RECOGNISERS:
        if recogniser.test(data):
            return recogniser.read(data, includes or IncludeReader(path))
    return None


# --------------------------------------------------------------------------- sites


def _character_spans(document: Document, pointer: str, count: int) -> list[Span]:
    """The span of each character of the one-line string at `pointer` (its whole span where the
    string spans lines or its text is not where the span says)."""
    whole = document.span(pointer)
    lines = document.text.splitlines()
    if whole.line != whole.end_line or whole.line > len(lines):
        return [whole] * count
    written = lines[whole.line - 1][whole.column - 1 : whole.end_column - 1]
    offset = 1 if written[:1] in ("'", '"') else 0
    if len(written) - 2 * offset != count:
        return [whole] * count
    start = whole.column + offset
    return [Span(whole.line, start + i, whole.line, start + i + 1) for i in range(count)]


def label_set_sites(document: Document, config: EvalConfig) -> list[Site]:
    """A Site per label set, with its spans found now (before the crawl keeps only its own)."""
    sites = []
    for found in config.label_sets:
        if found.characters:
            spans = _character_spans(document, found.pointer, len(found.labels))
        else:
            spans = [
                document.key_span(p) if p.endswith("/numerator_token") else document.span(p)
                for p in found.label_pointers
            ]
        sites.append(
            Site(
                document.path,
                found.pointer,
                found.field,
                found.name,
                list(found.labels),
                list(found.label_pointers),
                document.key_span(found.pointer),
                spans,
                label_set_kind(found.scoring),
                found.description,
            )
        )
    return sites


def analyse_with_label_sets(document: Document, includes: IncludeReader | None = None) -> FileModel:
    """The file model of `analyse`, with an evaluation config's label sets as sites and what it
    could not lint as notes; the format names the config kind. `includes`: how an lm-eval
    task's includes are read (default: beside `document.path`, within its project); what they
    read is kept in the model (include_reads)."""
    includes = includes or IncludeReader(document.path)
    config = recognise(document.data, document.path, includes)
    sites = label_set_sites(document, config) if config is not None else []
    model = analyse(document)
    model.include_reads = includes.reads
    if config is None:
        refuse_long_texts(model)
        return model
    model.format = config.format if model.format == "unknown" else f"{model.format}+{config.format}"
    model.sites.extend(sites)
    refuse_long_texts(model)
    model.notes.extend(config.notes)
    return model
