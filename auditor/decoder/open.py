"""The one factory of the decoder's backends, and what a backend is.

`open_backend(options)` turns a `BackendOptions` (auditor/backends.py: the backend table's name
and what that backend needs: a model, a server's URL, its tokenizer, the HTTP client's limits)
into a backend; `verify`, `check --verify`, `eval`, `conform` and the Python API's
`verify_fields(model=…)` all open theirs here, and nothing else constructs one
(tests/decoder/test_open_backend.py). The server's URL is read once, here, and its key only from
the environment variable the options name.

Two kinds of backend answer two questions:
- a `FieldBackend` scores a schema's fields (`score(request, ledger, progress)`):
  `InProcessBackend` (the model in this process) and `OpenAIBackend` (an OpenAI-compatible
  `/v1/completions` server), auditor/decoder/backends.py;
- a `DecisionBackend` answers a decision request (`decide(body)`): `SystemOneBackend` (a served
  System One route, auditor/decoder/systemone.py) and `Llm2jevEngine` (llm2jev's service
  computed here, auditor/decoder/llm2jev.py).
Both say what their answers depend on (`identity()`, a cache key's part, never a key) and let go
of their connections (`close()`). Eval's `ScoringBackend` (auditor/eval/backends.py) wraps a
field backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from auditor.backends import BACKENDS, DEFAULT_BACKEND, BackendOptions
from auditor.decoder.errors import DecoderError
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.decoder.backends import FieldScores, ScoreRequest
    from auditor.decoder.model import LoadedModel
    from auditor.decoder.result import Ledger


@runtime_checkable
class Backend(Protocol):
    def identity(self) -> dict:
        """JSON-able: the model, endpoint and settings its answers depend on (never a key)."""
        ...

    def close(self) -> None:
        """Let go of its connections (a model run here holds none)."""
        ...


@runtime_checkable
class FieldBackend(Backend, Protocol):
    name: str
    tokenizer_name: str
    device: str
    dtype: str

    def score(self, request: ScoreRequest, ledger: Ledger, progress: Any = None) -> list[FieldScores]:
        """Per field of the request, the log-probs its verdicts and picks come from."""
        ...


@runtime_checkable
class DecisionBackend(Backend, Protocol):
    def decide(self, body: dict) -> dict:
        """The System One answer to a System One body (DecisionRefused for a refusal)."""
        ...


def http_client(options: BackendOptions, base_url: str | tuple[Any, str], **overrides: Any) -> Any:
    """The one HTTP client (auditor.decoder.http) for `base_url`, with the key read from the
    variable `api_key_env` names (never from argv) and the options' deadline and retries."""
    from auditor.decoder.http import DEFAULT_CONNECT_TIMEOUT, HttpClient, api_key_from_env

    settings: dict[str, Any] = {
        "api_key": api_key_from_env(options.api_key_env),
        "connect_timeout": min(options.timeout_s, DEFAULT_CONNECT_TIMEOUT),
        "read_deadline": options.timeout_s,
        "retries": options.retries,
        "retry_after_cap": options.retry_after_cap,
        "max_connections": options.concurrency or 4,
    }
    return HttpClient(base_url, **{**settings, **overrides})


def open_backend(
    options: BackendOptions, *, decisions: bool = False, progress: Any = None, client: Any = None
) -> Any:
    """The backend `options` name: a `DecisionBackend` with `decisions`, else a `FieldBackend`.
    A UsageError says what a backend lacks (a URL, a tokenizer) or cannot do; a DecoderError
    what failed while opening it (no model, an unreachable server). `client`: an HTTP client
    already made for the server (conform makes one per server)."""
    name = options.name
    if name not in BACKENDS:
        raise UsageError(
            f"--backend: unknown backend {options.backend!r} (choose from {', '.join(BACKENDS)})"
        )
    if name == "systemone":
        if not decisions:
            raise UsageError(
                "--backend systemone answers decision requests: use `pcdlint verify --backend systemone`"
            )
        return _systemone(options, client)
    if name == "openai":
        if decisions:
            raise UsageError(
                "--backend openai scores schema fields; decision requests need --backend systemone"
            )
        return _openai(options)
    if options.base_url:
        raise UsageError("--base-url is for --backend openai or systemone")
    if decisions:
        return _decision_engine(options, progress)
    from auditor.decoder.backends import InProcessBackend

    return InProcessBackend(
        _loaded(options, progress), options.cache_budget_bytes, options.full_sequence_mode
    )


