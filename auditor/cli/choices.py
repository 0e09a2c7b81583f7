"""The CLI's choices, made from the registries: `--engine` from the engine table, `-f/--format`
from the reporter registry, `--backend` from the backend table, `--probe` from the probe table.

Each option's accepted names and the list its help shows come from the same rows, so the two
cannot drift; an unknown name is a usage error (exit 2) naming the nearest known one. No other
module of the CLI lists engine, format, backend or probe names (tests/test_cli_choices.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from auditor.backends import BACKEND_ALIASES, BACKENDS, backend_names
from auditor.pcd.engines.table import (
    ENGINE_ROWS,
    NAMEABLE_KINDS,
    UnknownEngineName,
    check_engine_name,
    did_you_mean,
    engine_names,
)
from auditor.probes import PERTURBATIONS, PROBES
from auditor.reporting import command_formats


class ChoiceError(click.BadParameter):
    """An unknown name: one line, `pcdlint: error: --flag: unknown … (choose from …)`, exit 2."""

    def format_message(self) -> str:
        flags = getattr(self.param, "opts", None) or [self.param_hint or "value"]
        return f"{max(flags, key=len)}: {self.message}"

    def show(self, file: Any = None) -> None:
        click.echo(f"pcdlint: error: {self.format_message()}", err=True)


class RegistryChoice(click.Choice):
    """A `click.Choice` over a registry's names: case ignored, an alias turned into its name,
    and an unknown name answered with the nearest known one, on one line."""

    def __init__(self, choices: Sequence[str], what: str, aliases: Mapping[str, str] | None = None) -> None:
        super().__init__(list(choices), case_sensitive=False)
        self.what = what
        self.aliases = dict(aliases or {})

    def fail(
        self, message: str, param: click.Parameter | None = None, ctx: click.Context | None = None
    ) -> Any:
        raise ChoiceError(message, ctx=ctx, param=param)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            key = value.strip().lower()
            value = self.aliases.get(key, key)
            if value not in self.choices:
                known = [str(choice) for choice in self.choices]
                self.fail(
                    f"unknown {self.what} {key!r}{did_you_mean(key, known)} (choose from {', '.join(known)})",
                    param,
                    ctx,
                )
        return super().convert(value, param, ctx)


class EngineChoice(RegistryChoice):
    """`--engine`: the engine table's rows of `kinds`, each checked by the one validator
    (auditor.pcd.engines.table.check_engine_name)."""

    def __init__(self, kinds: tuple[str, ...] = NAMEABLE_KINDS) -> None:
        super().__init__(engine_names(kinds), "engine")
        self.kinds = kinds

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return super().convert(value, param, ctx)
        try:
            return check_engine_name(value, self.kinds).name
        except UnknownEngineName as error:
            self.fail(str(error), param, ctx)


def engine_list(kinds: tuple[str, ...] = NAMEABLE_KINDS) -> str:
    """The names an `--engine` of `kinds` accepts, for its help: per kind, the default first."""
    parts = []
    for kind in kinds:
        rows = [ENGINE_ROWS[name] for name in engine_names((kind,))]
        names = [f"{row.name} (default)" if row.default and len(kinds) > 1 else row.name for row in rows]
        label = {"pcd": "PCD engines", "decision": "decision engines"}.get(kind, f"{kind} engines")
        parts.append(f"{label}: {', '.join(names)}")
    return "; ".join(parts)


def engine_option(*decls: str, kinds: tuple[str, ...] = NAMEABLE_KINDS, help: str, **attrs: Any) -> Any:
    """An `--engine` option taking the table's names of `kinds`; `help` has `{engines}` where
    the list goes."""
    return click.option(
        *decls,
        type=EngineChoice(kinds),
        metavar="NAME",
        help=help.format(engines=engine_list(kinds)),
        **attrs,
    )


def format_option(command: str, **attrs: Any) -> Any:
    """`-f/--format` of `command`: the reporter registry's formats for it."""
    names = command_formats(command)
    attrs.setdefault("default", names[0])
    attrs.setdefault("show_default", attrs["default"] is not None)
    return click.option("-f", "--format", "output_format", type=RegistryChoice(names, "format"), **attrs)


def backend_choice(command: str) -> RegistryChoice:
    """The backend table's backends `command` takes, their aliases accepted."""
    names = backend_names(command)
    aliases = {alias: name for alias, name in BACKEND_ALIASES.items() if name in names}
    return RegistryChoice(names, "backend", aliases)


def backend_list(command: str) -> str:
    """Each backend `command` takes with what it is, for --backend's help."""
    return " ".join(f"{name}: {BACKENDS[name].summary}." for name in backend_names(command))


def probe_choice(perturbations: bool = False) -> RegistryChoice:
    """`verify --probe`'s names, or (``perturbations``) `eval --perturb`'s: the probes alone."""
    return RegistryChoice(list(PERTURBATIONS if perturbations else PROBES), "probe")


def probe_list() -> str:
    """Each probe with what it probes, for --probe's help."""
    return ", ".join(f"{name} = {what}" for name, what in PROBES.items())
