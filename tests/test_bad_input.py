"""The bad-input table (issue 13): one row per class of hostile input, file or cache.

Every row runs the real CLI and asserts the exact exit code, that a usage error is one line
naming the offending file (never a traceback, never "internal error"), and that every input's
bytes are unchanged afterwards. Rows whose point is the process itself (its standard output, a
FIFO or device it must not block on, deep nesting against the interpreter's stack, an
undecodable argv, torch) run it in a subprocess; the others in this process through click's
runner, which sees the same exit code, streams and files (an exception escaping the CLI is
written to stderr as the traceback a process would print). Rows needing something this machine
cannot make (root for /dev writes) skip with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support import run_cli_bytes, seed_cache

CLEAN = {"type": "object", "properties": {"sentiment": {"enum": ["positive", "negative"]}}}
BAD = {"type": "object", "properties": {"code": {"enum": ["CAT_001", "CAT_002", "CAT_103"]}}}
INJECT = "\n::error file=x.json::forged\r\x1b[2J\x07\u202eevil"


def run(
    args, cwd: Path, env: dict | None = None, stdout=subprocess.PIPE, timeout: int = 120, **kwargs
) -> subprocess.CompletedProcess:
    full_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "PCDLINT_CACHE_DIR": str(seed_cache(cwd / ".cache")),
        **(env or {}),
    }
    full_env.pop("GITHUB_ACTIONS", None)
    full_env.pop("PCDLINT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "auditor", *map(os.fsdecode, args)],
        cwd=cwd,
        env=full_env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=timeout,
        **kwargs,
    )


def run_in_process(args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """`run` without the subprocess: the CLI called through click's runner in `cwd`."""
    return run_cli_bytes(
        *args,
        cwd=cwd,
        env={
            "HF_HUB_OFFLINE": "1",
            "PCDLINT_CACHE_DIR": str(seed_cache(cwd / ".cache")),
            "GITHUB_ACTIONS": None,
            "PCDLINT_DEBUG": None,
            **(env or {}),
        },
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else f"<{path.lstat().st_mode:o}>"


def write(path: Path, value) -> Path:
    path.write_text(
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), encoding="utf-8"
    )
    return path


@dataclass
class Case:
    args: list
    code: int
    message: str | None = None  # stderr holds exactly one error line, containing this
    inputs: list = field(default_factory=list)  # paths whose bytes must not change
    check: object = None  # extra assertion: check(result, tmp)
    env: dict = field(default_factory=dict)
    stdout: object = subprocess.PIPE
    process: bool = False  # run in a subprocess: the row is about the process (see the docstring)


def _nest(levels: int, keyword: str = "properties") -> str:
    if keyword == "properties":
        opening, closing = '{"type":"object","properties":{"x":', "}}"
    elif keyword == "items":
        opening, closing = '{"type":"array","items":', "}"
    else:
        opening, closing = '{"allOf":[', "]}"
    return opening * levels + '{"enum":["alpha","beta"]}' + closing * levels


# --------------------------------------------------------------------------- rows


def caches_pickle_never_executed(tmp):
    schema = write(tmp / "s.json", BAD)
    first = run_in_process(["check", schema, "-f", "json"], tmp)
    entries = sorted((tmp / ".cache" / "analysis").glob("*.json"))
    assert entries and first.returncode == 1

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {tmp / 'pwned'}",))

    for entry in entries:  # a planted pickle under the entry's own name, and a legacy one
        entry.write_bytes(pickle.dumps(Boom()))
        entry.with_suffix(".pickle").write_bytes(pickle.dumps(Boom()))

    def check(result, tmp):
        assert not (tmp / "pwned").exists(), "the cache executed code"
        assert json.loads(result.stdout)["findings"] == json.loads(first.stdout)["findings"]
        header = json.loads(entries[0].read_bytes().splitlines()[0])  # rebuilt, as data
        assert header["format"] == "pcdlint-analysis"

    return Case(["check", schema, "-f", "json"], 1, None, [schema], check)


