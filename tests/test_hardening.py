"""Issue 49, the lint side: hostile eval-config includes, user chat templates, long options and
the first round's leftovers, as rows of the bad-input table (tests/test_bad_input.py's harness:
the real CLI, the exact exit code, one stderr line on exit 2, no traceback, the inputs' bytes
unchanged, a subprocess with a timeout where a hang is the point).

The caches' tampers are tests/test_cache_tamper.py; the Action's poisoned cache is
tests/test_action.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_bad_input import BAD, CLEAN, Case, _assert_case, run_in_process, write

from auditor.schema.includes import MAX_DEPTH, MAX_FILES, ROOT_MARKERS, project_root

TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}<|assistant|>"
LABELS = '["no", "no way"]'  # under acc, "no way" can never win (PCD013); under acc_norm it can


def _project(tmp: Path) -> Path:
    """A project folder (a pyproject.toml marks its root) with a tasks folder, and a folder
    beside it that is outside the project."""
    (tmp / "proj" / "tasks").mkdir(parents=True)
    (tmp / "proj" / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp / "outside").mkdir()
    (tmp / "outside" / "base.yaml").write_text(
        "output_type: multiple_choice\nmetric_list:\n  - metric: acc\n"
    )
    return tmp / "proj" / "tasks"


def _task(folder: Path, name: str, include: str, extra: str = "output_type: multiple_choice\n") -> Path:
    return write(
        folder / name, f"include: {include}\ntask: {Path(name).stem}\n{extra}doc_to_choice: {LABELS}\n"
    )


def _notes(result) -> list[str]:
    return [line for line in result.stdout.decode().splitlines() if ": note: " in line]


def _one_note(text: str):
    def check(result, tmp):
        notes = [n for n in _notes(result) if text in n]
        assert len(notes) == 1, _notes(result)

    return check


# --------------------------------------------------------------------------- includes


def include_outside_relative(tmp):
    """`../../outside/base.yaml` from a task in the project: one note, never opened (its metric
    would make the task acc-only: both acc and acc_norm are checked instead)."""
    task = _task(_project(tmp), "a.yaml", "../../outside/base.yaml", "")
    return Case(
        ["check", task],
        1,
        None,
        [task, tmp / "outside" / "base.yaml"],
        _one_note("include ../../outside/base.yaml: outside the project root"),
    )


def include_absolute_system_files(tmp):
    folder = _project(tmp)
    task = write(
        folder / "b.yaml",
        f"include: [/etc/passwd, /proc/self/environ]\ntask: b\noutput_type: multiple_choice\ndoc_to_choice: {LABELS}\n",
    )
    return Case(["check", task], 1, None, [task], _one_note("include /etc/passwd: outside the project root"))


def include_symlink_out_of_the_tree(tmp):
    folder = _project(tmp)
    (folder / "base.yaml").symlink_to(tmp / "outside" / "base.yaml")
    task = _task(folder, "c.yaml", "base.yaml", "")
    return Case(["check", task], 1, None, [task], _one_note("include base.yaml: outside the project root"))


def include_nul_byte(tmp):
    task = _task(_project(tmp), "d.yaml", '"a\\0b.yaml"')
    return Case(["check", task], 1, None, [task], _one_note("a path cannot hold a NUL byte; not read"))


def include_name_too_long(tmp):
    task = _task(_project(tmp), "e.yaml", "x" * 300 + ".yaml")
    return Case(["check", task], 1, None, [task], _one_note("file name too long"))


def include_fan_out(tmp):
    """Each file includes the next twice, 40 deep: every file read once, the depth limit a note
    (before: exponential re-reading, a hang)."""
    folder = _project(tmp)
    for i in range(40):
        write(
            folder / f"f{i}.yaml", f"include: [f{i + 1}.yaml, f{i + 1}.yaml]\noutput_type: multiple_choice\n"
        )
    write(folder / "f40.yaml", "metric_list:\n  - metric: acc\n")
    task = _task(folder, "task.yaml", "f0.yaml", "")
    return Case(
        ["check", task], 1, None, [task], _one_note(f"nested deeper than {MAX_DEPTH} levels"), process=True
    )


def include_itself_forty_times_cached(tmp):
    """The 534-byte task that includes itself 40 times (with the cache on: 1.3 GB and a hang)."""
    folder = _project(tmp)
    task = folder / "self.yaml"
    task.write_text(
        "include:\n"
        + "  - self.yaml\n" * 40
        + f"task: s\noutput_type: multiple_choice\ndoc_to_choice: {LABELS}\n"
    )
    assert run_in_process(["check", task], tmp).returncode == 1  # (the entry written)
    return Case(["check", task], 1, None, [task], _one_note("includes itself (a cycle)"), process=True)


def include_chain_of_97(tmp):
    folder = _project(tmp)
    for i in range(97):
        write(folder / f"t{i}.yaml", f"include: t{i + 1}.yaml\noutput_type: multiple_choice\n")
    task = _task(folder, "task.yaml", "t0.yaml", "")
    return Case(
        ["check", "--no-cache", task],
        1,
        None,
        [task],
        _one_note(f"nested deeper than {MAX_DEPTH} levels"),
        process=True,
    )


def include_too_many_files(tmp):
    folder = _project(tmp)
    names = [f"part{i}.yaml" for i in range(MAX_FILES + 5)]
    for name in names:
        write(folder / name, "output_type: multiple_choice\n")
    task = _task(folder, "many.yaml", "[" + ", ".join(names) + "]", "")
    return Case(["check", task], 1, None, [task], _one_note(f"read more than {MAX_FILES} files"))


def include_too_many_bytes(tmp):
    folder = _project(tmp)
    names = []
    for i in range(3):
        names.append(f"big{i}.yaml")
        write(folder / names[-1], "output_type: multiple_choice\n" + f"# {'x' * 100}\n" * 4000)
    task = _task(folder, "big.yaml", "[" + ", ".join(names) + "]", "")
    return Case(["check", task], 1, None, [task], _one_note("1,000,000 bytes; not read"))


def include_template_above_the_tasks_folder(tmp):
    """A tasks tree's `../_template.yaml` is inside the project: read (acc only: one finding)."""
    folder = _project(tmp)
    write(folder.parent / "_template.yaml", "output_type: multiple_choice\nmetric_list:\n  - metric: acc\n")
    task = _task(folder, "t.yaml", "../_template.yaml", "")

    def check(result, tmp):
        assert not _notes(result), _notes(result)
        found = json.loads(result.stdout)["findings"]
        assert [(f["code"], f["engine"]) for f in found] == [("PCD013", "lm-eval-acc")]

    return Case(["check", task, "-f", "json"], 1, None, [task], check)


