"""Reference decoder: run a schema's enum fields through a real model as PCD engines do.

``verify_fields`` prefills the prompt once, broadcasts the cache to one row per field,
scores every field's first token in one batched pass, and checks that against
full-sequence and letter-slot scoring, with forward passes counted and timed.
torch and transformers are imported only when a model is loaded.
"""

from auditor.decoder.errors import DecoderError
from auditor.decoder.fields import FieldSpec, load_preset_fields
from auditor.decoder.model import LoadedModel, load_model
from auditor.decoder.result import FieldResult, VerifyResult
from auditor.decoder.verdict import format_text
from auditor.decoder.verify import verify_fields

__all__ = [
    "DecoderError",
    "FieldResult",
    "FieldSpec",
    "LoadedModel",
    "VerifyResult",
    "format_text",
    "load_model",
    "load_preset_fields",
    "verify_fields",
]
