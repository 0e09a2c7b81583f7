"""`pcdlint eval`: what a schema's decisions are worth on labeled data.

Per field and scoring method (first-token as shipped engines gather it, full-sequence,
constrained pick, letter slots where viable): accuracy with a Wilson 95 % interval, macro-F1,
the confusion matrix, the errors tokenization causes and the first-token ceiling; calibration
(ECE, NLL, temperature scaling on a held-out split by row id); option-order perturbation.

``metrics`` and ``constrained`` are pure; ``backends`` scores rows on a model; ``cache`` keeps
per-row scores so an interrupted run resumes; ``runner`` builds the versioned JSON report,
which ``auditor.reporting.eval_report`` renders as text, JSON or HTML. torch is imported only when a model scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.lazy import exports

# each name and the module it lives in: imported on first use (auditor.lazy.exports)
_WHERE = {
    "METHODS": "auditor.eval.backends",
    "FieldStructure": "auditor.eval.backends",
    "InProcessBackend": "auditor.eval.backends",
    "ScoringBackend": "auditor.eval.backends",
    "EvalField": "auditor.eval.data",
    "LabeledData": "auditor.eval.data",
    "Row": "auditor.eval.data",
    "load_fields": "auditor.eval.data",
    "load_rows": "auditor.eval.data",
    "REPORT_VERSION": "auditor.eval.runner",
    "EvalOptions": "auditor.eval.runner",
    "calibration_file": "auditor.eval.runner",
    "run_eval": "auditor.eval.runner",
}

__all__ = [
    "METHODS",
    "REPORT_VERSION",
    "EvalField",
    "EvalOptions",
    "FieldStructure",
    "InProcessBackend",
    "LabeledData",
    "Row",
    "ScoringBackend",
    "calibration_file",
    "load_fields",
    "load_rows",
    "run_eval",
]

if TYPE_CHECKING:
    from auditor.eval.backends import METHODS, FieldStructure, InProcessBackend, ScoringBackend
    from auditor.eval.data import EvalField, LabeledData, Row, load_fields, load_rows
    from auditor.eval.runner import REPORT_VERSION, EvalOptions, calibration_file, run_eval


__getattr__ = exports(globals(), _WHERE)
