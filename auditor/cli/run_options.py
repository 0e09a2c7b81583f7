"""The model and server options of `verify`, `check --verify` and `eval`, parsed once.

click hands each command its flags as keyword arguments; `parse_verify_options` and
`parse_served_options` turn them into frozen objects (as `parse_check_options` does for
`check`), each holding the `BackendOptions` the decoder's one factory opens
(auditor.decoder.open.open_backend) and what the command asks of the backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.backends import BackendOptions

if TYPE_CHECKING:  # the eval package is loaded only by a served run
    from auditor.eval.answer_source import GateOptions


@dataclass(frozen=True)
class VerifyOptions:
    """The model options of `verify` and `check --verify`, parsed once (as `CheckOptions` is):
    the backend to open (auditor.decoder.open) and what to ask of it."""

    backend: BackendOptions
    context_arg: str | None  # --context: the text, or @FILE (read by `read_context`)
    coupling_arg: str | None  # --coupling: None, "*" or FIELD,…
    parity: str  # fast, full or off (--no-parity: off)

    @property
    def base_url(self) -> str | None:
        return self.backend.base_url


def _server_settings(params: dict[str, Any]) -> dict[str, Any]:
    """The server and HTTP-client flags `verify` and `eval` share (`client_options` and the rest)."""
    names = ("api_key_env", "concurrency", "timeout_s", "retries", "retry_after_cap")
    return {
        "base_url": params["base_url"],
        "tokenizer": params["server_tokenizer"],
        **{name: params[name] for name in names},
        "run_timeout_s": params["run_timeout_s"],
        "max_response_bytes": params["max_response_bytes"],
    }


def parse_verify_options(params: dict[str, Any]) -> VerifyOptions:
    """The `model_options` keyword arguments, typed."""
    return VerifyOptions(
        backend=BackendOptions(
            backend=params["backend"],
            model=params["model_spec"],
            device=params["device"],
            dtype=params["dtype"],
            batch_size=params["batch_size"],
            **_server_settings(params),
        ),
        context_arg=params["context_arg"],
        coupling_arg=params["coupling_arg"],
        parity="off" if params["no_parity"] else params["parity"],
    )


def parse_gate_options(params: dict[str, Any]) -> GateOptions:
    """The gate keyword arguments a command was given (verify has no compare options)."""
    from auditor.eval.answer_source import GateOptions

    return GateOptions(
        **{name: params[name] for name in GateOptions.__dataclass_fields__ if params.get(name) is not None}
    )


@dataclass(frozen=True)
class ServedOptions:
    """`eval`'s server options, parsed once: the backend's settings (its name, model and device
    are eval's own flags, filled in when it is opened) and the probe's display orders."""

    backend: BackendOptions
    orders: int
    gate: GateOptions

    @property
    def base_url(self) -> str | None:
        return self.backend.base_url


def parse_served_options(params: dict[str, Any]) -> ServedOptions:
    return ServedOptions(
        backend=BackendOptions(route=params["route"], **_server_settings(params)),
        orders=params["orders"],
        gate=parse_gate_options(params),
    )


@dataclass(frozen=True)
class DecisionFlags:
    """The decision-request options of `verify` (auditor.cli.served.DECISION_OPTIONS), parsed once:
    the engine, the route, the probes and their display orders, and the recorded-answers gate."""

    engine_name: str | None
    route: str
    probes: tuple[str, ...]
    orders: int
    gate: GateOptions


def parse_decision_flags(params: dict[str, Any]) -> DecisionFlags:
    return DecisionFlags(
        engine_name=params["engine_name"],
        route=params["route"],
        probes=tuple(params["probe"] or ()),
        orders=params["orders"],
        gate=parse_gate_options(params),
    )


@dataclass(frozen=True)
class EvalCommandOptions:
    """Everything `pcdlint eval`'s flags say, parsed once (as `CheckOptions` is for `check`): the
    inputs, the backend and model, the split, the probes, which rows, the cache, the outputs and
    the served options (`ServedOptions`)."""

    schema: str
    data_path: str
    backend_name: str
    model: str | None
    device: str
    dtype: str
    allow_download: bool
    holdout: float
    seed: int
    perturb: tuple[str, ...]
    letters: bool
    limit: int | None
    max_row_bytes: int
    shard: tuple[int, int] | None
    cache_dir: Path | None  # None: --no-cache
    output_format: str
    output: str | None
    output_json: str | None
    output_html: str | None
    write_calibration: str | None
    served: ServedOptions
    quiet: bool

    @property
    def inputs(self) -> list[str]:
        """The files the run reads (``--compare``'s side B request included): no output may be one."""
        request_b = self.served.gate.request_b
        return [self.schema, self.data_path] + ([request_b] if request_b else [])

    @property
    def outputs(self) -> list[tuple[str, str]]:
        """Every file the run writes, by its flag (checked against the inputs before any work)."""
        named = (
            ("--output", self.output),
            ("--output-json", self.output_json),
            ("--output-html", self.output_html),
            ("--write-calibration", self.write_calibration),
            ("--record", self.served.gate.record_path),
        )
        return [(flag, target) for flag, target in named if target]


def parse_eval_options(params: dict[str, Any]) -> EvalCommandOptions:
    """`eval`'s keyword arguments, typed; ``--cache-dir``/``--no-cache`` resolved to one directory."""
    from auditor.backends import canonical_backend
    from auditor.eval.cache import default_cache_dir

    cache_dir = None if params["no_cache"] else Path(params["cache_dir"] or default_cache_dir())
    return EvalCommandOptions(
        schema=params["schema"],
        data_path=params["data_path"],
        backend_name=canonical_backend(params["backend_name"]),
        model=params["model_spec"],
        device=params["device"],
        dtype=params["dtype"],
        allow_download=params["allow_download"],
        holdout=params["holdout"],
        seed=params["seed"],
        perturb=tuple(dict.fromkeys(params["perturb"])),
        letters=not params["no_letters"],
        limit=params["limit"],
        max_row_bytes=params["max_row_bytes"],
        shard=params["shard"],
        cache_dir=cache_dir,
        output_format=params["output_format"],
        output=params["output"],
        output_json=params["output_json"],
        output_html=params["output_html"],
        write_calibration=params["write_calibration"],
        served=params["served_opts"],
        quiet=params["quiet"],
    )
