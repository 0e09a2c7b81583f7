"""`pcdlint suggest`: verified renamings for fields with first-token scoring problems, and
`--write` / `--in-place`, which apply the best-ranked one of every field to a copy (or, when
asked, to the input).
"""

from __future__ import annotations

import codecs
import json
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.choices import engine_option, format_option
from auditor.linter.fixes import design_entries, fix_codes, write_edits
from auditor.linter.suggest import choose, fix_entries, fixed_codes, label_set_pointers, rewrite

if TYPE_CHECKING:
    from auditor.linter.engine import LintRun

TEMP_SUFFIX = ".pcdlint-tmp"  # `--in-place` writes `.NAME.pcdlint-tmp` beside NAME, then renames it


def temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}{TEMP_SUFFIX}")


def remove_leftover_temp(path: Path) -> None:
    """Remove the `.NAME.pcdlint-tmp` a killed `--in-place` run left beside NAME (only a
    regular file of that exact name: never a link or anything else)."""
    try:
        leftover = temp_path(path.resolve())
        if stat.S_ISREG(os.lstat(leftover).st_mode):
            os.unlink(leftover)
    except (OSError, RuntimeError, ValueError):
        pass


def write_in_place(path: Path, data: bytes) -> None:
    """Replace the file's bytes. A temp file beside it, with the file's mode and (where this
    user may set it) owner and group, renamed over it: readers see the old or the new file,
    never half of one. A file with more than one hard link is written in place instead (a
    rename would cut it from its other names); a symlink's target is written, the link kept."""
    real = path.resolve()
    info = os.stat(real)
    if info.st_nlink > 1:
        with open(real, "r+b") as handle:
            handle.write(data)
            handle.truncate()
        return
    tmp = temp_path(real)
    remove_leftover_temp(real)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, stat.S_IMODE(info.st_mode))
            if hasattr(os, "fchown"):
                try:
                    os.fchown(fd, info.st_uid, info.st_gid)
                except PermissionError:  # another user's file: keep at least the group we may
                    try:
                        os.fchown(fd, -1, info.st_gid)
                    except PermissionError:
                        pass
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_fixed(
    run: LintRun, entries: list[dict], target: str, in_place: bool
) -> tuple[str, str | None, int, int]:
    """Write the fixed copy (and, for letter slots, the legend beside it); returns
    (fixed path, legend path or None, fields renamed, design fixes written). Only the renamed option texts change
    (a UTF-8 BOM, line ends, comments and everything else stay as they were); both outputs
    are checked before either is written."""
    from auditor.errors import UsageError
    from auditor.reporting.json_text import dumps_strict
    from auditor.reporting.outputs import check_outputs, encode_text, write_report

    [result] = run.files
    model = result.model
    chosen = choose([e for e in entries if "fix" not in e])  # (renamings; design fixes below)
    sites = {site.pointer: site for site in model.sites}
    yaml_file = Path(model.path).suffix.lower() in (".yaml", ".yml")
    renamings = [(sites[p].option_spans, s["options"]) for p, s in chosen.items() if p in sites]
    designs = write_edits(run, entries, yaml_file)  # a decision request's verified design fixes
    text = rewrite(model.document.text, yaml_file, renamings, designs)
    try:
        with open(model.path, "rb") as handle:
            bom = handle.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8
    except OSError as exc:
        raise UsageError(f"{model.path}: cannot read file ({exc.strerror or exc})") from None
    data = (codecs.BOM_UTF8 if bom else b"") + encode_text(text)
    legend = {
        p: {"field": sites[p].field, "slots": {m["to"]: m["from"] for m in s["mapping"]}}
        for p, s in chosen.items()
        if s["strategy"] == "letter-slots" and p in sites
    }
    legend_path = str(Path(target).with_suffix(".slots.json")) if legend else None
    outputs = [] if in_place else [("--write", target)]
    if legend_path is not None:
        outputs.append(("--write (its slot legend)", legend_path))
    check_outputs(outputs, [model.path])  # both, before either is written
    if in_place:
        try:
            write_in_place(Path(model.path), data)
        except OSError as exc:
            raise UsageError(f"--in-place {model.path}: cannot write ({exc.strerror or exc})") from None
    else:
        write_report(data, target, "--write", [model.path])
    if legend_path is not None:
        write_report(
            dumps_strict(legend, newline=True), legend_path, "--write (its slot legend)", [model.path]
        )
    return target, legend_path, len(renamings), len(designs)


def _shown(name: str) -> str:
    """A name as the text output prints it: quoted where it holds a line break, another control
    character or space at either end (`'bill\\ning'`, `'billing '`), so one entry stays one line."""
    if name != name.strip() or not name.isprintable():
        return repr(name)
    return name