def cache_corrupt_or_tampered(tmp):
    schema = write(tmp / "s.json", BAD)
    assert run_in_process(["check", schema], tmp).returncode == 1
    entry = next((tmp / ".cache" / "analysis").glob("*.json"))
    header, payload = entry.read_bytes().split(b"\n", 1)
    # same checksum header, payload edited to drop every site: must be refused, not believed
    data = json.loads(payload)
    data["sites"] = []
    entry.write_bytes(header + b"\n" + json.dumps(data).encode())
    return Case(["check", schema], 1, None, [schema], lambda r, t: " PCD001 " in r.stdout.decode())


def cache_truncated(tmp):
    schema = write(tmp / "s.json", BAD)
    assert run_in_process(["check", schema], tmp).returncode == 1
    entry = next((tmp / ".cache" / "analysis").glob("*.json"))
    entry.write_bytes(entry.read_bytes()[:50])
    return Case(["check", schema], 1, None, [schema], lambda r, t: " PCD001 " in r.stdout.decode())


def _needs_writable(path: str):
    if not os.access(path, os.W_OK):
        pytest.skip(f"{path} is not writable here")


def out_dev_null(tmp):
    _needs_writable("/dev/null")
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema, "-o", "/dev/null", "--output-html", "/dev/null"],
        0,
        None,
        [schema],
        lambda r, t: stat.S_ISCHR(os.stat("/dev/null").st_mode),
    )


def out_dev_full(tmp):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema, "-o", "/dev/full"],
        2,
        "--output /dev/full: cannot write",
        [schema],
        lambda r, t: stat.S_ISCHR(os.stat("/dev/full").st_mode),
    )


def out_dev_stdout(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema, "-o", "/dev/stdout"],
        0,
        None,
        [schema],
        lambda r, t: (
            os.path.islink("/dev/stdout") or (not os.path.isfile("/dev/stdout") and b"0 findings" in r.stdout)
        ),
        process=True,
    )


def out_dash_is_stdout(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema, "-o", "-", "-f", "json"],
        0,
        None,
        [schema],
        lambda r, t: not (t / "-").exists() and json.loads(r.stdout)["version"] == 1,
    )


def out_fifo_written_through(tmp):
    schema = write(tmp / "s.json", CLEAN)
    fifo = tmp / "report.fifo"
    os.mkfifo(fifo)
    received = []

    def reader():
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()

    def check(result, tmp):
        thread.join(10)
        return stat.S_ISFIFO(os.lstat(fifo).st_mode) and b"0 findings" in received[0]

    return Case(["check", schema, "-o", fifo], 0, None, [schema], check, process=True)


def out_symlink_keeps_link(tmp):
    schema = write(tmp / "s.json", CLEAN)
    (tmp / "real.txt").write_text("old")
    (tmp / "link.txt").symlink_to("real.txt")
    return Case(
        ["check", schema, "-o", "link.txt"],
        0,
        None,
        [schema],
        lambda r, t: (t / "link.txt").is_symlink() and "0 findings" in (t / "real.txt").read_text(),
    )


def out_planted_temp_symlink(tmp):
    schema = write(tmp / "s.json", CLEAN)
    victim = write(tmp / "victim.json", {"keep": "me"})
    (tmp / ".report.txt.tmp").symlink_to(victim)  # the old predictable temp name
    return Case(
        ["check", schema, "-o", "report.txt"],
        0,
        None,
        [schema, victim],
        lambda r, t: "0 findings" in (t / "report.txt").read_text(),
    )


def out_is_input(tmp):
    schema = write(tmp / "s.json", BAD)
    return Case(["check", schema, "-o", schema], 2, "refusing to overwrite an input file", [schema])


def out_html_is_input(tmp):
    schema = write(tmp / "s.json", BAD)
    return Case(["check", schema, "--output-html", schema], 2, "refusing to overwrite an input", [schema])


def baseline_is_input(tmp):
    schema = write(tmp / "s.json", BAD)
    return Case(["check", schema, "--write-baseline", schema], 2, "refusing to overwrite an input", [schema])


def out_is_input_inside_directory(tmp):
    (tmp / "d").mkdir()
    schema = write(tmp / "d" / "s.json", BAD)
    return Case(["check", "d", "-o", "d/s.json"], 2, "refusing to overwrite an input file", [schema])


def out_same_path_twice(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema, "-o", "r.html", "--output-html", "r.html"],
        2,
        "--output-html r.html: same file as --output",
        [schema],
        lambda r, t: not (t / "r.html").exists(),
    )


