"""Reference decoder: run a schema's enum fields through a real model as PCD engines do.

``verify_fields`` prefills the prompt once, broadcasts the cache to one row per field,
scores every field's first token in one batched pass, and checks that against
full-sequence and letter-slot scoring (every cut read off ``auditor.pcd``), with forward passes counted and timed.
torch and transformers are imported only when a model is loaded.
"""

from auditor.decoder.errors import DecoderError
from auditor.decoder.model import LoadedModel, load_model
from auditor.decoder.prompt import FieldSpec, load_fields, specs_for_sites
from auditor.decoder.result import FieldResult, VerifyResult
from auditor.decoder.verify import verify_fields

__all__ = [
    "DecoderError",
    "FieldResult",
    "FieldSpec",
    "LoadedModel",
    "VerifyResult",
    "load_fields",
    "load_model",
    "specs_for_sites",
    "verify_fields",
]
