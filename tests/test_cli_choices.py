"""The CLI's choices come from the registries (issue 43): `--engine` from the engine table,
`-f/--format` from the reporter registry, `--backend` from the backend table, `--probe` from the
probe table. Every such option accepts exactly the names its help lists; no module outside the
registries keeps its own list of those names (ast); an unknown name is one line, exit 2, with
the nearest known name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from auditor.backends import BACKEND_ALIASES, BACKENDS, backend_names
from auditor.cli.choices import EngineChoice, RegistryChoice
from auditor.cli.main import cli
from auditor.pcd.engines.table import ENGINE_ROWS, SHAPES, engine_names
from auditor.probes import PROBES
from auditor.reporting import COMMAND_FORMATS, FORMAT_MODULES, command_formats, formatters
from support import REPO

# the registries: the only modules that may list these names (the engine package: the table and
# the profile modules its rows name, each declaring its own profiles)
REGISTRIES = {
    "auditor/backends.py",
    "auditor/probes.py",
    "auditor/reporting/__init__.py",
}
FORMAT_NAMES = set(FORMAT_MODULES) | {name for names in COMMAND_FORMATS.values() for name in names}
BACKEND_NAMES = set(BACKENDS) | set(BACKEND_ALIASES)


def commands(group: click.Group = cli, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name, command in sorted(group.commands.items()):
        out.append((prefix + name, command))
        if isinstance(command, click.Group):
            out.extend(commands(command, f"{prefix}{name} "))
    return out


def options_named(flag: str) -> list[tuple[str, click.Option]]:
    return [
        (name, param)
        for name, command in commands()
        for param in command.params
        if isinstance(param, click.Option) and flag in param.opts
    ]


def listed(help_text: str, names: set[str]) -> set[str]:
    """The names of `names` a help text mentions as whole words (`sum` is not in `sum-close`)."""
    return {name for name in names if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", help_text)}


def test_every_engine_option_lists_exactly_the_names_it_accepts():
    found = options_named("--engine")
    assert {name for name, _ in found} >= {"check", "suggest", "verify"}
    for name, option in found:
        assert isinstance(option.type, EngineChoice), name
        accepted = set(option.type.choices)
        assert accepted == set(engine_names(option.type.kinds)), name
        assert listed(option.help or "", set(ENGINE_ROWS)) == accepted, name
    # check and suggest take every nameable engine (the check help once left out two)
    check = dict(found)["check"]
    assert {"systemone", "sglang-intern-decision", "mean", "llamacpp-lev"} <= set(check.type.choices)


def test_every_format_option_is_the_registry_s():
    found = options_named("--format")
    assert {name for name, _ in found} >= {"check", "verify", "eval", "suggest", "conform", "engines"}
    for name, option in found:
        assert isinstance(option.type, RegistryChoice), name
        assert list(option.type.choices) == command_formats(name), name
    # the registry's names are the formatters registered, in the same order
    assert list(formatters()) == list(FORMAT_MODULES)


def test_every_backend_option_is_the_table_s_and_takes_the_old_spelling():
    found = options_named("--backend")
    assert {name for name, _ in found} == {"check", "verify", "eval"}
    for name, option in found:
        assert list(option.type.choices) == backend_names(name), name
        assert listed(option.help or "", set(BACKENDS)) == set(backend_names(name)), name
        assert option.type.convert("local", option, None) == "in-process"
        assert option.type.convert("In-Process", option, None) == "in-process"
    assert "systemone" not in backend_names("check")  # `check --verify` scores schema fields only


def test_probe_option_is_the_table_s():
    ((_, option),) = options_named("--probe")
    assert list(option.type.choices) == list(PROBES)
    assert listed(option.help or "", set(PROBES)) == set(PROBES)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["check", "--engine", "gathr", "x.json"],
            "--engine: unknown engine 'gathr'; did you mean 'gather'?",
        ),
        (["check", "-f", "jsn", "x.json"], "--format: unknown format 'jsn'; did you mean 'json'?"),
        (
            ["verify", "--backend", "openia", "x.json"],
            "--backend: unknown backend 'openia'; did you mean 'openai'?",
        ),
        (["check", "--verify", "--backend", "systemone", "x.json"], "unknown backend 'systemone'"),
        (["verify", "--engine", "gather", "x.json"], "--engine: unknown decision engine 'gather'"),
        (["check", "--engine", "lm-eval-acc", "x.json"], "applied to them without being named"),
        (["verify", "--probe", "ordr", "x.json"], "--probe: unknown probe 'ordr'; did you mean 'order'?"),
    ],
)
def test_an_unknown_name_is_one_line_with_the_nearest(args, message):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line]
    assert line.startswith("pcdlint: error: ") and message in line, line


def _members(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return [key for key in node.keys if key is not None]
    return []


def hand_kept(path: Path, tree: ast.AST) -> list[str]:
    """Where a module lists two or more engine, format or backend names (a tuple, list, set or
    dict's keys): such a list is the registry's to keep."""
    where = path.relative_to(REPO)
    found = []
    for node in ast.walk(tree):
        strings = {
            m.value for m in _members(node) if isinstance(m, ast.Constant) and isinstance(m.value, str)
        }
        for what, names in (
            # (a body shape shares its name with an engine: a list of shapes is no list of engines)
            ("engine", set(ENGINE_ROWS) - set(SHAPES)),
            ("format", FORMAT_NAMES),
            ("backend", BACKEND_NAMES),
        ):
            hits = strings & names
            if len(hits) >= 2:
                found.append(f"{where}:{node.lineno}: lists the {what} names {sorted(hits)}")
    return found


def test_no_hand_kept_list_of_engine_format_or_backend_names():
    paths = sorted(
        p
        for top in ("auditor", "rules", "scripts")
        for p in (REPO / top).rglob("*.py")
        if "__pycache__" not in p.parts
        and str(p.relative_to(REPO)) not in REGISTRIES
        and not p.is_relative_to(REPO / "auditor" / "pcd" / "engines")
    )
    assert len(paths) > 100
    quoted = re.compile(r"""["']([\w.-]+)["']""")
    categories = (set(ENGINE_ROWS) - set(SHAPES), FORMAT_NAMES, BACKEND_NAMES)
    problems = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        strings = set(quoted.findall(text))
        if all(len(strings & names) < 2 for names in categories):  # cannot list two of any
            continue
        problems += hand_kept(path, ast.parse(text))
    assert not problems, "\n".join(problems)


def test_the_ast_check_finds_a_hand_kept_list(tmp_path):
    path = REPO / "auditor" / "cli" / "example.py"  # (never written: parsed from text)
    tree = ast.parse('CHOICES = click.Choice(["local", "openai"])\nFORMATS = ("text", "json", "html")\n')
    problems = hand_kept(path, tree)
    assert sorted(problem.split(": ")[1].split(" [")[0] for problem in problems) == [
        "lists the backend names",
        "lists the format names",
    ]
