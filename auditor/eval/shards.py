"""Sharded decision evals (``eval --shard I/N``) and their merge (``pcdlint eval-merge``).

A shard answers the rows whose id hashes to it (``auditor.eval.decisions.in_shard``); its JSON
report carries, besides its own metrics, what a merge needs: the request (and its fingerprint),
the data file's SHA-256 and ``--limit``, the seed, the holdout share, N, and per question every
answered labeled row (line, gold answer, held-out side, probabilities) and its order probes.

``merge_reports`` refuses shards that do not belong together — another request, endpoint or
model, other data, another N, seed, holdout or perturbation — and a set with a shard missing or
given twice; each refusal is one line (exit 2). The merged report's metrics, intervals,
confusion matrices and calibration are computed by the same code over the same rows in the same
order (by line) as an unsharded run's, so they are equal to its, exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor.errors import UsageError
from auditor.limits import MAX_SHARDS, Unreadable, load_json, read_regular
from auditor.paths import resolve_path
from auditor.shown import shorten

MAX_SHARD_REPORT_BYTES = 4 * 1024 * 1024 * 1024  # a shard's JSON report read whole, at most
# what every shard of one run must agree on, where it sits in the report
AGREE = {
    "request": ("shard", "request_sha256"),
    "endpoint": ("backend", "endpoint"),
    "model": ("backend", "model"),
    "data": ("data_file", "sha256"),
    "--limit": ("data_file", "limit"),
    "N": ("shard", "count"),
    "--seed": ("options", "seed"),
    "--holdout": ("options", "holdout"),
    "--perturb": ("options", "perturb"),
    "--orders": ("options", "orders"),
}


def read_shard(path: str) -> dict:
    """A shard's JSON report, or a one-line UsageError saying why it is not one."""
    display = shorten(path)
    try:
        raw = read_regular(resolve_path(path), MAX_SHARD_REPORT_BYTES)
        report = load_json(raw)
    except Unreadable as exc:
        raise UsageError(f"{display}: {exc.reason}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{display}: not a JSON report ({shorten(str(exc), 100)})") from None
    if not isinstance(report, dict) or report.get("kind") != "decisions" or report.get("version") != 1:
        raise UsageError(f"{display}: not the JSON report of `pcdlint eval --backend systemone`")
    shard = report.get("shard")
    if not isinstance(shard, dict) or not isinstance(report.get("tallies"), dict):
        raise UsageError(f"{display}: not a shard's report (run `pcdlint eval --shard I/N -f json`)")
    index, count = shard.get("index"), shard.get("count")
    if not (type(index) is int and type(count) is int and 1 <= index <= count <= MAX_SHARDS):
        raise UsageError(f"{display}: its shard block holds no valid I/N")
    return report


def _value(report: dict, where: tuple[str, str]) -> Any:
    block = report.get(where[0])
    return block.get(where[1]) if isinstance(block, dict) else None


def check_shards(named: list[tuple[str, dict]]) -> None:
    """Refuse shards of different runs, and a set with a shard missing or given twice."""
    first_path, first = named[0]
    for path, report in named[1:]:
        for what, where in AGREE.items():
            if _value(report, where) != _value(first, where):
                raise UsageError(
                    f"{shorten(path)}: another {what} than {shorten(first_path)} "
                    f"({shorten(repr(_value(report, where)), 60)} vs {shorten(repr(_value(first, where)), 60)}); "
                    "shards to merge come from one run"
                )
    count = first["shard"]["count"]
    seen: dict[int, str] = {}
    for path, report in named:
        index = report["shard"]["index"]
        if index in seen:
            raise UsageError(
                f"shard {index}/{count} given twice ({shorten(seen[index])} and {shorten(path)})"
            )
        seen[index] = path
    missing = [i for i in range(1, count + 1) if i not in seen]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", …" if len(missing) > 10 else "")
        raise UsageError(f"missing shard{'s' if len(missing) > 1 else ''} {shown} of {count}")


class _Merged:
    """The collector shape ``build_report`` reads (auditor.eval.decisions._Collector)."""

    def __init__(self, named: list[tuple[str, dict]], body: dict):
        from auditor.decoder.systemone import question_keys
        from auditor.eval.tally import QuestionTally

        self.tallies: dict[str, QuestionTally] = {}
        self.failed: list[dict] = []
        predictions: list[dict] = []
        self.rows = self.hits = self.scored = 0
        for path, report in named:
            for qid, question in body["questions"].items():
                data = report["tallies"].get(qid)
                try:
                    tally = QuestionTally.from_dict(
                        qid,
                        question["type"],
                        question_keys(question),
                        data,
                        data.get("probes", []) if isinstance(data, dict) else [],
                    )
                except ValueError as exc:
                    raise UsageError(f"{shorten(path)}: {exc}") from None
                if qid in self.tallies:
                    self.tallies[qid].extend(tally)
                else:
                    self.tallies[qid] = tally
            self.rows += _count(report.get("rows"))
            self.hits += _count(_value(report, ("cache", "hits")))
            self.scored += _count(_value(report, ("cache", "scored")))
            self.failed.extend(f for f in report.get("failed") or [] if isinstance(f, dict))
            predictions.extend(p for p in report.get("predictions") or [] if isinstance(p, dict))
        predictions.sort(key=lambda p: _count(p.get("line")))
        self.predictions = predictions


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def merge_reports(paths: list[str]) -> dict:
    """The report of the whole set from its N shards' reports (see the module docstring)."""
    from auditor.decoder.systemone import check_body
    from auditor.eval.decisions import DecisionEvalOptions, build_report, fingerprint, order_plans

    named = [(path, read_shard(path)) for path in paths]
    check_shards(named)
    first_path, first = named[0]
    body = first["shard"].get("body")
    try:
        check_body(body)
    except Exception:  # DecoderError: not a System One body
        raise UsageError(f"{shorten(first_path)}: its shard block holds no System One request") from None
    if fingerprint(body) != first["shard"]["request_sha256"]:
        raise UsageError(f"{shorten(first_path)}: its request does not match its fingerprint")
    given = first["options"]
    options = DecisionEvalOptions(
        concurrency=given.get("concurrency") or 1,
        holdout=given["holdout"],
        seed=given["seed"],
        perturb=tuple(given.get("perturb") or ()),
        orders=given.get("orders") or 2,
    )
    plans = order_plans(body, options)
    merged = _Merged(named, body)
    servers = [r.get("server") or {} for _path, r in named]
    statuses: dict[str, int] = {}
    for server in servers:
        for status, count in (server.get("by_status") or {}).items():
            statuses[status] = statuses.get(status, 0) + _count(count)
    report = build_report(
        list(body["questions"]),
        merged,
        options,
        plans,
        request_path=first["request"],
        data_path=first["data"],
        identity=first["backend"],
        cache={"path": None, "key": _value(first, ("cache", "key"))},
        server={
            "requests": sum(_count(s.get("requests")) for s in servers),
            "retries": sum(_count(s.get("retries")) for s in servers),
            "by_status": statuses,
        },
    )
    report["data_file"] = first["data_file"]
    report["merged"] = {
        "shards": [
            str(Path(path)) for path, _report in sorted(named, key=lambda item: item[1]["shard"]["index"])
        ],
        "count": first["shard"]["count"],
    }
    return report
