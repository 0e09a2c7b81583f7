"""`verify` on decision requests: a served System One endpoint, or llm2jev's service in process.

``verify --backend systemone --base-url URL`` POSTs each request (a System One body) to the
server; ``verify --backend local --engine llm2jev`` computes what a served llm2jev computes, on
pcdlint's decoder model. Both print every question's answer and probabilities and run the
option-order probe (``auditor.decoder.orderprobe``).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from auditor.errors import UsageError

IN_PROCESS_ENGINES = ("llm2jev",)  # decision engines pcdlint can compute in this process

DECISION_OPTIONS = [
    click.option(
        "--engine",
        "engine_name",
        metavar="NAME",
        help="The decision engine the request is for. With --backend local: compute that engine's "
        "answer in this process (llm2jev).",
    ),
    click.option(
        "--route",
        metavar="PATH",
        default="/v1/systemone",
        show_default=True,
        help="--backend systemone: the path after --base-url (OpenRouter /api/alpha/decisions, "
        "Fireworks /inference/v1/systemone, Perplexity /v1/decisions).",
    ),
    click.option(
        "--probe",
        type=click.Choice(["auto", "order", "off"]),
        default="auto",
        show_default=True,
        help="Option-order probe of decision requests: auto = choices with 3 or more options, "
        "order = every choice, off = none.",
    ),
    click.option(
        "--orders",
        type=click.IntRange(2, 24),
        default=4,
        show_default=True,
        help="Display orders per probed question (original, reversed, rotated by 1, 2, …).",
    ),
]
DECISION_KEYS = ("engine_name", "route", "probe", "orders")


def decision_options(func):
    for option in reversed(DECISION_OPTIONS):
        func = option(func)
    return func


def wants_decisions(verify_opts: dict, decision_opts: dict) -> bool:
    return verify_opts["backend"] == "systemone" or decision_opts["engine_name"] is not None


def load_bodies(paths: list[str], context: str | None) -> list[tuple[str, dict]]:
    """Each file as a System One body (``--context`` becomes the state of a body without one)."""
    from auditor.decoder.systemone import check_body

    bodies = []
    for name in paths:
        path = Path(name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"{name}: cannot read ({exc.strerror or exc})") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise UsageError(
                f"{name}: not a JSON System One request ({str(exc).splitlines()[0][:120]})"
            ) from None
        try:
            body = check_body(data)
        except Exception as exc:  # DecoderError: the body's outline
            raise UsageError(f"{name}: {exc}") from None
        if context is not None and "state" not in body:
            body = {**body, "state": context}
        bodies.append((name, body))
    return bodies


def http_client(verify_opts: dict):
    """The one HTTP client for --base-url, with the key from --api-key-env (never from argv)."""
    from auditor.decoder.http import HttpClient, api_key_from_env

    return HttpClient(
        verify_opts["base_url"],
        api_key=api_key_from_env(verify_opts["api_key_env"]),
        read_deadline=verify_opts["timeout_s"],
        retries=verify_opts["retries"],
        max_connections=max(4, verify_opts.get("concurrency") or 4),
    )


def decision_engine(verify_opts: dict, engine_name: str | None, route: str, allow_download: bool, progress):
    """What answers the requests: a SystemOneBackend, or an in-process engine."""
    from auditor.decoder import load_model
    from auditor.decoder.systemone import SystemOneBackend

    if verify_opts["backend"] == "systemone":
        if not verify_opts["base_url"]:
            raise UsageError(
                "--backend systemone needs --base-url URL (the server root, e.g. http://127.0.0.1:8080)"
            )
        return SystemOneBackend(
            http_client(verify_opts), verify_opts["base_url"], route, verify_opts["model_spec"]
        )
    if verify_opts["backend"] != "local":
        raise UsageError(f"--engine {engine_name} is for --backend local or --backend systemone")
    if engine_name not in IN_PROCESS_ENGINES:
        raise UsageError(
            f"--backend local has no in-process reference for engine {engine_name!r} "
            f"(available: {', '.join(IN_PROCESS_ENGINES)}); use --backend systemone to ask its server"
        )
    if verify_opts["base_url"]:
        raise UsageError("--base-url is for --backend openai or systemone")
    from auditor.decoder.llm2jev import Llm2jevEngine

    with progress.stage("model load"):
        loaded = load_model(
            verify_opts["model_spec"],
            device=verify_opts["device"],
            dtype=verify_opts["dtype"],
            allow_download=allow_download,
            progress=progress.enabled,
        )
    return Llm2jevEngine(loaded)


def verify_decisions(
    paths: list[str],
    verify_opts: dict,
    decision_opts: dict,
    context: str | None,
    *,
    allow_download: bool,
    output_format: str,
    output: str | None,
    progress,
) -> int:
    """Answer and probe every request; write the report; return the exit code."""
    from auditor.cli.common import write_output
    from auditor.decoder.orderprobe import probe_request
    from auditor.decoder.systemone import DecisionRefused
    from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS
    from auditor.reporting.decisions import decision_to_dict, format_decision, format_refusal

    bodies = load_bodies(paths, context)
    engine = decision_engine(
        verify_opts, decision_opts["engine_name"], decision_opts["route"], allow_download, progress
    )
    identity = engine.identity()
    entries, texts, findings = [], [], False
    for path, body in bodies:
        try:
            with progress.stage(f"decide {Path(path).name}"):
                decision = probe_request(
                    engine, body, mode=decision_opts["probe"], orders=decision_opts["orders"]
                )
        except DecisionRefused as refused:
            findings = True
            entries.append(
                {
                    "path": path,
                    "backend": identity,
                    "refused": {"status": refused.status, "message": refused.message},
                }
            )
            texts.append(format_refusal(path, identity, refused))
            continue
        findings = findings or decision.flipped
        entries.append(decision_to_dict(path, identity, decision))
        texts.append(format_decision(path, identity, decision))
    if output_format == "json":
        from auditor.reporting.escape import strict_json

        text = (
            json.dumps(
                strict_json({"version": 1, "lint": None, "verify": [], "decisions": entries}),
                indent=2,
                ensure_ascii=False,
                allow_nan=False,
            )
            + "\n"
        )
    else:
        text = "".join(texts)
    write_output(text, output, list(paths), kind="json" if output_format == "json" else "verify")
    return EXIT_FINDINGS if findings else EXIT_CLEAN