def stdout_full(tmp):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema],
        2,
        "standard output: cannot write",
        [schema],
        stdout=open("/dev/full", "wb"),
        process=True,
    )


def stdout_read_only(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema],
        2,
        "standard output: cannot write",
        [schema],
        stdout=open(os.devnull, "rb"),
        process=True,
    )


def yaml_alias_bomb(tmp):
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for i in range(1, 9):
        text += f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9) + "]\n"
    bomb = write(tmp / "bomb.yaml", text)
    return Case(["check", bomb], 2, "bomb.yaml: YAML aliases expand to more than", [bomb], process=True)


def fifo_input_named(tmp):
    fifo = tmp / "in.json"
    os.mkfifo(fifo)
    return Case(["check", fifo], 2, "in.json: not a regular file (a FIFO)", [fifo], process=True)


def fifo_in_directory_skipped(tmp):
    (tmp / "d").mkdir()
    schema = write(tmp / "d" / "a.json", CLEAN)
    os.mkfifo(tmp / "d" / "b.json")
    return Case(
        ["check", "d"],
        0,
        "b.json: note: not a regular file; skipped",
        [schema],
        lambda r, t: "1 file" in r.stdout.decode(),
        process=True,
    )


def symlink_leaving_directory(tmp):
    """A walk never follows a link out of the tree: a file or folder link leaving it is refused
    (exit 2, one line each); the files inside are still linted."""
    (tmp / "d").mkdir()
    (tmp / "outside").mkdir()
    outside = write(tmp / "outside" / "o.json", BAD)
    (tmp / "d" / "link.json").symlink_to(outside)
    (tmp / "d" / "zero.json").symlink_to("/dev/zero")
    (tmp / "d" / "folder").symlink_to(tmp / "outside")
    schema = write(tmp / "d" / "a.json", CLEAN)

    def check(result, tmp):
        err = result.stderr.decode()
        # a run that exits 2 prints no verdict (issue 32), but still ends with its summary and
        # names the files in error (issue 45)
        out = result.stdout.decode()
        assert "decided wrongly" not in out and "0 findings in 1 file" in out
        assert out.rstrip().endswith("3 files in error (not read): d/folder, d/link.json, d/zero.json"), out
        assert err.count("symlink leaves the linted directory; refused") == 3, err
        assert " PCD001 " not in result.stdout.decode()

    return Case(["check", "d"], 2, None, [schema, outside], check)


def dev_zero_input(tmp):
    return Case(["check", "/dev/zero"], 2, "/dev/zero: not a regular file (a character device)", process=True)


def file_too_big(tmp):
    big = tmp / "big.json"
    with big.open("wb") as handle:
        handle.write(b'{"enum": ["a", "b"], "pad": "')
        handle.write(b"x" * 21_000_000)
        handle.write(b'"}')
    return Case(["check", big], 2, "big.json: file is 21,000,031 bytes, over the limit of 20,000,000", [big])


def file_over_configured_limit(tmp):
    schema = write(tmp / "s.json", CLEAN)
    (tmp / ".pcdlint.toml").write_text("max-file-bytes = 50\n")
    return Case(["check", schema], 2, "over the limit of 50 (config key max-file-bytes)", [schema])


def deep_json(tmp):
    deep = write(tmp / "deep.json", "[" * 5000 + "]" * 5000)
    other = write(tmp / "other.json", BAD)  # still linted: the failure is per file
    return Case(
        ["check", deep, other],
        2,
        "deep.json: nested",
        [deep, other],
        lambda r, t: " PCD001 " in r.stdout.decode(),
        process=True,
    )


def deep_yaml(tmp):
    deep = write(tmp / "deep.yaml", _nest(700))
    return Case(["check", deep], 2, "deep.yaml: nested", [deep], process=True)


def deep_schema(tmp, keyword="properties"):
    deep = write(tmp / "deep.json", _nest(1200, keyword))
    return Case(["check", deep], 2, "deep.json: nested", [deep], process=True)