def include_without_marker_stays_in_the_named_folder(tmp):
    """No marker above: the folder named on the command line is the root. Named as `tasks`, its
    `../_t.yaml` from `tasks/sub` is read; named as the file, the same include is outside."""
    if any((p / m).exists() for p in (tmp, *tmp.parents) for m in ROOT_MARKERS):
        pytest.skip("a project marker above the temporary folder")
    (tmp / "tasks" / "sub").mkdir(parents=True)
    write(tmp / "tasks" / "_t.yaml", "output_type: multiple_choice\nmetric_list:\n  - metric: acc\n")
    task = _task(tmp / "tasks" / "sub", "t.yaml", "../_t.yaml", "")
    named_folder = run_in_process(["check", "tasks"], tmp)
    assert named_folder.returncode == 1 and not _notes(named_folder), named_folder.stdout
    assert project_root(str(tmp / "tasks" / "sub"), str(tmp / "tasks")) == os.path.realpath(tmp / "tasks")
    return Case(["check", task], 1, None, [task], _one_note("include ../_t.yaml: outside the project root"))


# --------------------------------------------------------------------------- chat templates


def _request(tmp: Path, state: str = "ticket") -> Path:
    request = {
        "model": "m",
        "state": state,
        "questions": {
            "topic": {
                "type": "choice",
                "instructions": "Which?",
                "criteria": {"billing": None, "sales": None},
            }
        },
    }
    return write(tmp / "request.json", request)


