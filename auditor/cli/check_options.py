"""`pcdlint check`'s options, parsed once: the command line merged over the configuration.

click hands `check` its flags as keyword arguments; `parse_check_options` reads them with the
config file (`.pcdlint.toml` or `[tool.pcdlint]`, auditor/cli/config.py), lets every flag given
on the command line replace its configured value, and returns one frozen `CheckOptions` that the
rest of the command reads. A value that has a config key (tokenizers, format, fail-on …) is
read here from the merged configuration, so no later step sees the raw flag.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from auditor.cli.common import split_values
from auditor.cli.config import Config, load_config

if TYPE_CHECKING:
    from auditor.cli.run_options import VerifyOptions

# key in the config, the click parameter that overrides it, and how the raw value is cleaned
_OVERRIDES: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("select", "select", split_values),
    ("ignore", "ignore", split_values),
    ("tokenizers", "tokenizers", lambda values: list(dict.fromkeys(values))),
    ("engine", "engines", lambda values: list(dict.fromkeys(e.strip().lower() for e in values))),
    ("fail-on", "fail_on", lambda value: value),
    ("max-warnings", "max_warnings", lambda value: value),
    ("format", "output_format", lambda value: value),
    ("allow-unrecognized", "allow_unrecognized", lambda value: value),
)


@dataclass(frozen=True)
class CheckOptions:
    """Everything `pcdlint check` was asked to do."""

    paths: tuple[str, ...]
    config: Config  # the merged configuration (rule settings, per-file ignores, --show-config)
    tokenizers: tuple[str, ...]
    allow_download: bool
    tiktoken_pattern: str | None
    chat_template: str | None  # a file to read the decision engines' chat template from
    output_format: str  # not yet checked against the formatters (that is a usage error)
    output: str | None
    extra_outputs: tuple[tuple[str, str | None], ...]  # (format, path) for --output-<format>
    select: tuple[str, ...]  # the command line's own selectors, checked before linting
    ignore: tuple[str, ...]
    fail_on: str
    max_warnings: int | None  # exit 1 past this many warning findings (None: no limit)
    exit_zero: bool
    show_info: bool  # --show-info, or implied by --fail-on info
    show_cost: bool
    statistics: bool
    quiet: bool
    use_cache: bool
    jobs: int | None
    show_config: bool
    baseline_file: str | None
    write_baseline: str | None
    stdin_filename: str | None
    allow_unrecognized: bool
    max_bytes: int
    max_depth: int
    run_verify: bool
    verify: VerifyOptions  # the model options (`model_options`), for --verify

    @property
    def outputs(self) -> list[tuple[str, str]]:
        """Every file the run writes, with the flag that names it (checked against the inputs)."""
        named = [
            ("--output", self.output),
            *((f"--output-{name}", target) for name, target in self.extra_outputs),
            ("--write-baseline", self.write_baseline),
        ]
        return [(flag, target) for flag, target in named if target]


def parse_check_options(
    params: Mapping[str, Any], source: Callable[[str], click.core.ParameterSource | None]
) -> CheckOptions:
    """`check`'s keyword arguments and the config they name, merged. ``source`` tells a flag given
    on the command line from its default (click's ``Context.get_parameter_source``)."""
    from auditor.reporting import formatters

    config = load_config(params["config_file"])
    for key, name, clean in _OVERRIDES:
        value = clean(params[name])
        if (
            source(name) == click.core.ParameterSource.COMMANDLINE
            and value is not None
            and (value or isinstance(value, (bool, int)))
        ):
            config.override(key, value, f"--{key.replace('tokenizers', 'tokenizer')}")
    if (
        config.settings["format"].source == "default"
        and os.environ.get("GITHUB_ACTIONS") == "true"
        and "github" in formatters()
    ):
        config.override("format", "github", "GITHUB_ACTIONS=true")
    fail_on = config.value("fail-on")
    return CheckOptions(
        paths=tuple(params["paths"]),
        config=config,
        tokenizers=tuple(config.value("tokenizers")),
        allow_download=params["allow_download"],
        tiktoken_pattern=params["tiktoken_pattern"],
        chat_template=params["chat_template"],
        output_format=config.value("format"),
        output=params["output"],
        extra_outputs=(
            ("sarif", params["output_sarif"]),
            ("html", params["output_html"]),
            ("json", params["output_json"]),
        ),
        select=tuple(split_values(params["select"])),
        ignore=tuple(split_values(params["ignore"])),
        fail_on=fail_on,
        max_warnings=config.value("max-warnings"),
        exit_zero=params["exit_zero"],
        show_info=params["show_info"] or fail_on == "info",
        show_cost=params["show_cost"],
        statistics=params["statistics"],
        quiet=params["quiet"],
        use_cache=not params["no_cache"],
        jobs=params["jobs"],
        show_config=params["show_config"],
        baseline_file=params["baseline_file"],
        write_baseline=params["write_baseline"],
        stdin_filename=params["stdin_filename"],
        allow_unrecognized=bool(config.value("allow-unrecognized")),
        max_bytes=config.value("max-file-bytes"),
        max_depth=config.value("max-depth"),
        run_verify=params["run_verify"],
        verify=params["verify_opts"],
    )