def deep_clean_schema_lints_clean(tmp):
    clean = write(tmp / "clean100.json", _nest(100))
    items = write(tmp / "items300.json", _nest(300, "items"))
    return Case(
        ["check", clean, items, "--no-cache"],
        0,
        None,
        [clean, items],
        lambda r, t: "0 findings in 2 files" in r.stdout.decode(),
    )


def lone_surrogate_option(tmp):
    bad = write(tmp / "sur.json", '{"enum": ["\\ud800x", "b"]}')
    return Case(["check", bad], 2, "sur.json: lone surrogate U+D800 in a string at /enum/0", [bad])


def reversed_surrogate_key(tmp):
    bad = write(tmp / "sur.json", '{"properties": {"\\udc00\\ud800": {"enum": ["a", "b"]}}}')
    return Case(["check", bad], 2, "sur.json: lone surrogate U+DC00", [bad])


def schema_keyword_not_string(tmp):
    bad = write(tmp / "s5.json", {"$schema": 5, "enum": ["alpha", "beta"]})
    return Case(
        ["check", bad],
        1,
        None,
        [bad],
        lambda r, t: "s5.json:1:" in r.stdout.decode() and "PCD000" in r.stdout.decode(),
    )


def huge_integer(tmp):
    bad = write(tmp / "int.json", '{"enum": [' + "9" * 5000 + ", 1]}")
    return Case(["check", bad], 2, "int.json: integer literal with 5,000 digits", [bad])


def huge_integer_yaml(tmp):
    bad = write(tmp / "int.yaml", "enum: [" + "9" * 5000 + ", 1]\n")
    return Case(["check", bad], 2, "int.yaml: invalid YAML value", [bad])


def config_not_utf8(tmp):
    schema = write(tmp / "s.json", CLEAN)
    (tmp / ".pcdlint.toml").write_bytes(b"select = ['\xff\xfe']\n")
    return Case(["check", schema], 2, ".pcdlint.toml: config is not UTF-8", [schema, tmp / ".pcdlint.toml"])


def _undecodable_name(tmp, name: bytes = b"odd\xff.json") -> Path:
    """A schema file named by bytes that are not UTF-8 (as Python sees it: fsdecoded)."""
    name = os.fsencode(tmp) + b"/" + name
    try:
        with open(name, "w", encoding="utf-8") as handle:
            json.dump(BAD, handle)
    except OSError:
        pytest.skip("this file system refuses undecodable names")
    return Path(os.fsdecode(name))


def file_name_not_utf8(tmp):
    path = _undecodable_name(tmp, b"bad\xff\n::error::x.json")

    def check(result, tmp):
        out, err = result.stdout.decode(), result.stderr.decode()
        assert "bad\\udcff" in out  # shown escaped, not a crash
        assert not any(line.lstrip().startswith("::") for line in (out + err).splitlines())

    return Case(["check", tmp], 1, None, [path], check, process=True)


def file_name_not_utf8_in_reports(tmp):
    """An undecodable name given directly, into SARIF and JSON (fingerprints, artifact URIs)."""
    path = _undecodable_name(tmp)

    def check(result, tmp):
        sarif = json.loads(result.stdout)
        location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].endswith("odd%FF.json")  # its own byte
        report = json.loads((tmp / "r.json").read_bytes())
        assert report["files"][0]["path"].endswith("odd\udcff.json")

    return Case(
        ["check", path, "-f", "sarif", "--output-json", tmp / "r.json"], 1, None, [path], check, process=True
    )


def file_name_not_utf8_in_baseline(tmp):
    path = _undecodable_name(tmp)

    def check(result, tmp):
        assert json.loads((tmp / "b.json").read_bytes())["findings"]

    return Case(["check", path, "--write-baseline", tmp / "b.json"], 0, None, [path], check, process=True)


def file_name_injection_on_stderr(tmp):
    name = tmp / "x\n::error::forged.json"
    write(name, "{not json")
    return Case(["check", name, "-f", "github"], 2, "x\\x0a::error::forged.json:1:2: invalid JSON", [name])


def fake_tiktoken(tmp):
    schema = write(tmp / "s.json", CLEAN)
    fake = tmp / "fake.tiktoken"
    fake.write_text("not a tiktoken file\n")
    return Case(["check", "-t", fake, schema], 2, "fake.tiktoken: not a", [schema, fake])