def format_text(entries: list[dict], label_sets: int = 0) -> str:
    """The text output; `label_sets`: the evaluation-config label sets the run left alone."""
    lines = []
    for e in entries:
        if "fix" in e:  # a decision request's design fix (auditor.linter.fixes)
            lines.append(f"{e['path']}:{e['line']}: {e['field']} [{e['engine']}] {', '.join(e['codes'])}")
            left = e["fix"].get("remaining") or []
            verdict = (
                "does not re-lint clean: not applied"
                if not e["fix"]["verified"]
                else f"re-lints; still {', '.join(left)}"
                if left
                else "re-lints clean"
            )
            lines.append(f"  fix: {e['fix']['description']} ({verdict})")
            continue
        # what the fixes were checked against: a schema field's tokenizer, a request's engine
        against = e["tokenizer"] or e.get("engine") or "?"
        lines.append(f"{e['path']}:{e['line']}: {_shown(e['field'])} [{against}] {', '.join(e['codes'])}")
        if not e["suggestions"]:
            lines.append(
                "  no renaming tried re-lints clean and keeps every distinguishing word; "
                "see `pcdlint explain` for other fixes"
            )
        for rank, s in enumerate(e["suggestions"], 1):
            pairs = ", ".join(f"{_shown(m['from'])} -> {_shown(m['to'])}" for m in s["mapping"][:8])
            more = f", … ({len(s['mapping'])} options)" if len(s["mapping"]) > 8 else ""
            kept = (
                "legend maps letters back"
                if s["strategy"] == "letter-slots"
                else f"keeps {round(100 * s.get('words_kept', 1))} % of the words"
            )
            lines.append(f"  {rank}. {s['strategy']} (re-lints clean; {kept}): {pairs}{more}")
    fixed = sum(1 for e in entries if e["suggestions"] or e.get("fix", {}).get("verified"))
    if entries:
        one = len(entries) == 1
        lines.append(
            f"{len(entries)} field{'' if one else 's'} need{'s' if one else ''} a fix; "
            f"{fixed} {'has' if fixed == 1 else 'have'} a verified suggestion"
            + ("" if fixed == len(entries) else f"; {len(entries) - fixed} have none")
        )
    else:
        lines.append("No schema field needs a fix." if label_sets else "No field needs a fix.")
    if label_sets:
        lines.append(
            f"{label_sets} evaluation label set{'' if label_sets == 1 else 's'} not renamed (a harness "
            "reads its labels as written): pcdlint check says what each harness's scorer gets wrong."
        )
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-t",
    "--tokenizer",
    "tokenizers",
    multiple=True,
    metavar="SPEC",
    help="Tokenizer to verify with (repeatable). Default: qwen2.5.",
)
@format_option("suggest")
@click.option(
    "--write",
    "write_to",
    metavar="FILE",
    help="Write a copy of the (single) input with the first suggestion of every field "
    "applied, and FILE's .slots.json legend when letter slots are used. Never "
    "the input itself.",
)
@click.option("--in-place", is_flag=True, help="Apply the fixes to the input file itself.")
@engine_option(
    "--engine",
    "engine",
    default=None,
    help="The engine the renamings must re-lint clean under (a PCD engine), or whose name rules "
    "a decision request's renamings follow (a decision engine): {engines}.",
)
def suggest(
    paths: tuple[str, ...],
    tokenizers: tuple[str, ...],
    output_format: str,
    write_to: str | None,
    in_place: bool,
    engine: str | None,
) -> None:
    """Propose renamings for fields with PCD001/PCD002/PCD005 warnings or errors, verified by
    re-linting.

    Only suggestions whose renamed field re-lints without warnings or errors under the same
    tokenizer, and that keep every word telling an option apart from its siblings, are printed,
    those keeping the most words first. Input files are modified only with --in-place.

    Exit status: 0 every flagged field has a verified fix, 1 some has none, 2 bad input.
    """
    from auditor.errors import UsageError
    from auditor.linter.engine import LintOptions, lint
    from auditor.paths import resolve_path
    from auditor.reporting.escape import strict_json
    from auditor.reporting.outputs import write_error, write_stdout
    from auditor.schema.python_source import is_python_ref
    from auditor.tokenizers.loader import DEFAULT_TOKENIZER, load_tokenizers

    try:
        if write_to and in_place:
            raise UsageError("--write and --in-place exclude each other")
        if (write_to or in_place) and len(paths) == 1 and is_python_ref(paths[0]):
            raise UsageError(
                f"{'--write' if write_to else '--in-place'} cannot patch Python source: "
                f"run `pcdlint suggest {paths[0]}` and apply the renamings it prints "
                "to the class by hand"
            )
        if (write_to or in_place) and (len(paths) != 1 or not resolve_path(paths[0]).is_file()):
            raise UsageError(f"{'--write' if write_to else '--in-place'} needs exactly one input file")
        loaded = load_tokenizers(list(tokenizers) or [DEFAULT_TOKENIZER])
        options = LintOptions(select=sorted(fixed_codes() | fix_codes()))
        if engine:
            options.engines = [engine]
        for given in paths:  # a temp file a killed --in-place run left behind
            if given != "-":
                remove_leftover_temp(Path(given))
        run = lint(list(paths), loaded, options)
        entries = fix_entries(run) + design_entries(run, loaded)
        written = None
        if (write_to or in_place) and run.files:
            written = write_fixed(run, entries, write_to or paths[0], in_place)
        if run.errors and not run.files:
            pass  # nothing was read: only the error lines below
        elif output_format == "json":
            write_stdout(
                json.dumps(strict_json(entries), indent=2, ensure_ascii=False, allow_nan=False) + "\n", "json"
            )
        else:
            write_stdout(format_text(entries, len(label_set_pointers(run))), "suggest")
    except UsageError as error:
        write_error(f"pcdlint: error: {error}")
        sys.exit(2)
    if written is not None:
        target, legend, count, designs = written
        done = [f"{count} field{'s' if count != 1 else ''} renamed"] if count or not designs else []
        if designs:
            done.append(f"{designs} design fix{'es' if designs != 1 else ''} (pcdlint explain CODE)")
        write_error(
            f"pcdlint: wrote {target} with {' and '.join(done)}"
            + (f" and the letter-slot legend {legend}" if legend else "")
            + ("; update the code that reads these values" if count else "")
        )
    for input_error in run.errors:
        write_error(str(input_error))
    if run.errors:
        sys.exit(2)
    sys.exit(1 if any(not e["suggestions"] and not e.get("fix", {}).get("verified") for e in entries) else 0)