def _loaded(options: BackendOptions, progress: Any) -> LoadedModel:
    from contextlib import nullcontext

    from auditor.decoder.model import LoadedModel, load_model
    from auditor.paths import resolve_text

    if isinstance(options.model, LoadedModel):
        return options.model
    spec = resolve_text(options.model, "--model") if isinstance(options.model, str) else None
    stage = progress.stage("model load") if progress is not None else nullcontext()
    with stage:
        return load_model(
            spec,
            device=options.device,
            dtype=options.dtype,
            allow_download=options.allow_download,
            progress=bool(getattr(progress, "enabled", False)),
        )


def _decision_engine(options: BackendOptions, progress: Any) -> Any:
    """A decision engine computed in this process (the backend table's `decision_engines`)."""
    computed = BACKENDS[DEFAULT_BACKEND].decision_engines
    if options.engine not in computed:
        raise UsageError(
            f"--backend in-process computes no answers of engine {options.engine!r} "
            f"(available: {', '.join(computed)}); use --backend systemone to ask its server"
        )
    from auditor.decoder.llm2jev import Llm2jevEngine

    return Llm2jevEngine(_loaded(options, progress))


def _server_url(options: BackendOptions, example: str) -> tuple[Any, str]:
    """The server's URL, read once (the HTTP client takes it as read): (origin, path), or a
    UsageError."""
    from auditor.decoder.http import HttpError, parse_origin

    if not options.base_url:
        raise UsageError(f"--backend {options.name} needs --base-url URL ({example})")
    try:
        origin, path = parse_origin(options.base_url)
    except HttpError as exc:
        raise UsageError(str(exc)) from None
    return origin, path.rstrip("/")


def _limits(options: BackendOptions) -> dict[str, Any]:
    """--run-timeout and --max-response-bytes, for the HTTP client of either server backend."""
    limits: dict[str, Any] = {}
    if options.max_response_bytes is not None:
        limits["max_bytes"] = options.max_response_bytes
    if options.run_timeout_s is not None:
        limits["run_deadline"] = options.run_timeout_s
    return limits


def _systemone(options: BackendOptions, client: Any) -> Any:
    from auditor.decoder.systemone import SystemOneBackend

    model = options.model if isinstance(options.model, str) or options.model is None else None
    if client is None:
        url = _server_url(options, "the server root, e.g. http://127.0.0.1:8080")
        client = http_client(
            options, url, max_connections=max(4, options.concurrency or 4), **_limits(options)
        )
    return SystemOneBackend(client, client.base_url, options.route, model)


def _openai(options: BackendOptions) -> Any:
    from auditor.decoder.backends import OpenAIBackend
    from auditor.decoder.model import load_tokenizer_only
    from auditor.paths import resolve_text

    origin, path = _server_url(options, "e.g. http://127.0.0.1:8000/v1")
    model = options.model if isinstance(options.model, str) else None
    spec = options.tokenizer or model
    if not spec:
        raise UsageError("--backend openai needs --tokenizer SPEC (or --model NAME that is a cached hub id)")
    spec = resolve_text(spec, "--tokenizer")
    tokenizer, tokenizer_name = load_tokenizer_only(spec, allow_download=options.allow_download)
    api = path if path.endswith("/v1") else path + "/v1"  # (OpenAIBackend.api_base, on the path read)
    client = http_client(options, (origin, api), **_limits(options))
    try:
        return OpenAIBackend(
            client.base_url,
            model,
            tokenizer,
            tokenizer_name,
            concurrency=options.concurrency,
            batch_size=options.batch_size,
            client=client,
        )
    except BaseException:
        client.close()
        raise


__all__ = [
    "Backend",
    "BackendOptions",
    "DecisionBackend",
    "DecoderError",
    "FieldBackend",
    "http_client",
    "open_backend",
]