def fake_gguf_tokenizer(tmp):
    schema = write(tmp / "s.json", CLEAN)
    fake = tmp / "fake.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 60)
    return Case(["check", "-t", fake, schema], 2, "fake.gguf: not a readable GGUF", [schema, fake])


def fake_gguf_model(tmp):
    pytest.importorskip("torch")
    schema = write(tmp / "s.json", CLEAN)
    fake = tmp / "fake.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 60)
    return Case(
        ["verify", "--model", fake, schema],
        2,
        "fake.gguf: not a loadable GGUF model",
        [schema, fake],
        process=True,
    )


def max_options_zero(tmp):
    schema = write(tmp / "s.json", CLEAN)
    (tmp / ".pcdlint.toml").write_text("[rules.too-many-options]\nmax-options = 0\n")
    return Case(
        ["check", schema], 2, "rules.too-many-options.max-options: must be a positive number", [schema]
    )


def ratio_negative(tmp):
    schema = write(tmp / "s.json", CLEAN)
    (tmp / ".pcdlint.toml").write_text("[rules.length-skew]\nratio = -3\n")
    return Case(["check", schema], 2, "rules.length-skew.ratio: must be a positive number", [schema])


def injection_in_text(tmp):
    bad = write(
        tmp / "inj.json",
        {"type": "object", "properties": {f"key{INJECT}": {"enum": [f"Cat{INJECT}", "Dog"]}}},
    )

    def check(result, tmp):
        out, err = result.stdout.decode(), result.stderr.decode()
        for line in (out + err).splitlines():
            assert not line.lstrip().startswith("::"), line
        for raw in ("\x1b", "\x07", "\r", "\u202e"):
            assert raw not in out + err
        assert "\\u202e" in out

    return Case(["check", bad], 0, None, [bad], check)


def injection_in_suggest(tmp):
    bad = write(
        tmp / "inj.json",
        {
            "type": "object",
            "properties": {f"k{INJECT}": {"enum": [f"CAT_001{INJECT}", "CAT_002", "CAT_103"]}},
        },
    )

    def check(result, tmp):
        out = result.stdout.decode()
        assert out and not any(line.lstrip().startswith("::") for line in out.splitlines())
        assert "\x1b" not in out and "\u202e" not in out

    return Case(["suggest", bad], 0, None, [bad], check)


def injection_in_github_format(tmp):
    bad = write(
        tmp / "inj.json",
        {
            "type": "object",
            "properties": {f"k{INJECT}": {"enum": [f"CAT_001{INJECT}", "CAT_002", "CAT_103"]}},
        },
    )

    def check(result, tmp):
        lines = result.stdout.decode().splitlines()
        commands = [line for line in lines if line.startswith("::")]
        assert len(commands) == len(lines) - 2  # one per field, then the summary and next step
        assert all(
            line.startswith(("::error file=", "::warning file=", "::notice file=")) for line in commands
        )
        assert "%0A" in result.stdout.decode() and "\x1b" not in result.stdout.decode()

    return Case(["check", bad, "-f", "github"], 1, None, [bad], check)


def injection_in_job_summary(tmp):
    hostile = (
        "<script>alert(1)</script><img src=x onerror=alert(1)><svg onload=alert(1)>"
        "[click](javascript:alert(1)) ![i](https://evil/x.png) | cell"
    )
    bad = write(
        tmp / "inj.json",
        {"type": "object", "properties": {hostile: {"enum": ["CAT_001", "CAT_002", "CAT_103"]}}},
    )
    sarif = tmp / "out.sarif"

    def check(result, tmp):
        summary = subprocess.run(
            [sys.executable, "-m", "auditor.reporting.action_summary", "--exit-code", "1", sarif],
            capture_output=True,
            text=True,
            cwd=tmp,
            timeout=60,
        )
        text = summary.stdout
        assert summary.returncode == 0 and "PCD001" in text
        for raw in ("<script", "<img", "<svg"):
            assert raw not in text, raw
        assert not re.search(r"(?<!\\)[\[\]]", text.split("| What goes wrong |", 1)[1]), text  # no live link
        assert "&lt;script&gt;" in text and "\\[click\\](javascript:alert(1))" in text
        results = json.loads(sarif.read_text())["runs"][0]["results"]
        assert all("[click](" not in r["message"]["text"] for r in results)
        assert any("\\[click\\](javascript" in r["message"]["text"] for r in results)

    return Case(["check", bad, "--output-sarif", sarif], 1, None, [bad], check)


