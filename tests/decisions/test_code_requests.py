"""Issue 45: decision requests read out of Python and JS/TS code (never run), each engine's
dialect, System One bodies without `state`, walking code trees, the summary on exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from auditor.schema.code_requests import read_document
from auditor.schema.sites import analyse
from support import CORPUS, FIXTURES, NO_CORPUS, run_cli

CODE = FIXTURES / "decisions" / "code"
DIALECTS = FIXTURES / "decisions" / "dialects"
REAL = CORPUS / "decision-requests" / "code"
EXPECTED = Path(__file__).resolve().parents[1] / "data" / "decision-requests" / "code-expected.json"


def model_of(path: Path):
    return analyse(read_document(path.read_bytes(), path.suffix, str(path)))


def sites(path: Path) -> list[tuple]:
    return [(s.question_name, s.question_kind, s.span.line, s.runtime) for s in model_of(path).sites]


# --------------------------------------------------------------------------- code, statically


def test_python_literals_calls_constructors_and_followed_names():
    assert sites(CODE / "triage.py") == [
        ("team", "choice", 14, ()),  # a dict literal assigned to a name; criteria a followed name
        ("urgent", "binary", 21, ()),  # a same-module function returning a literal
        ("severity", "score", 22, ()),  # the SDK constructor, positional
        ("dynamic", "choice", 29, ("options",)),  # criteria a parameter: built at run time
        ("refund", "binary", 33, ()),  # client.decisions.create(questions=[...])
    ]


def test_script_literals_fetch_bodies_and_sdk_helpers():
    assert sites(CODE / "triage.ts") == [
        ("team", "choice", 8, ()),
        ("severity", "score", 13, ()),  # `as const` looked through, "a" + "b" joined
        ("urgent", "binary", 27, ("text",)),  # a template literal with a substitution
        ("route", "choice", 28, ("options",)),  # a spread of a parameter
    ]
    assert sites(CODE / "triage.mjs") == [("spam", "binary", 2, ()), ("language", "choice", 3, ())]


def test_a_part_built_at_run_time_is_one_note_and_never_a_finding(tmp_path):
    result = run_cli("check", CODE / "triage.py", CODE / "triage.ts", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # the real collision, at the literal's line and column, in both languages
    assert "triage.py:14:9: question team › choice PCD101" in out
    assert "triage.ts:8:5: question team › choice PCD101" in out
    assert "29:48: question 'dynamic': options built at run time: not checked" in out
    assert "28:7: question 'route': options built at run time: not checked" in out
    assert "'route' " not in out.split("note:")[0]  # (no finding on the run-time question)


def test_no_code_is_ever_run(tmp_path):
    """triage.py writes a file when imported: linting it, named or walked, writes nothing."""
    shutil.copytree(CODE, tmp_path / "src")
    for args in (["check", "src/triage.py"], ["check", "src"]):
        run_cli(*args, cwd=tmp_path)
        assert not (tmp_path / "IMPORTED.txt").exists()
        assert not (tmp_path / "src" / "IMPORTED.txt").exists()


def test_code_that_does_not_parse_is_a_note_not_exit_2(tmp_path):
    for name in ("broken.py", "broken.ts"):
        result = run_cli("check", CODE / name, cwd=tmp_path)
        assert result.returncode == 0, (name, result.stderr)
        assert f"{name}: note: not read: not" in result.stdout


def test_a_survey_form_without_a_decision_api_is_no_request():
    assert model_of(CODE / "survey.py").sites == []


# --------------------------------------------------------------------------- dialects


@pytest.mark.parametrize(
    "name,dialect,questions",
    [
        ("kind_candidates.json", "kind-candidates", [("owner", "choice", ["infra", "product", "unknown"])]),
        (
            "prompt_options.json",
            "prompt-options",
            [
                ("ship", "choice", ["ship", "hold", "unsure"]),
                ("risk", "score", ["0", "1", "2", "3", "4"]),
                ("breaking", "binary", ["true", "false"]),
            ],
        ),
        (
            "single_question.json",
            "single-question",
            [("question", "choice", ["billing", "technical", "other"])],
        ),
        (
            "input_instruction.json",
            "input-instruction",
            [("topic", "choice", ["delivery", "billing", "other"])],
        ),
        (
            "rows.json",
            "state-question-rows",
            [("row 0", "choice", ["yes", "no"]), ("row 1", "choice", ["yes", "no"])],
        ),
    ],
)
def test_each_dialect_is_recognised_and_named(name, dialect, questions, tmp_path):
    model = model_of(DIALECTS / name)
    assert model.dialect == dialect
    assert [(s.question_name, s.question_kind, s.options) for s in model.sites] == questions
    result = run_cli("check", "-f", "json", DIALECTS / name, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["files"][0]["dialect"] == dialect


def test_a_systemone_body_without_state_keeps_all_its_questions():
    model = model_of(DIALECTS / "systemone_without_state.json")
    assert model.format == "decision-request" and model.dialect == "systemone"
    assert [(s.question_name, s.question_kind) for s in model.sites] == [
        ("merchant", "choice"),
        ("total_visible", "binary"),
        ("legibility", "score"),
        ("currency", "choice"),
        ("handwritten", "binary"),
    ]


# --------------------------------------------------------------------------- walking code trees


def test_walks_skip_default_excludes_and_the_exclude_key(tmp_path):
    shutil.copy(CODE / "triage.mjs", tmp_path / "app.mjs")
    for folder in ("node_modules/pkg", ".venv/lib", "build", "vendor/old"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(CODE / "triage.py", tmp_path / folder / "triage.py")
    (tmp_path / ".pcdlint.toml").write_text('exclude = ["vendor"]\n', encoding="utf-8")
    result = run_cli("check", "-f", "json", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [f["path"] for f in json.loads(result.stdout)["files"]] == ["app.mjs"]
    (tmp_path / ".pcdlint.toml").write_text("exclude = 3\n", encoding="utf-8")
    bad = run_cli("check", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "exclude: must be a list of glob patterns" in bad.stderr


def test_code_files_without_requests_are_counted_not_listed(tmp_path):
    shutil.copy(CODE / "triage.mjs", tmp_path / "app.mjs")
    (tmp_path / "util.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (tmp_path / "survey.py").write_text((CODE / "survey.py").read_text(encoding="utf-8"), encoding="utf-8")
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "2 code files held no decision request" in result.stdout
    assert "had no schema" not in result.stdout


# --------------------------------------------------------------------------- the summary on exit 2


def test_a_directory_run_ends_with_its_summary_whatever_one_file_did(tmp_path):
    shutil.copy(CODE / "triage.mjs", tmp_path / "app.mjs")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "<<<<<<< HEAD\nproviders:\n  - id: a\n=======\nproviders:\n  - id: b: c\n>>>>>>> other\n",
        encoding="utf-8",
    )
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "promptfooconfig.yaml:1:1: unresolved merge conflict marker" in result.stderr
    lines = result.stdout.rstrip().splitlines()
    assert lines[-2].startswith("0 findings in 1 file, 2 fields")
    assert lines[-1] == "1 file in error (not read): promptfooconfig.yaml"


# --------------------------------------------------------------------------- real files


@pytest.mark.skipif(not REAL.is_dir(), reason=NO_CORPUS)
def test_real_code_files_sites_found_over_expected():
    """Acceptance: >= 95% of the questions read by hand in 30+ real code files are found, at
    their line, and nothing else is."""
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))["files"]
    assert len(expected) >= 30
    wanted = found = 0
    extra = []
    for name, questions in expected.items():
        got = [(s.question_kind, s.span.line) for s in model_of(REAL / name).sites]
        for _, kind, line in questions:
            wanted += 1
            if (kind, line) in got:
                got.remove((kind, line))
                found += 1
        extra += [(name, g) for g in got]
    assert found / wanted >= 0.95, (found, wanted)
    assert not extra


# --------------------------------------------------------------------------- prose choice sets


def test_choice_sets_in_prose_are_linted_only_when_asked(tmp_path):
    """A tool parameter described as `[Enum]: [...]`: a site of kind `prose` at the
    description, linted by the token rules (the real first-token collision of the issue), its
    findings shown only with `prose-choices = true`."""
    tool = {
        "type": "function",
        "function": {
            "name": "set_seat_heat",
            "parameters": {
                "type": "object",
                "properties": {
                    "seat": {
                        "type": "string",
                        "description": 'Which seat. [Enum]: ["driver", "passenger", "rear_left", "rear_right"]',
                    },
                    "note": {"type": "string", "description": "Use a | b notation when needed."},
                },
            },
        },
    }
    (tmp_path / "tool.json").write_text(json.dumps(tool, indent=1), encoding="utf-8")
    quiet = run_cli("check", "tool.json", cwd=tmp_path)
    assert quiet.returncode == 0 and "PCD001" not in quiet.stdout
    (tmp_path / ".pcdlint.toml").write_text("prose-choices = true\n", encoding="utf-8")
    loud = run_cli("check", "tool.json", cwd=tmp_path)
    assert loud.returncode == 1
    assert "seat (values read from its description) [qwen2.5] PCD001 error" in loud.stdout
    assert "'rear_left', 'rear_right' share 'rear'" in loud.stdout
    assert "note" not in loud.stdout.split("1 finding")[0]


@pytest.mark.parametrize(
    "text,values",
    [
        ('[Enum]: ["driver", "passenger"]', ["driver", "passenger"]),
        (
            "Possible values are No resolution provided, Resolved by request, Resolved by caller.",
            ["No resolution provided", "Resolved by request", "Resolved by caller"],
        ),
        ("pass | fail", ["pass", "fail"]),
        ("Return one of: low, medium, high.", ["low", "medium", "high"]),
        ("A free-text comment.", None),
        ("Use a | b notation when needed.", None),
    ],
)
def test_prose_patterns(text, values):
    from auditor.schema.prose import prose_choices

    assert prose_choices(text) == values


# --------------------------------------------------------------------------- the editor


def test_the_language_servers_workspace_lints_code_through_the_same_dispatch(tmp_path):
    """Issue 46's workspace reuses check's dispatch: a .py/.ts document's requests are linted
    as it is edited (read, never run)."""
    from auditor.cli.editor import ConfigReader
    from auditor.editor.workspace import Workspace

    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")
    workspace = Workspace([tmp_path], ConfigReader())
    for name, line in (("triage.py", 9), ("triage.ts", 11)):  # (the repeated name's line)
        path = tmp_path / name
        assert workspace.lintable(path)
        done = workspace.lint_text(path, (CODE / name).read_text(encoding="utf-8"))
        assert [(f.code, f.site_pointer.rsplit("/", 1)[-1]) for f in done.findings] == [("PCD101", "team")]
        assert done.findings[0].line == line
    assert not (tmp_path / "IMPORTED.txt").exists()


def test_a_cached_note_about_missing_grammars_ends_with_their_install(tmp_path):
    """A script file analysed while tree-sitter could not be imported holds a "needs
    tree-sitter's grammars" note; the analysis cache must not keep serving it once they import
    (its key covers the grammars' installed versions). Real processes, one cache directory."""
    import os
    import subprocess
    import sys

    from support import seed_cache

    shadow = tmp_path / "shadow" / "tree_sitter"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ImportError('grammars hidden by the test')\n", encoding="utf-8"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(seed_cache(tmp_path / "cache"))}

    def check(extra_path: str | None) -> str:
        run_env = dict(env)
        if extra_path:
            run_env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, env.get("PYTHONPATH")) if p)
        done = subprocess.run(
            [sys.executable, "-m", "auditor", "check", str(CODE / "triage.ts")],
            capture_output=True,
            text=True,
            env=run_env,
            cwd=tmp_path,
        )
        assert done.returncode in (0, 1), done.stderr
        return done.stdout

    hidden = check(str(tmp_path / "shadow"))
    assert "needs tree-sitter's grammars" in hidden
    assert (tmp_path / "cache" / "analysis").is_dir()  # the note was cached
    visible = check(None)
    assert "needs tree-sitter's grammars" not in visible
    assert "triage.ts:8:5: question team › choice PCD101" in visible
