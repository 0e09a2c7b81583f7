"""Project configuration: `[tool.pcdlint]` in pyproject.toml, `.pcdlint.toml`, or `--config FILE`.

Discovery walks up from the working directory; in each directory `.pcdlint.toml` wins over a
`pyproject.toml` that has a `[tool.pcdlint]` table (one without it is passed over). `--config`
names the file outright. Values are layered default < file < command line, and each effective
value remembers where it came from (`pcdlint check --show-config`). Anything unknown (a key, a
rule, a rule option) or of the wrong type is a usage error naming the key and the file.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from auditor.errors import ConfigError, InputFileError, UsageError
from auditor.linter import selection
from auditor.linter.registry import SEVERITIES, Rule, default_codes, load_rules
from auditor.paths import resolve_path, shorten
from auditor.schema.documents import read_source

if TYPE_CHECKING:
    from auditor.linter.context import Finding
    from auditor.linter.engine import LintOptions

CONFIG_NAME = ".pcdlint.toml"
DEFAULT_SOURCE = "default"
LIST_KEYS = ("select", "extend-select", "ignore", "tokenizers", "engine")
# Rule options that describe the run, not one rule: `letters` (the slot alphabet) set for one
# rule is the alphabet every rule's letter checks and fix suggestions use, unless set there too.
SHARED_RULE_OPTIONS = ("letters",)
LIMIT_KEYS = ("max-file-bytes", "max-depth")  # input limits (auditor.schema.documents)
KEYS = (
    *LIST_KEYS,
    "fail-on",
    "max-warnings",
    "format",
    "allow-unrecognized",
    "per-file-ignores",
    *LIMIT_KEYS,
    "exclude",
    "prose-choices",
    "rules",
)
DEFAULTS: dict[str, object] = {
    "select": None,  # the default rule set: every rule whose @rule(default=...) is True
    "extend-select": [],
    "ignore": [],
    "fail-on": "error",
    "max-warnings": None,  # the most warning findings a passing run may have; None: no limit
    "tokenizers": ["qwen2.5"],
    # engines by name (auditor.pcd.engines.table); repeatable like tokenizers; none: gather for
    # a schema, the System One specification for a decision request
    "engine": [],
    "format": "text",
    "allow-unrecognized": False,  # a named file with no schema in it: listed, not an error
    "per-file-ignores": {},
    "max-file-bytes": 20_000_000,
    "max-depth": 1_000,
    # globs of paths a directory walk passes over, besides the default excludes
    # (auditor.schema.inputs.DEFAULT_EXCLUDES: node_modules, .venv, build, ...)
    "exclude": [],
    # lint the choice sets written in descriptions ("one of: a, b", `[Enum]: [...]`): off by
    # default until measured precise on real files (auditor.schema.prose)
    "prose-choices": False,
}


@dataclass
class Setting:
    value: object
    source: str = DEFAULT_SOURCE


QUESTION_FRAGMENT = "question:"  # `glob#question:NAME`: one question of a decision request


@dataclass
class PerFileIgnore:
    """`"glob[#/json/pointer]" = [codes]`: silence rules in matching files, or under one node;
    `"glob#question:NAME"`: on one question of a decision request (whose body cannot hold an
    `x-pcdlint-ignore`)."""

    pattern: str
    pointer: str | None
    selectors: list[str]
    base: Path  # globs are relative to the config file's directory
    question: str | None = None

    def matches(self, finding: Finding) -> bool:
        if not any(selection.match_length(s, finding) for s in self.selectors):
            return False
        if self.question is not None and f"question {self.question}" not in finding.field.split(" › "):
            return False
        if self.pointer is not None and not (
            _under(finding.pointer, self.pointer) or _under(finding.site_pointer, self.pointer)
        ):
            return False
        return self.matches_path(finding.path)

    def matches_path(self, path: str) -> bool:
        candidates = {Path(path).as_posix()}
        try:
            candidates.add(Path(path).resolve().relative_to(self.base.resolve()).as_posix())
        except ValueError:
            pass
        patterns = {self.pattern, self.pattern.removeprefix("./")}
        if self.pattern.startswith("**/"):
            patterns.add(self.pattern[3:])
        for candidate in candidates:
            names = {candidate, candidate.rsplit("/", 1)[-1]} if "/" not in self.pattern else {candidate}
            if any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns):
                return True
        return False


def _under(pointer: str, prefix: str) -> bool:
    return prefix == "" or pointer == prefix or pointer.startswith(prefix + "/")


@dataclass
class Config:
    """The effective configuration and the source of every value."""

    path: Path | None = None
    table: str = ""  # "tool.pcdlint." for pyproject.toml, "" for .pcdlint.toml
    settings: dict[str, Setting] = field(
        default_factory=lambda: {
            k: Setting(default_codes() if k == "select" else v) for k, v in DEFAULTS.items()
        }
    )
    rule_settings: dict[str, dict[str, Setting]] = field(default_factory=dict)  # code → key → Setting

    @property
    def where(self) -> str:
        return f"{self.path} [{self.table.rstrip('.')}]" if self.table else str(self.path)

    def value(self, key: str) -> Any:
        return self.settings[key].value

    def override(self, key: str, value: Any, flag: str) -> None:
        """A command-line flag replaces the configured value of its key."""
        self.settings[key] = Setting(value, flag)
        if key == "select":  # --select replaces the whole selection, extend-select included
            self.settings["extend-select"] = Setting([], flag)

    @property
    def select(self) -> list[str]:
        return list(self.value("select")) + list(self.value("extend-select"))

    def per_file_ignores(self) -> list[PerFileIgnore]:
        base = self.path.parent if self.path else Path.cwd()
        out = []
        for key, codes in self.value("per-file-ignores").items():
            pattern, _, fragment = key.partition("#")
            question = (
                fragment.removeprefix(QUESTION_FRAGMENT) if fragment.startswith(QUESTION_FRAGMENT) else None
            )
            pointer = unquote(fragment) if _ and question is None else None
            out.append(PerFileIgnore(pattern or "*", pointer, list(codes), base, question))
        return out

    def lint_options(self) -> LintOptions:
        from auditor.linter.engine import LintOptions

        options = LintOptions(
            select=self.select,
            ignore=list(self.value("ignore")),
            per_file_ignores=self.per_file_ignores(),
            engines=list(self.value("engine")),
            exclude=list(self.value("exclude")),
            prose_choices=bool(self.value("prose-choices")),
        )
        for code, values in self.rule_settings.items():
            for key, setting in values.items():
                if key == "severity":
                    options.severities[code] = str(setting.value)  # validated as a severity
                else:
                    options.rule_options.setdefault(code, {})[key] = setting.value
        for key in SHARED_RULE_OPTIONS:  # one value set on one rule: every rule taking it uses it
            given = {v[key].value for v in self.rule_settings.values() if key in v and v[key].value}
            if len(given) == 1:
                shared = given.pop()
                for rule in load_rules().values():
                    if key not in self.rule_settings.get(rule.code, {}):  # (suggestions read it too)
                        options.rule_options.setdefault(rule.code, {})[key] = shared
        return options

    def render(self) -> str:
        """The effective configuration as TOML, each value followed by its source."""
        lines = [
            "# pcdlint effective configuration",
            f"# config file: {self.where if self.path else 'none found'}",
        ]
        for key in DEFAULTS:
            if key == "per-file-ignores":
                continue
            setting = self.settings[key]
            if setting.value is None:  # (TOML has no null: an unset key is a comment)
                lines.append(f"# {key} is not set  # {setting.source}")
                continue
            lines.append(f"{key} = {_toml(setting.value)}  # {setting.source}")
        pfi = self.settings["per-file-ignores"]
        lines.append("")
        lines.append(f"[per-file-ignores]  # {pfi.source}")
        for pattern, codes in dict(pfi.value).items():  # type: ignore[call-overload]
            lines.append(f"{_toml(pattern)} = {_toml(codes)}")
        for rule in load_rules().values():
            configured = self.rule_settings.get(rule.code, {})
            lines.append("")
            lines.append(f"[rules.{rule.code}]  # {rule.name}")
            severity = configured.get("severity", Setting(rule.severity))
            lines.append(f"severity = {_toml(severity.value)}  # {severity.source}")
            for option, default in rule.options.items():
                setting = configured.get(option, Setting(default))
                lines.append(f"{option} = {_toml(setting.value)}  # {setting.source}")
        return "\n".join(lines) + "\n"


def _toml(value) -> str:
    return json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------- discovery


def find_config(start: Path, within: Path | None = None) -> tuple[Path, str] | None:
    """The nearest config walking up from `start`: (file, table prefix), or None; `within`: no
    folder above it is looked at (the language server's workspace root)."""
    for directory in (start, *start.parents):
        if within is not None and not directory.is_relative_to(within):
            break
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate, ""
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            try:  # (a regular file within the input limit, as every config is read)
                raw = read_source(pyproject, str(pyproject))
            except InputFileError:
                continue
            if b"tool.pcdlint" in raw or b"[tool]" in raw:
                data = _parse(pyproject, raw)
                if isinstance(data.get("tool"), dict) and "pcdlint" in data["tool"]:
                    return pyproject, "tool.pcdlint."
    return None


def _parse(path: Path, raw: bytes | None = None) -> dict:
    """The TOML table of a config file (`raw`: its bytes, where read already), read like any
    input (a regular file within the input size limit); bytes that are not UTF-8, nesting past
    the parser's stack, or a number past Python's digit limit, are one line."""
    try:
        if raw is None:
            raw = read_source(path, str(path))
        return tomllib.loads(raw.decode("utf-8"))
    except InputFileError as exc:
        raise ConfigError(exc.path, f"cannot read config ({exc.message.removesuffix('; skipped')})") from None
    except UnicodeDecodeError:
        raise ConfigError(path, "config is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, f"invalid TOML: {shorten(str(exc))}") from None
    except RecursionError:
        raise ConfigError(path, "invalid TOML: nested too deeply") from None
    except ValueError as exc:
        raise ConfigError(path, f"invalid TOML: {shorten(str(exc))}") from None


def load_config(explicit: str | None = None, cwd: Path | None = None, within: Path | None = None) -> Config:
    """`--config FILE` when given, else the nearest discovered file (walking up from `cwd`, not
    above `within`), else defaults only."""
    if explicit is not None:
        path = resolve_path(explicit, "--config")
        if not path.is_file():
            raise UsageError(f"--config {explicit}: no such file")
        data = _parse(path)
        if path.name == "pyproject.toml":
            tool = data.get("tool", {})
            if not isinstance(tool, dict) or "pcdlint" not in tool:
                raise UsageError(f"--config {explicit}: no [tool.pcdlint] table")
            return _from_table(path, "tool.pcdlint.", tool["pcdlint"])
        return _from_table(path, "", data)
    found = find_config((cwd or Path.cwd()).resolve(), within)
    if found is None:
        return Config()
    path, prefix = found
    data = _parse(path)
    return _from_table(path, prefix, data["tool"]["pcdlint"] if prefix else data)


def _from_table(path: Path, prefix: str, table) -> Config:
    config = Config(path=path.resolve(), table=prefix)
    source = str(config.path)

    def fail(key: str, message: str):
        raise ConfigError(path, f"{(prefix + key).rstrip('.') or 'top level'}: {message}")

    if not isinstance(table, dict):
        fail("", "must be a table")
    for key, value in table.items():
        if key not in KEYS:
            fail(key, f"unknown key (known: {', '.join(KEYS)})")
        if key in LIST_KEYS:
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                fail(key, "must be a list of strings")
            if key == "engine":
                from auditor.pcd.engines.table import UnknownEngineName, check_engine_name

                for name in value:
                    try:
                        check_engine_name(name)
                    except UnknownEngineName as error:
                        fail(key, str(error))
            elif key != "tokenizers":
                for selector in value:
                    if not selection.known(selector):
                        fail(key, selection.unknown_message(selector))
        elif key == "fail-on":
            if value not in SEVERITIES:
                fail(key, f"must be one of {', '.join(SEVERITIES)}, not {value!r}")
        elif key == "max-warnings":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                fail(key, f"must be a whole number of warnings (0 or more), not {value!r}")
        elif key == "format":
            from auditor.reporting import formatters

            if value not in formatters():
                fail(key, f"unknown format {value!r} (choose from {', '.join(formatters())})")
        elif key in ("allow-unrecognized", "prose-choices"):
            if not isinstance(value, bool):
                fail(key, f"must be true or false, not {value!r}")
        elif key == "per-file-ignores":
            value = _per_file_ignores(value, lambda m, key=key: fail(key, m))
        elif key == "exclude":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                fail(key, "must be a list of glob patterns (strings)")
        elif key in LIMIT_KEYS:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                fail(key, f"must be a positive integer, not {value!r}")
        elif key == "rules":
            config.rule_settings = _rules(value, source, lambda k, m: fail(f"rules.{k}", m))
            continue
        config.settings[key] = Setting(value, source)
    return config


def _per_file_ignores(value, fail) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        fail("must be a table of glob = [codes]")
    out = {}
    for pattern, codes in value.items():
        if isinstance(codes, str):
            codes = [codes]
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            fail(f"{pattern!r} must map to a list of codes or names")
        _, hash_, fragment = pattern.partition("#")
        if (
            hash_
            and fragment
            and not unquote(fragment).startswith("/")
            and not (fragment.startswith(QUESTION_FRAGMENT) and len(fragment) > len(QUESTION_FRAGMENT))
        ):
            fail(
                f"{pattern!r}: the fragment must be a JSON Pointer like #/properties/name "
                f"or a decision request's question like #{QUESTION_FRAGMENT}urgency"
            )
        for code in codes:
            if not selection.known(code):
                fail(f"{pattern!r}: {selection.unknown_message(code)}")
        out[pattern] = codes
    return out


def _rules(value, source: str, fail) -> dict[str, dict[str, Setting]]:
    if not isinstance(value, dict):
        fail("", "must be a table of rule tables")
    out: dict[str, dict[str, Setting]] = {}
    for name, options in value.items():
        found: Rule | None = selection.find_rule(name)
        if found is None:
            fail(name, "unknown rule (see `pcdlint rules`)")
            continue
        rule = found
        if not isinstance(options, dict):
            fail(name, "must be a table of options")
        settings = out.setdefault(rule.code, {})
        for option, option_value in options.items():
            if option == "severity":
                if option_value not in SEVERITIES:
                    fail(f"{name}.severity", f"must be one of {', '.join(SEVERITIES)}, not {option_value!r}")
            elif option not in rule.options:
                known = ", ".join(["severity", *rule.options])
                fail(f"{name}.{option}", f"unknown option of {rule.code} {rule.name} (known: {known})")
            else:
                default = rule.options[option]
                if isinstance(option_value, bool) != isinstance(default, bool) or not isinstance(
                    option_value, type(default)
                ):
                    fail(f"{name}.{option}", f"must be {type(default).__name__}, not {option_value!r}")
                if (
                    isinstance(default, (int, float))
                    and not isinstance(default, bool)
                    and not (option_value > 0)
                ):  # counts and ratios: 0, negatives and NaN mean nothing
                    fail(f"{name}.{option}", f"must be a positive number, not {option_value!r}")
                if (
                    isinstance(default, list)
                    and default
                    and not all(
                        isinstance(item, type(default[0])) and (not isinstance(item, str) or item.strip())
                        for item in option_value
                    )
                ):  # a list of names (PCD201's fallback-options): every item one, none blank
                    fail(f"{name}.{option}", f"must be a list of non-empty {type(default[0]).__name__}s")
            settings[option] = Setting(option_value, source)
    return out
