"""`pcdlint conform`: send the same decision requests to several servers and show where they
differ, and where pcdlint's verdict for each server's engine disagrees with what it did."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from auditor.cli.choices import format_option
from auditor.cli.common import client_options, fail, write_output
from auditor.errors import UsageError


def _client_options(func: Any) -> Any:
    """The one HTTP client's options (requests in flight, deadline, retries), without
    --api-key-env: each server names its own key variable in the servers file."""
    for option in reversed(client_options("every server")):
        func = option(func)
    return func


@click.command("conform")
@click.argument("requests", nargs=-1, required=True)
@click.option(
    "--servers",
    "servers_path",
    required=True,
    metavar="FILE",
    help="TOML file of [[server]] tables: name, base_url, route (default /v1/systemone), engine "
    "(an engine-table decision row), api_key_env (the variable holding its key; never printed), model.",
)
@click.option(
    "-t",
    "--tokenizer",
    metavar="SPEC",
    default=None,
    help="Tokenizer of pcdlint's static verdicts (default: qwen2.5).",
)
@format_option("conform")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@_client_options
def conform(
    requests: tuple[str, ...],
    servers_path: str,
    tokenizer: str | None,
    output_format: str,
    output: str | None,
    **client_opts: Any,
) -> None:
    """Send every decision request to every server of --servers and compare what they did.

    Per request: each server's answer or refusal (with its message), each question's answers,
    the largest probability difference between servers and the label mass, and where pcdlint's
    static verdict for a server's engine disagrees with what that server did.

    Exit status: 0 every server did what pcdlint predicts and they agree on which requests they
    answer, 1 pcdlint disagrees with a server or the servers differ on a request, 2 usage or
    input error, or a server could not be asked (unreachable, 5xx, an unreadable answer).
    """
    from auditor.backends import BackendOptions
    from auditor.decoder.conform import ask, load_servers, read_requests
    from auditor.decoder.errors import DecoderError
    from auditor.decoder.open import http_client
    from auditor.eval.decision_verify import static_findings
    from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
    from auditor.reporting.conform import conform_findings, conform_report, conform_text
    from auditor.reporting.outputs import check_outputs, write_error

    client_opts.pop("api_key_env", None)
    paths = list(requests)
    try:
        if output:
            check_outputs([("--output", output)], [*paths, servers_path])
        servers = load_servers(servers_path)
        loaded = read_requests(paths)
        findings = static_findings(paths, sorted({s.engine.name for s in servers}), tokenizer)

        def client_for(server: Any) -> Any:
            options = BackendOptions(
                "systemone",
                api_key_env=server.api_key_env,
                concurrency=client_opts["concurrency"],
                timeout_s=client_opts["timeout_s"],
                retries=client_opts["retries"],
                retry_after_cap=client_opts["retry_after_cap"],
            )
            return http_client(options, server.base_url)

        outcomes = ask(servers, loaded, client_for, concurrency=client_opts["concurrency"])
        report = conform_report(servers, loaded, outcomes, findings)
        if output_format == "json":
            from auditor.reporting.escape import strict_json

            text = json.dumps(strict_json(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        else:
            text = conform_text(report)
        write_output(text, output, paths, kind="json" if output_format == "json" else "verify")
    except (UsageError, DecoderError) as problem:
        fail(str(problem))
    failed = report["conform"]["summary"]["failed"]
    if failed:
        write_error(f"pcdlint: error: {failed} request(s) could not be asked of a server (see the report)")
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if conform_findings(report) else EXIT_CLEAN)


# each server names its key variable in the servers file: the shared --api-key-env is not offered
conform.params = [param for param in conform.params if param.name != "api_key_env"]
