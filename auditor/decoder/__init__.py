"""Reference decoder: run a schema's enum fields through a real model as PCD engines do.

``verify_fields`` prefills the prompt once, scores every field's first token in one packed
pass over the shared cache, and checks that against full-sequence, constrained-decoding and
letter-slot scoring (every cut read off ``auditor.pcd``), with forward passes (or server requests) counted and timed. Scores come
from a backend (``backends.py``: the model in-process, or an OpenAI-compatible server).
torch and transformers are imported only when a model is loaded.
"""

from auditor.decoder.backends import FieldScores, InProcessBackend, OpenAIBackend, ScoreRequest
from auditor.decoder.constrained import ConstrainedPick, constrained_pick
from auditor.decoder.errors import DecoderError
from auditor.decoder.model import LoadedModel, load_model
from auditor.decoder.prompt import FieldSpec, load_fields, specs_for_sites
from auditor.decoder.result import FieldResult, VerifyResult
from auditor.decoder.verify import verify_fields

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
