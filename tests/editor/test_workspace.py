"""What the servers share (auditor.editor.workspace) with the CLI's own config reader: the
nearest config, never one above the workspace root; read again when it changes; a config that
cannot be read names its file; tokenizer paths outside the roots refused; fixes checked by a lint
of the edited text (a JSON and a YAML schema, the real Qwen2.5 tokenizer)."""

from __future__ import annotations

import json
import os

import pytest

from auditor.cli.editor import ConfigReader
from auditor.editor.workspace import Workspace, apply, suppression_fix, verified_fix
from auditor.errors import ConfigError, UsageError

SCHEMA = {"type": "object", "properties": {"decision": {"enum": ["approve_now", "approve_later", "reject"]}}}


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "decide.json").write_text(json.dumps(SCHEMA, indent=2), encoding="utf-8")
    return tmp_path, root


def _codes(workspace: Workspace, path) -> list[str]:
    return [f.code for f in workspace.lint_text(path, path.read_text(encoding="utf-8")).findings]


def test_config_above_the_root_is_never_read(tree):
    above, root = tree
    (above / ".pcdlint.toml").write_text('ignore = ["PCD001"]\n', encoding="utf-8")
    workspace = Workspace([root], ConfigReader())
    path = root / "sub" / "decide.json"
    assert workspace.settings_for(path).config_path is None
    assert "PCD001" in _codes(workspace, path)
    # the same file inside the root is read, the nearest one wins, and a change is seen
    (root / ".pcdlint.toml").write_text('ignore = ["PCD001"]\n', encoding="utf-8")
    assert "PCD001" not in _codes(workspace, path)
    (root / "sub" / ".pcdlint.toml").write_text("ignore = []\n", encoding="utf-8")
    assert "PCD001" in _codes(workspace, path)
    (root / "sub" / ".pcdlint.toml").write_text(
        'ignore = ["first-token-collision", "PCD002"]\n', encoding="utf-8"
    )
    assert "PCD001" not in _codes(workspace, path)


def test_a_bad_config_names_its_file(tree):
    _, root = tree
    (root / "pyproject.toml").write_text("[tool.pcdlint]\nselect = [\n", encoding="utf-8")
    workspace = Workspace([root], ConfigReader())
    with pytest.raises(ConfigError) as raised:
        workspace.settings_for(root / "sub" / "decide.json")
    assert raised.value.path == str(root / "pyproject.toml") and "invalid TOML" in raised.value.message


def test_tokenizer_paths_outside_the_roots_are_refused(tree):
    above, root = tree
    (above / "tokenizer.json").write_text("{}", encoding="utf-8")
    (root / ".pcdlint.toml").write_text(
        f'tokenizers = ["{os.path.relpath(above / "tokenizer.json", root)}"]\n'
    )
    workspace = Workspace([root], ConfigReader())
    with pytest.raises(UsageError, match="outside the workspace roots"):
        workspace.lint_text(root / "sub" / "decide.json", json.dumps(SCHEMA))
    assert not workspace.lintable(above / "tokenizer.json")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("decide.json", json.dumps(SCHEMA, indent=2)),
        (
            "decide.yaml",
            "type: object\nproperties:\n  decision:\n    enum: [approve_now, approve_later, reject]\n",
        ),
        (
            "flow.yaml",
            "type: object\nproperties:\n  decision: {enum: [approve_now, approve_later, reject]}\n",
        ),
    ],
)
def test_fixes_clear_the_finding_and_keep_the_file_valid(tree, name, text):
    _, root = tree
    workspace = Workspace([root], ConfigReader())
    path = root / name
    done = workspace.lint_text(path, text)
    [finding] = [f for f in done.findings if f.code == "PCD001"]
    for fix in (
        verified_fix(workspace, done, finding.site_pointer),
        suppression_fix(workspace, done, finding),
    ):
        assert fix is not None
        after = workspace.lint_text(path, apply(text, fix.edits))
        assert after.error is None and after.model is not None and after.model.recognized
        assert not [f for f in after.findings if f.code == "PCD001"]