def _template_row(
    tmp: Path, given: object, message: str, process: bool = False, text: str | None = None
) -> Case:
    """`check --chat-template GIVEN` on a clean schema: exit 2, one line holding `message`;
    `text`: GIVEN is a file of the temporary folder written with it (its bytes must not change)."""
    schema = write(tmp / "s.json", CLEAN)
    inputs = [schema] if text is None else [schema, write(tmp / str(given), text)]
    return Case(
        ["check", "--chat-template", inputs[-1] if text else given, schema],
        2,
        message,
        inputs,
        process=process,
    )


def template_unknown_user(tmp):
    return _template_row(
        tmp,
        "~nouser49/t.jinja",
        "--chat-template ~nouser49/t.jinja: no home directory known for user 'nouser49'",
    )


def template_name_too_long(tmp):
    return _template_row(
        tmp, "t" * 300 + ".jinja", "file name too long (a component of 306 bytes; the limit is 255)"
    )


def template_config_nested_deep(tmp):
    message = "tokenizer_config.json: not a readable JSON file (nested deeper than the limit of 1,000 levels)"
    deep = '{"a":' * 10_000 + "1" + "}" * 10_000
    return _template_row(tmp, "tokenizer_config.json", message, process=True, text=deep)


def template_config_huge_integer(tmp):
    text = '{"chat_template": "x", "n": ' + "9" * 5000 + "}"
    return _template_row(tmp, "chat_template.json", "chat_template.json: not a readable JSON file", text=text)


def template_fifo(tmp):
    os.mkfifo(tmp / "t.jinja")
    return _template_row(tmp, tmp / "t.jinja", "t.jinja: not a regular file (a FIFO)", process=True)


def template_gguf_fifo(tmp):
    os.mkfifo(tmp / "t.gguf")
    message = "t.gguf: not a readable GGUF file (not a regular file (a FIFO))"
    return _template_row(tmp, tmp / "t.gguf", message, process=True)


def template_nested_loops(tmp):
    """range(10**5) inside range(10**5) (a hang past 60 s before): the step budget (or, on a
    machine loaded enough, the time budget first: either ends it)."""
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    message = "loop.jinja: the chat template ran past its render budget: it "
    return _template_row(tmp, "loop.jinja", message, process=True, text=loop)


def template_huge_string(tmp):
    """`'x' * 3000000000` (a MemoryError after 2.9 GB before): refused before it is made."""
    message = "a repeated value would be 3,000,000,000 characters, over the limit of"
    return _template_row(tmp, "big.jinja", message, process=True, text="{{ 'x' * 3000000000 }}" + TEMPLATE)


def template_budget_met_by_a_real_state(tmp):
    """A template whose loops grow with the message (the state's length squared): fine on the
    probe at start-up, past its budget on a 3,000-character state; exit 2 naming it."""
    quad = write(
        tmp / "quad.jinja",
        "{% for m in messages %}{% for c in m['content'] %}{% for d in m['content'] %}{% endfor %}"
        "{% endfor %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}<|assistant|>",
    )
    request = _request(tmp, "x" * 3000)
    return Case(
        ["check", "--engine", "llm2jev", "--chat-template", quad, request],
        2,
        "quad.jinja: the chat template ran past its render budget",
        [quad, request],
        process=True,
    )


def template_within_budget_lints(tmp):
    """The same sandbox and budget leave an ordinary template alone."""
    plain = write(tmp / "plain.jinja", TEMPLATE)
    request = _request(tmp)
    return Case(
        ["check", "--engine", "llm2jev", "--chat-template", plain, request, "-f", "json"],
        0,
        None,
        [plain, request],
        lambda r, t: json.loads(r.stdout)["findings"] == [],
    )


# --------------------------------------------------------------------------- first round, cost


def config_pyproject_not_utf8(tmp):
    schema = write(tmp / "s.json", CLEAN)
    pyproject = tmp / "pyproject.toml"
    pyproject.write_bytes(b"[tool.pcdlint]\nselect = ['\xff']\n")
    return Case(["check", schema], 2, "pyproject.toml: config is not UTF-8", [schema, pyproject])


