"""Linting: the public Python API (`auditor.lint(...)`, see auditor.lint.api).

`auditor.lint` is both this package and the function users call: the package is made callable
(its module class gets a `__call__`), so `auditor.lint(Ticket)` works whether or not a
submodule such as `auditor.lint.api` has been imported (an import binds the package, not the
function, to `auditor.lint`).
"""

from __future__ import annotations

import sys
import types


class _CallableModule(types.ModuleType):
    def __call__(self, source, **kwargs):
        from auditor.lint.api import lint

        return lint(source, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


def __getattr__(name: str):
    if name in ("lint", "LintResult"):
        from auditor.lint import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
