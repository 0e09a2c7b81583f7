"""Reference decoder: run a schema's enum fields through a real model as PCD engines do.

``verify_fields`` prefills the prompt once, scores every field's first token in one packed
pass over the shared cache, and checks that against full-sequence, constrained-decoding and
letter-slot scoring (every cut read off ``auditor.pcd``), with forward passes (or server requests) counted and timed. Scores come
from a backend (``backends.py``: the model in-process, or an OpenAI-compatible server).
torch and transformers are imported only when a model is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.lazy import exports

# each name and the module it lives in: imported on first use (auditor.lazy.exports)
_WHERE = {
    "FieldScores": "auditor.decoder.backends",
    "InProcessBackend": "auditor.decoder.backends",
    "OpenAIBackend": "auditor.decoder.backends",
    "ScoreRequest": "auditor.decoder.backends",
    "ConstrainedPick": "auditor.decoder.constrained",
    "constrained_pick": "auditor.decoder.constrained",
    "DecoderError": "auditor.decoder.errors",
    "LoadedModel": "auditor.decoder.model",
    "load_model": "auditor.decoder.model",
    "FieldSpec": "auditor.decoder.prompt",
    "load_fields": "auditor.decoder.prompt",
    "specs_for_sites": "auditor.decoder.prompt",
    "FieldResult": "auditor.decoder.result",
    "VerifyResult": "auditor.decoder.result",
    "verify_fields": "auditor.decoder.verify",
}

__all__ = [
    "ConstrainedPick",
    "DecoderError",
    "FieldResult",
    "FieldScores",
    "FieldSpec",
    "InProcessBackend",
    "LoadedModel",
    "OpenAIBackend",
    "ScoreRequest",
    "VerifyResult",
    "constrained_pick",
    "load_fields",
    "load_model",
    "specs_for_sites",
    "verify_fields",
]

if TYPE_CHECKING:
    from auditor.decoder.backends import FieldScores, InProcessBackend, OpenAIBackend, ScoreRequest
    from auditor.decoder.constrained import ConstrainedPick, constrained_pick
    from auditor.decoder.errors import DecoderError
    from auditor.decoder.model import LoadedModel, load_model
    from auditor.decoder.prompt import FieldSpec, load_fields, specs_for_sites
    from auditor.decoder.result import FieldResult, VerifyResult
    from auditor.decoder.verify import verify_fields


__getattr__ = exports(globals(), _WHERE)
