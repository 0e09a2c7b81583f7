"""The model and server options of `verify`, `check --verify` and `eval`, parsed once.

click hands each command its flags as keyword arguments; `parse_verify_options` and
`parse_served_options` turn them into frozen objects (as `parse_check_options` does for
`check`), each holding the `BackendOptions` the decoder's one factory opens
(auditor.decoder.open.open_backend) and what the command asks of the backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.backends import BackendOptions


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


@dataclass(frozen=True)
class GateOptions:
    """The CI gate options of served decision runs (auditor.cli.gates): recorded answers
    (`--record`/`--replay`, verify and eval) and eval's paired comparison (`--compare`)."""

    record_path: str | None = None
    replay_path: str | None = None
    compare: bool = False
    request_b: str | None = None
    base_url_b: str | None = None
    model_b: str | None = None
    fail_if_worse: float | None = None
    alpha: float = 0.05


def parse_gate_options(params: dict[str, Any]) -> GateOptions:
    """The gate keyword arguments a command was given (verify has no compare options)."""
    return GateOptions(
        **{name: params[name] for name in GateOptions.__dataclass_fields__ if params.get(name) is not None}
    )


@dataclass(frozen=True)
class ServedOptions:
    """`eval`'s server options, parsed once: the backend's settings (its name, model and device
    are eval's own flags, filled in when it is opened) and the probe's display orders."""

    backend: BackendOptions
    orders: int
    gate: GateOptions = GateOptions()

    @property
    def base_url(self) -> str | None:
        return self.backend.base_url


def parse_served_options(params: dict[str, Any]) -> ServedOptions:
    return ServedOptions(
        backend=BackendOptions(route=params["route"], **_server_settings(params)),
        orders=params["orders"],
        gate=parse_gate_options(params),
    )
