"""One factory opens every backend (issue 43): `auditor.decoder.open.open_backend` is the only place
in the package that constructs a decoder backend (ast), each backend declares what the `Backend`
protocols ask (identity, close, score or decide), and a backend that lacks what it needs is a
usage error naming the flag."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from auditor.backends import BackendOptions
from auditor.decoder.backends import InProcessBackend, OpenAIBackend
from auditor.decoder.llm2jev import Llm2jevEngine
from auditor.decoder.open import DecisionBackend, FieldBackend, open_backend
from auditor.decoder.systemone import SystemOneBackend
from auditor.errors import UsageError
from support import REPO

# the decoder's backends, by the module that defines each
BACKEND_CLASSES = {
    "auditor.decoder.backends": {"InProcessBackend", "OpenAIBackend"},
    "auditor.decoder.systemone": {"SystemOneBackend"},
    "auditor.decoder.llm2jev": {"Llm2jevEngine"},
}
REEXPORTS = {"auditor.decoder": {"InProcessBackend", "OpenAIBackend", "Llm2jevEngine", "SystemOneBackend"}}
FACTORY = "auditor/decoder/open.py"


def constructions(path: Path, tree: ast.AST) -> list[str]:
    """Where a module calls a decoder backend's class: by a name imported from its module (or
    the package), or as an attribute of that module."""
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    sources = {**BACKEND_CLASSES, **REEXPORTS}
    classes = set().union(*BACKEND_CLASSES.values())
    local: dict[str, str] = {}  # a name bound by `from M import C [as N]` → C
    modules: set[str] = set()  # names bound to a backend module (`import auditor.decoder as d`)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in sources:
            for alias in node.names:
                if alias.name in classes:
                    local[alias.asname or alias.name] = alias.name
                else:
                    modules.add(alias.asname or alias.name)  # e.g. `from auditor import decoder`
        elif isinstance(node, ast.ImportFrom) and node.module == "auditor":
            modules.update(a.asname or a.name for a in node.names if a.name == "decoder")
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name in sources)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in local:
            found.append(f"{where}:{node.lineno}: constructs {local[func.id]}")
        elif isinstance(func, ast.Attribute) and func.attr in classes:
            found.append(f"{where}:{node.lineno}: constructs {func.attr}")
    return found


def test_open_backend_is_the_only_place_a_backend_is_constructed():
    classes = set().union(*BACKEND_CLASSES.values())
    texts = {
        path: path.read_text(encoding="utf-8")
        for path in sorted((REPO / "auditor").rglob("*.py"))
        if "__pycache__" not in path.parts and str(path.relative_to(REPO)) != FACTORY
    }
    assert len(texts) > 100
    problems = [
        problem
        for path, text in texts.items()
        if any(name in text for name in classes)  # a construction names its class
        for problem in constructions(path, ast.parse(text))
    ]
    assert not problems, "\n".join(problems)
    factory = REPO / FACTORY
    made = {
        p.rsplit(" ", 1)[1] for p in constructions(factory, ast.parse(factory.read_text(encoding="utf-8")))
    }
    assert made == set().union(*BACKEND_CLASSES.values())


def test_the_ast_check_finds_a_construction():
    tree = ast.parse(
        "from auditor.decoder.backends import OpenAIBackend as O\n"
        "from auditor import decoder\n"
        "O('u', None, t, 'n')\n"
        "decoder.Llm2jevEngine(loaded)\n"
    )
    assert [p.split(": ")[1] for p in constructions(REPO / "x.py", tree)] == [
        "constructs OpenAIBackend",
        "constructs Llm2jevEngine",
    ]


def test_every_backend_declares_the_protocol():
    for cls in (InProcessBackend, OpenAIBackend):
        assert all(callable(getattr(cls, name, None)) for name in ("identity", "close", "score")), cls
    for cls in (SystemOneBackend, Llm2jevEngine):
        assert all(callable(getattr(cls, name, None)) for name in ("identity", "close", "decide")), cls
    served = SystemOneBackend(None, "http://127.0.0.1:9", "/v1/systemone", "m")
    assert isinstance(served, DecisionBackend) and not isinstance(served, FieldBackend)
    assert served.identity() == {
        "backend": "systemone",
        "endpoint": "http://127.0.0.1:9/v1/systemone",
        "model": "m",
    }


@pytest.mark.parametrize(
    ("options", "decisions", "message"),
    [
        (BackendOptions("openai"), False, "--backend openai needs --base-url URL"),
        (BackendOptions("openai", base_url="http://127.0.0.1:9/v1"), False, "needs --tokenizer SPEC"),
        (BackendOptions("openai", base_url="ftp://127.0.0.1:9"), False, "ftp"),
        (BackendOptions("systemone", base_url="http://127.0.0.1:9"), False, "answers decision requests"),
        (BackendOptions("systemone"), True, "--backend systemone needs --base-url URL"),
        (BackendOptions("local", base_url="http://127.0.0.1:9"), False, "--base-url is for --backend openai"),
        (BackendOptions("in-process", engine="sglang-decisions"), True, "computes no answers of engine"),
        (BackendOptions("gpu"), False, "unknown backend 'gpu'"),
    ],
)
def test_a_backend_lacking_what_it_needs_is_a_usage_error(options, decisions, message):
    with pytest.raises(UsageError, match=message):
        open_backend(options, decisions=decisions)


def test_a_systemone_backend_reads_its_url_once_and_names_no_key(monkeypatch):
    monkeypatch.setenv("I43_KEY", "sk-secret-value")
    backend = open_backend(
        BackendOptions("systemone", base_url="http://127.0.0.1:9/", api_key_env="I43_KEY", model="m"),
        decisions=True,
    )
    try:
        assert backend.identity()["endpoint"] == "http://127.0.0.1:9/v1/systemone"
        assert "sk-secret" not in repr(backend.identity())
    finally:
        backend.close()