def non_finite_numbers_strict_json(tmp):
    bad = write(tmp / "nan.json", '{"enum": [NaN, Infinity, -Infinity, 1e999, "a"], "default": NaN}')

    def check(result, tmp):
        def refuse(constant):
            raise AssertionError(f"non-standard JSON constant {constant}")

        report = json.loads(result.stdout, parse_constant=refuse)
        assert '"Infinity"' in result.stdout.decode() or report["findings"]

    return Case(["check", bad, "-f", "json"], 1, None, [bad], check)


def html_template_text_in_file_name(tmp):
    name = write(tmp / "{{ 7*7 }}.json", "{not json")
    out = tmp / "r.html"
    return Case(
        ["check", name, "--output-html", out],
        2,
        "{{ 7*7 }}.json:1:2: invalid JSON",
        [name],
        lambda r, t: "{{ 7*7 }}" in out.read_text() and ">49<" not in out.read_text(),
    )


LONG = "a" * 5000
LONG_NAME = "b" * 300 + ".json"


def path_too_long(tmp):
    schema = write(tmp / "s.json", BAD)
    return Case(
        ["check", LONG, schema],
        2,
        "path too long (5,000 bytes; the limit is 4,095)",
        [schema],
        lambda r, t: " PCD001 " in r.stdout.decode() and LONG not in r.stderr.decode(),
    )


def name_component_too_long(tmp):
    return Case(["check", LONG_NAME], 2, "file name too long (a component of 305 bytes; the limit is 255)")


def unknown_user_home(tmp):
    return Case(
        ["check", "~nosuchuser36/x.json"],
        2,
        "~nosuchuser36/x.json: no home directory known for user 'nosuchuser36'",
    )


def tokenizer_path_too_long(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", "-t", LONG, schema],
        2,
        "tokenizer aaaa",
        [schema],
        lambda r, t: "path too long" in r.stderr.decode() and LONG not in r.stderr.decode(),
    )


def tokenizer_unknown_user(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", "-t", "~nosuchuser36/tokenizer.json", schema],
        2,
        "tokenizer ~nosuchuser36/tokenizer.json: no home directory known",
        [schema],
    )


def config_path_too_long(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", "--config", "d/" * 3000, schema],
        2,
        "--config d/d/",
        [schema],
        lambda r, t: "path too long" in r.stderr.decode(),
    )


def config_unknown_user(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", "--config", "~nosuchuser36/c.toml", schema],
        2,
        "--config ~nosuchuser36/c.toml: no home directory known",
        [schema],
    )


def config_tokenizer_unknown_user(tmp):
    schema = write(tmp / "s.json", CLEAN)
    config = tmp / ".pcdlint.toml"
    config.write_text('tokenizers = ["~nosuchuser36/t.json"]\n')
    return Case(
        ["check", schema], 2, "tokenizer ~nosuchuser36/t.json: no home directory known", [schema, config]
    )


def suggest_name_too_long(tmp):
    return Case(
        ["suggest", "--write", "fixed.json", LONG_NAME],
        2,
        "file name too long",
        check=lambda r, t: not (t / "fixed.json").exists(),
    )


def verify_model_unknown_user(tmp):
    schema = write(tmp / "s.json", BAD)
    return Case(
        ["verify", "--model", "~nosuchuser36/model", schema],
        2,
        "--model ~nosuchuser36/model: no home directory known",
        [schema],
    )


def max_depth_over_the_stack_cap(tmp):
    """`max-depth = 50000` cannot lift the limit past what the analysis stack takes (it used to
    end in SIGSEGV on a schema 10,000 `properties` deep): the cap is in the message."""
    deep = write(tmp / "deep.json", _nest(10_000))
    config = tmp / ".pcdlint.toml"
    config.write_text("max-depth = 50000\n")
    return Case(
        ["check", deep],
        2,
        "over the limit of 8000 (config key max-depth, capped at 8000",
        [deep, config],
        process=True,
    )