def tokenizer_parent_of_a_missing_folder(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(["check", "-t", "a/..", schema], 2, "tokenizer 'a/..': no such file or directory", [schema])


def tokenizer_name_the_hub_refuses(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(["check", "-t", "org/name--x", schema], 2, "unknown tokenizer 'org/name--x'", [schema])


def missing_file_among_others(tmp):
    """`check nope.json good.json bad.json`: the others linted (their findings shown, the JSON
    lists them), the missing one reported, exit 2."""
    good, bad = write(tmp / "good.json", CLEAN), write(tmp / "bad.json", BAD)
    text = run_in_process(["check", "nope.json", "good.json", "bad.json"], tmp)
    assert text.returncode == 2 and " PCD001 " in text.stdout.decode(), text

    def check(result, tmp):
        report = json.loads(result.stdout)
        assert sorted(f["path"] for f in report["files"]) == ["bad.json", "good.json"]
        assert [f["path"] for f in report["findings"]] == ["bad.json"]

    return Case(
        ["check", "nope.json", "good.json", "bad.json", "-f", "json"],
        2,
        "nope.json: cannot read file (No such file or directory)",
        [good, bad],
        check,
    )


def option_of_30000_characters(tmp):
    """Linted (the Python BPE is n log n in a piece's length now: 48 s for 20,000 before)."""
    schema = write(tmp / "long.json", {"properties": {"x": {"enum": ["a" * 30_000, "b"]}}})
    return Case(
        ["check", "--no-cache", schema, "-f", "json"],
        0,
        None,
        [schema],
        lambda r, t: json.loads(r.stdout)["files"][0]["sites"][0]["options"] == 2,
        process=True,
    )


def option_over_the_length_limit(tmp):
    """A 10 MB option (a hang past 300 s before): refused in one line naming the limit."""
    schema = write(tmp / "long.json", {"properties": {"x": {"enum": ["b" * 10_000_000, "b"]}}})
    other = write(tmp / "bad.json", BAD)
    return Case(
        ["check", schema, other],
        2,
        "long.json: the option at /properties/x/enum/0 is 10,000,000 characters, over the limit of 100,000",
        [schema, other],
        lambda r, t: " PCD001 " in r.stdout.decode(),
        process=True,
    )


def label_over_the_length_limit(tmp):
    """The same limit for an eval config's label set (its sites join the file's after the crawl)."""
    task = write(
        tmp / "task.yaml", f"task: t\noutput_type: multiple_choice\ndoc_to_choice: ['{'c' * 100_001}', 'd']\n"
    )
    return Case(["check", task], 2, "task.yaml: the option at /doc_to_choice/0 is 100,001 characters", [task])


ROWS = [
    include_outside_relative,
    include_absolute_system_files,
    include_symlink_out_of_the_tree,
    include_nul_byte,
    include_name_too_long,
    include_fan_out,
    include_itself_forty_times_cached,
    include_chain_of_97,
    include_too_many_files,
    include_too_many_bytes,
    include_template_above_the_tasks_folder,
    include_without_marker_stays_in_the_named_folder,
    template_unknown_user,
    template_name_too_long,
    template_config_nested_deep,
    template_config_huge_integer,
    template_fifo,
    template_gguf_fifo,
    template_nested_loops,
    template_huge_string,
    template_budget_met_by_a_real_state,
    template_within_budget_lints,
    config_pyproject_not_utf8,
    tokenizer_parent_of_a_missing_folder,
    tokenizer_name_the_hub_refuses,
    missing_file_among_others,
    option_of_30000_characters,
    option_over_the_length_limit,
    label_over_the_length_limit,
]


@pytest.mark.parametrize("row", ROWS, ids=[r.__name__ for r in ROWS])
def test_hostile_input(row, tmp_path):
    _assert_case(row(tmp_path), tmp_path)


# --------------------------------------------------------------------------- nothing outside read


_OPENED: list[str] = []
_WATCHING: list[bool] = []


def _watch_opens() -> None:
    """Record the path of every file opened in this process while _WATCHING (an audit hook:
    builtins.open, io.open and os.open all raise the `open` event)."""
    if _WATCHING:
        return

    def hook(event: str, args: tuple) -> None:
        if event == "open" and _WATCHING[0] and isinstance(args[0], (str, bytes, os.PathLike)):
            _OPENED.append(os.path.realpath(os.fsdecode(args[0])))

    _WATCHING.append(False)
    sys.addaudithook(hook)


def test_an_include_outside_the_tree_is_never_opened(tmp_path):
    """The include of a file outside the project (relative, absolute, through a link) is a note:
    the file is not opened, with the cache cold and warm."""
    folder = _project(tmp_path)
    (folder / "link.yaml").symlink_to(tmp_path / "outside" / "base.yaml")
    tasks = [
        _task(folder, "rel.yaml", "../../outside/base.yaml", ""),
        _task(folder, "abs.yaml", str(tmp_path / "outside" / "base.yaml"), ""),
        _task(folder, "via_link.yaml", "link.yaml", ""),
    ]
    _watch_opens()
    outside = os.path.realpath(tmp_path / "outside")
    for _ in range(2):  # cold, then from the analysis cache (whose check looks at each include)
        _OPENED.clear()
        _WATCHING[0] = True
        try:
            done = run_in_process(["check", "--jobs", "1", *tasks], tmp_path)
        finally:
            _WATCHING[0] = False
        assert done.returncode == 1, done.stderr
        assert sum("outside the project root" in n for n in _notes(done)) == 3, _notes(done)
        assert any(p.endswith("rel.yaml") for p in _OPENED)  # (the hook sees the run's opens)
        assert not [p for p in _OPENED if p.startswith(outside)], _OPENED


# --------------------------------------------------------------------------- the analysis cache


@pytest.mark.parametrize(
    "shape",
    [
        "include: [base.yaml]\n",  # a flow list
        "include:\n- base.yaml\n",  # a list not indented
        "json",  # a JSON task
        "nested",  # task → mid.yaml → base.yaml
    ],
)
def test_the_cached_analysis_follows_every_included_file(shape, tmp_path):
    """The analysis cache checks the content of every file the analysis read: after the
    included file changes, the cached run reports what --no-cache does (before: the text scan
    of `include:` lines missed these four, and the cached run kept exit 0)."""
    folder = _project(tmp_path)
    base = write(folder / "base.yaml", "output_type: generate_until\n")
    if shape == "json":
        task = write(
            folder / "task.json", {"include": "base.yaml", "task": "t", "doc_to_choice": ["no", "no way"]}
        )
    elif shape == "nested":
        write(folder / "mid.yaml", "include: base.yaml\n")
        task = _task(folder, "task.yaml", "mid.yaml", "")
    else:
        task = write(folder / "task.yaml", f"{shape}task: t\ndoc_to_choice: {LABELS}\n")
    assert run_in_process(["check", task], tmp_path).returncode == 0
    assert run_in_process(["check", task], tmp_path).returncode == 0  # (from the cache)
    base.write_text("output_type: multiple_choice\nmetric_list:\n  - metric: acc\n")
    cached = run_in_process(["check", task, "-f", "json"], tmp_path)
    fresh = run_in_process(["check", "--no-cache", task, "-f", "json"], tmp_path)
    assert fresh.returncode == cached.returncode == 1
    assert json.loads(cached.stdout)["findings"] == json.loads(fresh.stdout)["findings"]


def test_an_include_that_appears_is_read(tmp_path):
    """A missing include is in the entry too: once the file exists, the task is read again."""
    folder = _project(tmp_path)
    task = _task(folder, "task.yaml", "later.yaml", "")
    first = run_in_process(["check", task, "-f", "json"], tmp_path)
    assert first.returncode == 1 and {f["engine"] for f in json.loads(first.stdout)["findings"]} == {
        "lm-eval-acc"
    }
    write(folder / "later.yaml", "output_type: generate_until\n")
    assert run_in_process(["check", task], tmp_path).returncode == 0


def test_one_template_included_by_many_tasks_is_read_once(tmp_path, monkeypatch):
    """60 tasks including one template: it is parsed once in the process (auditor.schema.includes)."""
    from auditor.schema import includes

    folder = _project(tmp_path)
    write(folder / "_template.yaml", "output_type: multiple_choice\nmetric_list:\n  - metric: acc\n")
    for i in range(60):
        _task(folder, f"t{i}.yaml", "_template.yaml", "")
    parsed = []
    real = includes.parse_document
    monkeypatch.setattr(includes, "parse_document", lambda *a, **k: parsed.append(a[2]) or real(*a, **k))
    done = run_in_process(["check", "--jobs", "1", "--no-cache", str(folder)], tmp_path)
    assert done.returncode == 1
    assert len(parsed) == 1, parsed


# --------------------------------------------------------------------------- the render budget

HOSTILE_TEMPLATES = {
    "nested loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "a huge repeat": "{{ 'x' * 3000000000 }}",
    "a float made an int": "{{ 'x' * (3e9|int) }}",
    "recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    "replace method": "{{ ('x' * 1000).replace('x', 'y' * 1000).replace('y', 'z' * 1000) }}",
    "replace filter": "{{ ('x' * 1000)|replace('x', 'y' * 1000)|replace('y', 'z' * 1000) }}",
    "join filter": "{{ (['x' * 1000000] * 1000)|join }}",
    "join method": "{{ ''.join(['x' * 1000000] * 1000) }}",
    "percent width": "{{ '%999999999d' % 1 }}",
    "format width": "{{ '{:>999999999}'.format(1) }}",
    "format filter (folded at compile time)": "{{ '%999999999d'|format(1) }}",
    "indent": "{{ ('x\\n' * 100000)|indent(100000) }}",
    "tojson indent": "{{ range(100000)|list|tojson(indent=100000) }}",
    "doubling": "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "lipsum": "{{ lipsum(999999) }}",
    "many centred": "{% for i in range(100000) %}{{ 'x'|center(999999) }}{% endfor %}",
    "long output": "{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}",
    "expandtabs": "{{ ('\\t' * 1000000).expandtabs(1000000) }}",
    "slice": "{{ [1, 2]|slice(999999999)|list|length }}",
    "a list grown in a loop": "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}{% endfor %}",
}


@pytest.mark.parametrize("source", HOSTILE_TEMPLATES.values(), ids=HOSTILE_TEMPLATES.keys())
def test_a_template_past_its_budget_is_refused(source):
    """Loops, recursion, time and the size of every value a template makes are bounded: each
    of these ends in a ChatTemplateBudgetError (a usage error: exit 2), none in a hang or in
    gigabytes (a value's size is checked before it is made: "would be N characters")."""
    from auditor.errors import UsageError
    from auditor.pcd.chat import ChatTemplateBudgetError, ChatTemplateError, render_chat

    with pytest.raises(ChatTemplateBudgetError, match="ran past its render budget") as caught:
        render_chat(source, [{"role": "user", "content": "x"}])
    assert isinstance(caught.value, UsageError) and not isinstance(caught.value, ChatTemplateError)
    assert "\n" not in str(caught.value)


def test_the_budget_leaves_real_templates_as_transformers_renders_them(smollm2):
    """The shipped ChatML and SmolLM2's own template render as jinja2's plain sandbox renders
    them (the budget checks, it never changes a value)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from auditor.pcd.chat import check_template, render_chat
    from auditor.tokenizers.templates import builtin_chat_template

    messages = [{"role": "user", "content": "état: " + "x " * 2000}, {"role": "assistant", "content": "ok"}]
    for name in ("qwen2.5", "qwen3.6", "smollm2"):
        template = builtin_chat_template(name)
        if template is None:
            continue
        check_template(template.source)
        plain = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
        )
        expected = plain.from_string(template.source).render(
            messages=messages, add_generation_prompt=True, bos_token="", eos_token="", enable_thinking=False
        )
        assert render_chat(template.source, messages, enable_thinking=False) == expected, name


def test_the_budget_is_per_render_and_per_thread():
    """A render after one that ran past its budget has the whole budget again; a render on
    another thread has its own (the meter is the thread's)."""
    import threading

    from auditor.pcd.chat import ChatTemplateBudgetError, RenderBudget, render_chat

    small = RenderBudget(steps=5_000, seconds=5, characters=10_000)
    loop = "{% for i in range(100000) %}{{ '' }}{% endfor %}done"
    tracer = sys.gettrace()  # (a coverage or debugger trace function is given back after)
    with pytest.raises(ChatTemplateBudgetError, match="5,000 template steps"):
        render_chat(loop, [], budget=small)
    assert sys.gettrace() is tracer
    assert render_chat("{% for i in range(1000) %}{% endfor %}done", [], budget=small) == "done"
    results = []
    worker = threading.Thread(target=lambda: results.append(render_chat("{{ 'a' * 3 }}", [], budget=small)))
    worker.start()
    worker.join(30)
    assert results == ["aaa"]
