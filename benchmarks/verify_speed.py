"""verify's speed as ratios: model load, prefill, parity, PCD vs greedy generation, rows vs tree.

Runs in one process on the same model, device and prompt:

0. load: the cached safetensors conversion of the GGUF (what ``load_model`` does) against
   transformers' own GGUF path (parse + de-quantize), and llama.cpp mapping the same file
   when llama-cpp-python is installed;
   prefill of ``high_cardinality_255``'s prompt: pcdlint's prefill against a bare one-shot
   forward and the same bare forward in 512-token chunks through a cache;
   parity on ``support_triage``: ``fast`` (cache-copy continuations + one fresh forward)
   against ``full`` (a fresh forward per field);

1. ``support_triage`` (28 fields): the PCD path (one prefill, one batched suffix
   pass, first-token scores) against ``model.generate`` greedily writing the whole
   JSON object from the same prompt. Generated tokens are counted; output that is
   not valid JSON with every field set to an allowed value is recorded as a
   failure, not as a speed.
2. ``high_cardinality_255``'s ``customs_category`` (255 options) scored
   full-sequence with one row per option against the packed token tree.

Peak memory is the GPU allocator's peak on CUDA, or the peak resident-set growth
during the stage on CPU.

    python benchmarks/verify_speed.py [--presets ../shared/corpus/pcd-presets] [--device auto] [--dtype auto]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from auditor.decoder import load_fields, load_model  # noqa: E402
from auditor.decoder.pcd import Scorer  # noqa: E402
from auditor.decoder.prompt import build_prompt, plan_field  # noqa: E402
from auditor.decoder.result import Ledger  # noqa: E402


class PeakMemory:
    """Peak memory growth over a block: CUDA allocator peak, or sampled RSS on CPU."""

    def __init__(self, device: str):
        self.device = device
        self.peak_bytes = 0

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as statm:
            import os

            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def __enter__(self):
        if self.device == "cuda":
            import torch

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.base = torch.cuda.memory_allocated()
        else:
            self.base = self._rss()
            self.top = self.base
            self.running = True
            self.thread = threading.Thread(target=self._sample, daemon=True)
            self.thread.start()
        self.started = time.perf_counter()
        return self

    def _sample(self):
        while self.running:
            self.top = max(self.top, self._rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        if self.device == "cuda":
            import torch

            torch.cuda.synchronize()
            self.peak_bytes = torch.cuda.max_memory_allocated() - self.base
        else:
            self.running = False
            self.thread.join()
            self.peak_bytes = max(self.top, self._rss()) - self.base
        self.seconds = time.perf_counter() - self.started


def gib(value: int) -> str:
    return f"{value / 2**30:.2f} GiB"


def timed(function):
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def load_ratios(torch_dtype) -> dict:
    from auditor.decoder.model import _convert_gguf, _load_gguf, default_gguf_path

    path = default_gguf_path()
    _load_gguf(path, torch_dtype, [], False)  # make sure the conversion is cached
    _, cached = timed(lambda: _load_gguf(path, torch_dtype, [], False))
    _, transformers_gguf = timed(lambda: _convert_gguf(path, torch_dtype, [], False))
    report = {"cached_conversion_s": cached, "transformers_gguf_s": transformers_gguf, "llama_cpp_s": None}
    try:
        from llama_cpp import Llama

        _, report["llama_cpp_s"] = timed(lambda: Llama(model_path=str(path), n_ctx=512, verbose=False))
    except ImportError:
        pass
    return report


def prefill_ratios(loaded, preset: Path) -> dict:
    import torch
    from transformers import DynamicCache

    from auditor.decoder.pcd import PREFILL_CHUNK

    fields, context = load_fields(preset)
    ids = loaded.linter_tokenizer.encode(build_prompt(loaded.tokenizer, fields, context))
    scorer = Scorer(loaded, Ledger())
    device = scorer.device
    base = loaded.model.base_model

    def one_shot():
        with torch.inference_mode():
            base(input_ids=torch.tensor([ids], device=device), use_cache=False)

    def chunked():
        cache = DynamicCache(config=loaded.model.config)
        with torch.inference_mode():
            for start in range(0, len(ids), PREFILL_CHUNK):
                base(
                    input_ids=torch.tensor([ids[start : start + PREFILL_CHUNK]], device=device),
                    cache=cache,
                    use_cache=True,
                )

    _, pcdlint = timed(lambda: scorer.prefill(ids, "prefill"))
    _, bare_chunked = timed(chunked)
    _, bare_one_shot = timed(one_shot)
    return {
        "prompt_tokens": len(ids),
        "pcdlint_s": pcdlint,
        "bare_chunked_s": bare_chunked,
        "bare_one_shot_s": bare_one_shot,
    }


def parity_ratios(loaded, preset: Path) -> dict:
    from auditor.decoder import verify_fields

    fields, context = load_fields(preset)
    report = {}
    for mode in ("fast", "full"):
        result = verify_fields(fields, context, model=loaded, progress=False, parity=mode)
        report[mode] = {
            "seconds": result.seconds["parity"],
            "max_abs_diff": result.parity_max_abs_diff,
            "total_seconds": sum(result.seconds.values()),
        }
    return report


def pcd_vs_generate(loaded, preset: Path) -> dict:
    import torch

    fields, context = load_fields(preset)
    tokenizer = loaded.linter_tokenizer
    prompt_text = build_prompt(loaded.tokenizer, fields, context)
    prompt_ids = tokenizer.encode(prompt_text)
    plans = [plan_field(tokenizer, spec, prompt_text, prompt_ids) for spec in fields]
    ledger = Ledger()
    scorer = Scorer(loaded, ledger)
    with PeakMemory(loaded.device) as pcd_memory:
        with ledger.stage("prefill"):
            cache = scorer.prefill(prompt_ids, "prefill")
        with ledger.stage("suffix"):
            logits = scorer.suffix_logits(cache, len(prompt_ids), [p.suffix_ids for p in plans], "suffix")
            answers = {
                plan.name: plan.options[int(torch.argmax(row[torch.tensor(plan.scored_ids)]))]
                for plan, row in zip(plans, logits)
            }
    del cache
    with PeakMemory(loaded.device) as gen_memory, torch.inference_mode():
        output = loaded.model.generate(
            torch.tensor([prompt_ids], device=scorer.device),
            attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long, device=scorer.device),
            max_new_tokens=40 * len(fields) + 64,
            do_sample=False,
            pad_token_id=loaded.tokenizer.eos_token_id,
        )
    new_tokens = output[0, len(prompt_ids) :].tolist()
    text = "{\n" + loaded.tokenizer.decode(new_tokens, skip_special_tokens=True)
    failure = None
    try:
        generated = json.JSONDecoder().raw_decode(text)[0]
        bad = [p.name for p in plans if generated.get(p.name, object()) not in p.options]
        if bad:
            failure = f"{len(bad)} field(s) missing or outside their options, e.g. {bad[0]}"
    except json.JSONDecodeError as exc:
        failure = f"not valid JSON ({exc.msg} at char {exc.pos})"
    pcd_seconds = sum(ledger.seconds.values())
    # What a successful greedy run would have had to write: the object PCD decided, as the model
    # writes it (`{` is already in the prompt), plus the closing brace.
    decided = json.dumps(answers, indent=2, ensure_ascii=False)[1:]
    needed_tokens = len(tokenizer.encode(decided))
    per_token = gen_memory.seconds / max(1, len(new_tokens))
    return {
        "fields": len(fields),
        "prompt_tokens": len(prompt_ids),
        "pcd": {
            "passes": ledger.passes,
            "seconds": ledger.seconds,
            "total_seconds": pcd_seconds,
            "peak_bytes": pcd_memory.peak_bytes,
        },
        "generate": {
            "tokens": len(new_tokens),
            "seconds": gen_memory.seconds,
            "seconds_per_token": gen_memory.seconds / max(1, len(new_tokens)),
            "peak_bytes": gen_memory.peak_bytes,
            "failure": failure,
            "text_head": text[:200],
        },
        "speedup": None if failure else gen_memory.seconds / pcd_seconds,
        # an estimate, not a measurement: the decided object's tokens at the measured ms/token
        "estimated": {
            "tokens": needed_tokens,
            "seconds": needed_tokens * per_token,
            "speedup": needed_tokens * per_token / pcd_seconds,
        },
        "answers_agree": None if failure else sum(answers[k] == generated.get(k) for k in answers),
    }


def rows_vs_tree(loaded, preset: Path, field_name: str = "customs_category") -> dict:
    fields, context = load_fields(preset)
    tokenizer = loaded.linter_tokenizer
    prompt_text = build_prompt(loaded.tokenizer, fields, context)
    prompt_ids = tokenizer.encode(prompt_text)
    (plan,) = [plan_field(tokenizer, s, prompt_text, prompt_ids) for s in fields if s.name == field_name]
    ledger = Ledger()
    scorer = Scorer(loaded, ledger)
    with ledger.stage("prefill"):
        cache = scorer.prefill(prompt_ids, "prefill")
    report = {
        "options": len(plan.options),
        "prompt_tokens": len(prompt_ids),
        "prefill_seconds": ledger.seconds["prefill"],
    }
    scores = {}
    for mode in ("rows", "tree"):
        with PeakMemory(loaded.device) as memory:
            scores[mode] = scorer.teacher_forced(cache, len(prompt_ids), [plan], mode, mode=mode)[0]
        report[mode] = {
            "seconds": memory.seconds,
            "passes": ledger.passes[mode],
            "peak_bytes": memory.peak_bytes,
        }
    report["max_abs_diff"] = max(abs(a - b) for a, b in zip(scores["rows"].sums, scores["tree"].sums))
    report["tree_speedup"] = report["rows"]["seconds"] / report["tree"]["seconds"]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", type=Path, default=REPO.parent / "shared" / "corpus" / "pcd-presets")
    parser.add_argument("--model", default=None)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument(
        "--skip-load", action="store_true", help="skip the load comparison (transformers' GGUF path is slow)"
    )
    args = parser.parse_args(argv)

    loaded = load_model(args.model, device=args.device, dtype=args.dtype, progress=False)
    print(
        f"model {loaded.name} | device {loaded.device} | dtype {loaded.dtype} | load {loaded.load_seconds:.1f}s"
    )
    ratios = {}
    if args.model is None and not args.skip_load:
        load = ratios["load"] = load_ratios(loaded.model.dtype)
        line = (
            f"\nload: cached conversion {load['cached_conversion_s']:.2f}s, transformers GGUF path "
            f"{load['transformers_gguf_s']:.2f}s ({load['transformers_gguf_s'] / load['cached_conversion_s']:.1f}x slower)"
        )
        if load["llama_cpp_s"] is not None:
            line += (
                f", llama.cpp mmap {load['llama_cpp_s']:.2f}s "
                f"(cached conversion = {load['cached_conversion_s'] / load['llama_cpp_s']:.1f}x llama.cpp)"
            )
        print(line)
    prefill = ratios["prefill"] = prefill_ratios(loaded, args.presets / "high_cardinality_255.json")
    print(
        f"prefill ({prefill['prompt_tokens']} tokens): pcdlint {prefill['pcdlint_s']:.2f}s, bare forward in "
        f"512-token chunks {prefill['bare_chunked_s']:.2f}s, bare one-shot {prefill['bare_one_shot_s']:.2f}s; "
        f"pcdlint / chunked = {prefill['pcdlint_s'] / prefill['bare_chunked_s']:.2f}, "
        f"pcdlint / one-shot = {prefill['pcdlint_s'] / prefill['bare_one_shot_s']:.2f}"
    )
    parity = ratios["parity"] = parity_ratios(loaded, args.presets / "support_triage.json")
    print(
        f"parity (support_triage): fast {parity['fast']['seconds']:.2f}s (max |Δ| {parity['fast']['max_abs_diff']:.1e}), "
        f"full {parity['full']['seconds']:.2f}s (max |Δ| {parity['full']['max_abs_diff']:.1e}); "
        f"full / fast = {parity['full']['seconds'] / parity['fast']['seconds']:.1f}x; "
        f"whole verify_fields with fast parity {parity['fast']['total_seconds']:.2f}s"
    )
    triage = pcd_vs_generate(loaded, args.presets / "support_triage.json")
    pcd, gen = triage["pcd"], triage["generate"]
    print(f"\nsupport_triage: {triage['fields']} fields, prompt {triage['prompt_tokens']} tokens")
    print(
        f"  PCD      {pcd['total_seconds']:.2f}s  passes {pcd['passes']}  "
        + " ".join(f"{k} {v:.2f}s" for k, v in pcd["seconds"].items())
        + f"  peak +{gib(pcd['peak_bytes'])}"
    )
    outcome = f"FAILED: {gen['failure']}" if gen["failure"] else "valid JSON"
    print(
        f"  generate {gen['seconds']:.2f}s  {gen['tokens']} tokens ({1000 * gen['seconds_per_token']:.1f} ms/token)"
        f"  peak +{gib(gen['peak_bytes'])}  {outcome}"
    )
    if triage["speedup"] is not None:
        print(
            f"  PCD is {triage['speedup']:.1f}x faster; answers agree on {triage['answers_agree']}/{triage['fields']} fields"
        )
    else:
        print("  no measured speed ratio: generation failed")
    est = triage["estimated"]
    print(
        f"  estimate (not measured): greedy writing of the decided {est['tokens']}-token object at the "
        f"measured ms/token = {est['seconds']:.2f}s, {est['speedup']:.1f}x the PCD path"
    )

    cardinal = rows_vs_tree(loaded, args.presets / "high_cardinality_255.json")
    print(
        f"\ncustoms_category: {cardinal['options']} options full-sequence, prompt {cardinal['prompt_tokens']} tokens"
    )
    for mode in ("rows", "tree"):
        entry = cardinal[mode]
        print(
            f"  {mode:4} {entry['seconds']:.2f}s  passes {entry['passes']}  peak +{gib(entry['peak_bytes'])}"
        )
    print(
        f"  tree is {cardinal['tree_speedup']:.2f}x faster; max |Δ logprob| rows vs tree {cardinal['max_abs_diff']:.1e}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "model": loaded.name,
                    "device": loaded.device,
                    "dtype": loaded.dtype,
                    "support_triage": triage,
                    "customs_category": cardinal,
                    **ratios,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