def out_fifo_without_reader(tmp):
    """`-o FIFO` with nobody reading: one line, exit 2, never a hang (the row runs with a timeout)."""
    schema = write(tmp / "s.json", CLEAN)
    fifo = tmp / "report.fifo"
    os.mkfifo(fifo)
    return Case(
        ["check", schema, "-o", fifo],
        2,
        "--output",
        [schema],
        lambda r, t: "a FIFO with no reader" in r.stderr.decode() and stat.S_ISFIFO(os.lstat(fifo).st_mode),
        process=True,
    )


def baseline_dev_zero(tmp):
    schema = write(tmp / "s.json", CLEAN)
    return Case(
        ["check", schema, "--baseline", "/dev/zero"],
        2,
        "--baseline /dev/zero: not a regular file (a character device)",
        [schema],
        process=True,
    )


def baseline_fifo(tmp):
    schema = write(tmp / "s.json", CLEAN)
    os.mkfifo(tmp / "b.fifo")
    return Case(
        ["check", schema, "--baseline", tmp / "b.fifo"],
        2,
        "b.fifo: not a regular file (a FIFO)",
        [schema],
        process=True,
    )


def baseline_nested_too_deep(tmp):
    schema = write(tmp / "s.json", CLEAN)
    baseline = write(tmp / "b.json", "[" * 100_000 + "]" * 100_000)
    return Case(
        ["check", schema, "--baseline", baseline],
        2,
        "b.json: not a pcdlint baseline",
        [schema, baseline],
        process=True,
    )


def config_nested_inline_tables(tmp):
    schema = write(tmp / "s.json", CLEAN)
    config = tmp / ".pcdlint.toml"
    config.write_text("x = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n")
    return Case(
        ["check", schema], 2, ".pcdlint.toml: invalid TOML: nested too deeply", [schema, config], process=True
    )


def config_huge_integer(tmp):
    schema = write(tmp / "s.json", CLEAN)
    config = tmp / ".pcdlint.toml"
    config.write_text("max-depth = " + "9" * 5000 + "\n")
    return Case(
        ["check", schema],
        2,
        ".pcdlint.toml: invalid TOML:",
        [schema, config],
        lambda r, t: "9" * 200 not in r.stderr.decode(),
    )


def config_is_a_fifo(tmp):
    """A FIFO named .pcdlint.toml is not a config file: never opened (no hang), not used."""
    schema = write(tmp / "s.json", CLEAN)
    os.mkfifo(tmp / ".pcdlint.toml")
    return Case(
        ["check", schema], 0, None, [schema], lambda r, t: "0 findings" in r.stdout.decode(), process=True
    )


def python_ref_prints_on_import(tmp):
    """What a `mod:Model` module prints while imported (Python or a child process) goes to
    stderr: stdout stays one clean JSON document."""
    (tmp / "noisy36.py").write_text(
        "import os\nprint('{not json')\nos.system('echo child-output')\nfrom enum import Enum\n"
        "class Code(str, Enum):\n    A = 'CAT_001'\n    B = 'CAT_002'\n    C = 'CAT_103'\n"
    )

    def check(result, tmp):
        report = json.loads(result.stdout)
        assert report["version"] == 1 and report["findings"]
        assert "{not json" in result.stderr.decode() and "child-output" in result.stderr.decode()

    return Case(["check", "-f", "json", "noisy36:Code"], 1, None, [tmp / "noisy36.py"], check, process=True)


def tokenizer_cache_memo_damaged(tmp):
    """A damaged or planted file-hash memo of the tokenizer cache (invalid UTF-8, a path) is
    recomputed, never an internal error nor a path outside the cache."""
    schema = write(tmp / "s.json", BAD)
    assert run_in_process(["check", schema], tmp).returncode == 1
    memos = sorted((tmp / ".cache" / "sha256").glob("*.txt"))
    assert memos
    for memo in memos:  # replaced, not written into: the seeded cache is hard-linked
        memo.unlink()
        memo.write_bytes(b"\xff\xfe\x00garbage" if memo == memos[0] else b"../../../../outside")
    return Case(["check", schema], 1, None, [schema], lambda r, t: " PCD001 " in r.stdout.decode())


