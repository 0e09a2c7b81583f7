"""MkDocs hooks: the rule and engine pages, generated from the registry and the engine data.

One page per rule (`rules/PCD001.md` …) from its module docstring and `@rule` metadata, one per
engine from `auditor.pcd.engines`, and an index of each. SARIF's `helpUri` points at these pages
(`auditor.linter.pages.rule_help_uri`), so a rule added in `rules/` gets its page with no edit
here.
"""

from __future__ import annotations

from mkdocs.structure.files import File, Files

from auditor.reporting.docs_pages import engine_pages, rule_pages


def on_files(files: Files, config) -> Files:
    for path, text in [*rule_pages(), *engine_pages()]:
        files.append(File.generated(config, path, content=text))
    return files
