"""A warm `pcdlint check` imports only what linting needs (issue 17: start-up within 1.3x of a
bare tokenizer process; benchmarks/lint_scaling.py prints that ratio).

The check runs in a fresh interpreter, twice (the first run fills the analysis cache), and the
second run's `sys.modules` must hold none of the heavy or unneeded packages below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import FIXTURES

pytestmark = pytest.mark.slow  # whole processes, timed by their imports

# Needed by no warm text/JSON check: the ML stack, the HTML stack, the decoder and its HTTP
# client, the parsers and the meta-schema check (a cache hit skips them), package metadata;
# nor, for one file (these checks' inputs), the process pool over files.
NOT_NEEDED = [
    "transformers",
    "pandas",
    "torch",
    "jinja2",
    "auditor.decoder",
    "urllib.request",
    "http.client",
    "jsonschema",
    "jsonschema_rs",
    "referencing",
    "ruamel",
    "importlib.metadata",
    "auditor.linter.pool",
    # nor what only a rarer path needs (issue 34: start-up within 1.2x of the bare process):
    # the engine table is read beside its module, not through importlib.resources (and zipfile);
    # tempfile (shutil, random) only where a file is written; fractions only where a
    # full-sequence engine scores; platformdirs only off Linux (difflib is not here: click's
    # parser imports it for every short option, `-q`, on its way to matching it)
    "importlib.resources",
    "zipfile",
    "tempfile",
    "fractions",
    "platformdirs",
]

# (the modules are written at exit: a check that ends with nothing registered to run at exit
# skips the interpreter's teardown, auditor.cli.main._exit_now)
RUN = """
import atexit, json, runpy, sys

def dump():
    with open({out!r}, "w") as handle:
        json.dump(sorted(sys.modules), handle)

atexit.register(dump)
sys.argv = ["pcdlint", *json.loads(sys.argv[1])]
runpy.run_module("auditor", run_name="__main__")
"""


def loaded_modules(tmp_path, args: list[str]) -> set[str]:
    out = tmp_path / "modules.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, "-c", RUN.format(out=str(out)), json.dumps(args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert "Traceback" not in result.stderr, result.stderr
    return set(json.loads(out.read_text()))


def heavy(modules: set[str]) -> list[str]:
    return [name for name in NOT_NEEDED if any(m == name or m.startswith(name + ".") for m in modules)]


def test_a_warm_text_check_imports_nothing_heavy(tmp_path):
    modules = loaded_modules(tmp_path, ["check", "-q", str(FIXTURES / "schemas" / "clean_sentiment.json")])
    assert "auditor.linter.engine" in modules and "tokenizers" in modules  # it did lint
    assert heavy(modules) == []


def test_a_warm_json_check_of_a_yaml_preset_imports_nothing_heavy(tmp_path):
    modules = loaded_modules(
        tmp_path, ["check", "-f", "json", str(FIXTURES / "schemas" / "customs_preset.yaml")]
    )
    assert "auditor.reporting.json_format" in modules
    assert heavy(modules) == []


def test_a_cold_check_loads_the_parsers_it_needs(tmp_path):
    """The list above is not vacuous: without the cache the meta-schema check does run."""
    out = tmp_path / "modules.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(tmp_path / "cache")}
    args = ["check", "-q", "--no-cache", str(FIXTURES / "schemas" / "clean_sentiment.json")]
    subprocess.run(
        [sys.executable, "-c", RUN.format(out=str(out)), json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    modules = set(json.loads(out.read_text()))
    assert "jsonschema" in modules and "jsonschema_rs" in modules
    assert not {"transformers", "pandas", "torch", "jinja2"} & modules


EXITS = """
import sys

class Teardown:  # (its __del__ runs when the interpreter's teardown clears this module)
    def __del__(self):
        print("teardown ran", file=sys.stderr)

kept = Teardown()
sys.argv = ["pcdlint", *sys.argv[1:]]
from auditor.cli.main import main
main()
"""


@pytest.mark.parametrize("registered", [False, True])
def test_a_check_ends_at_once_with_its_output_whole(tmp_path, registered):
    """A check whose process has nothing left to run at exit ends without the interpreter's
    teardown (auditor.cli.main._exit_now): its output and exit code are those of the same check
    run in this process; one that has an atexit callback (a library's, an embedding's) ends
    normally and the callback runs."""
    from support import run_cli_bytes

    schema = str(FIXTURES / "schemas" / "risk_triage.json")
    env = {"HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(tmp_path / "cache")}
    code = EXITS
    if registered:
        code = "import atexit, sys; atexit.register(lambda: print('callback ran', file=sys.stderr))" + code
    for args, exit_code in ((["check", schema], 1), (["check", "-f", "json", schema], 1), (["rules"], 0)):
        result = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, env={**os.environ, **env}, timeout=300
        )
        expected = run_cli_bytes(*args, env=env)
        assert result.returncode == expected.returncode == exit_code
        assert result.stdout == expected.stdout and len(result.stdout) > 100
        assert (b"callback ran" in result.stderr) is registered
        assert (b"teardown ran" in result.stderr) is registered


def test_the_served_eval_path_imports_no_model_or_array_stack():
    """`eval --backend systemone` sends through the HTTP client and tallies in plain Python: its
    modules must not pull in numpy, torch or transformers through a package's __init__ (issue 48:
    start-up counts in every sharded run)."""
    code = (
        "import json, sys; import auditor.decoder.http, auditor.decoder.systemone, auditor.eval.decisions, "
        "auditor.eval.decision_runs; print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert not {"numpy", "torch", "transformers", "auditor.decoder.verify"} & loaded