def python_m_auditor_ignores_planted_modules(tmp):
    """`python -m auditor` in a tree holding click.py, csv.py, fnmatch.py, orjson.py or
    tomllib.py: the working directory is dropped from sys.path, nothing of it is imported."""
    schema = write(tmp / "s.json", BAD)
    planted = []
    for name in ("click", "csv", "fnmatch", "orjson", "tomllib"):
        planted.append(write(tmp / f"{name}.py", f"open({str(tmp / ('PWNED_' + name))!r}, 'w').close()\n"))
    return Case(
        ["check", schema],
        1,
        None,
        [schema, *planted],
        lambda r, t: " PCD001 " in r.stdout.decode() and not list(t.glob("PWNED_*")),
        process=True,
    )


ROWS = [
    caches_pickle_never_executed,
    cache_corrupt_or_tampered,
    cache_truncated,
    out_dev_null,
    out_dev_full,
    out_dev_stdout,
    out_dash_is_stdout,
    out_fifo_written_through,
    out_symlink_keeps_link,
    out_planted_temp_symlink,
    out_is_input,
    out_html_is_input,
    baseline_is_input,
    out_is_input_inside_directory,
    out_same_path_twice,
    stdout_full,
    stdout_read_only,
    yaml_alias_bomb,
    fifo_input_named,
    fifo_in_directory_skipped,
    symlink_leaving_directory,
    dev_zero_input,
    file_too_big,
    file_over_configured_limit,
    deep_json,
    deep_yaml,
    deep_schema,
    deep_clean_schema_lints_clean,
    lone_surrogate_option,
    reversed_surrogate_key,
    schema_keyword_not_string,
    huge_integer,
    huge_integer_yaml,
    config_not_utf8,
    file_name_not_utf8,
    file_name_not_utf8_in_reports,
    file_name_not_utf8_in_baseline,
    file_name_injection_on_stderr,
    fake_tiktoken,
    fake_gguf_tokenizer,
    fake_gguf_model,
    max_options_zero,
    ratio_negative,
    injection_in_text,
    injection_in_suggest,
    injection_in_github_format,
    injection_in_job_summary,
    non_finite_numbers_strict_json,
    html_template_text_in_file_name,
    path_too_long,
    name_component_too_long,
    unknown_user_home,
    tokenizer_path_too_long,
    tokenizer_unknown_user,
    config_path_too_long,
    config_unknown_user,
    config_tokenizer_unknown_user,
    suggest_name_too_long,
    verify_model_unknown_user,
    max_depth_over_the_stack_cap,
    out_fifo_without_reader,
    baseline_dev_zero,
    baseline_fifo,
    baseline_nested_too_deep,
    config_nested_inline_tables,
    config_huge_integer,
    config_is_a_fifo,
    python_ref_prints_on_import,
    tokenizer_cache_memo_damaged,
    python_m_auditor_ignores_planted_modules,
]


def _assert_case(case: Case, tmp: Path) -> None:
    before = {str(p): digest(Path(p)) for p in case.inputs}
    if case.process:
        result = run(case.args, tmp, case.env, stdout=case.stdout)
    else:
        result = run_in_process(case.args, tmp, case.env)
    err = result.stderr.decode("utf-8", "replace")
    out = result.stdout.decode("utf-8", "replace") if result.stdout is not None else ""
    assert "Traceback" not in err + out and "internal error" not in err + out, err
    assert result.returncode == case.code, (result.returncode, err, out[-2000:])
    if case.message is not None:
        errors = [line for line in err.splitlines() if case.message in line]
        assert len(errors) == 1, err  # one line, naming the file (or the flag)
        assert len(err.splitlines()) <= 3, err  # no multi-line dumps
    if case.check is not None:
        assert case.check(result, tmp) is not False
    after = {str(p): digest(Path(p)) for p in case.inputs}
    assert after == before, "an input changed"


@pytest.mark.parametrize("row", ROWS, ids=[r.__name__ for r in ROWS])
def test_bad_input(row, tmp_path):
    _assert_case(row(tmp_path), tmp_path)


@pytest.mark.parametrize("keyword", ["items", "allOf"])
def test_deep_schema_keywords(keyword, tmp_path):
    _assert_case(deep_schema(tmp_path, keyword), tmp_path)
