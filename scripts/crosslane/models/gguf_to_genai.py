"""GGUF llama-family model → onnxruntime-genai model folder, plus the host's own greedy tokens as reference.

A program, run by the python of the converter's host venv (models/hostenv.py), never imported by crosslane:
it needs torch, transformers, gguf, accelerate, onnx, onnx-ir and onnxruntime-genai, which crosslane does not.

    python gguf_to_genai.py --gguf FILE --out DIR --precision fp32|int4 --prompt TEXT --new-tokens N

1. transformers loads the GGUF (its Q4_1 weights dequantized to fp32); a GGUF-loaded model refuses
   save_pretrained, so the weights are copied into a plain model of the same config and saved (+ tokenizer).
2. onnxruntime-genai's model builder writes DIR (-e cpu). int4 uses accuracy_level=1 (fp32 compute, the same
   on every arch) and shared_embeddings=false (no GatherBlockQuantized, which older ORT lacks).
3. The venv's onnxruntime-genai generates greedily from DIR: the prompt's ids, the new ids and the smallest
   top-1 − top-2 logit margin over the steps go to DIR/crosslane-reference.json. A margin far above the
   cross-arch logit noise is what makes "same tokens on the target" a fair, exact check.

Offline: the Hugging Face libraries are told so before they are imported. stdout carries one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "HF_HUB_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1", "TOKENIZERS_PARALLELISM": "false",
               "TQDM_DISABLE": "1"}
EXTRA_OPTIONS = {"fp32": [], "int4": ["accuracy_level=1", "shared_embeddings=false"]}
REFERENCE = "crosslane-reference.json"


def export_hf(gguf: Path, hf_dir: Path) -> dict[str, Any]:
    import torch  # type: ignore[import-not-found]
    from transformers import AutoModelForCausalLM, AutoTokenizer  # type: ignore[import-not-found]

    torch.manual_seed(0)
    options: dict[str, Any] = {"gguf_file": gguf.name, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), **options)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), dtype=torch.float32, **options)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    # With tied embeddings the GGUF has no separate lm_head.
    missing = [key for key in missing if not (key == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or unexpected:
        raise SystemExit(f"gguf_to_genai: state dict mismatch: missing={missing} unexpected={unexpected}")
    if config.tie_word_embeddings:
        plain.tie_weights()
    plain.eval()
    plain.save_pretrained(str(hf_dir))
    tokenizer.save_pretrained(str(hf_dir))
    return {"model_type": config.model_type, "layers": config.num_hidden_layers, "hidden": config.hidden_size,
            "vocab": config.vocab_size}


def build(hf_dir: Path, out: Path, precision: str, cache: Path) -> None:
    argv = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf_dir), "-o", str(out),
            "-p", precision, "-e", "cpu", "-c", str(cache)]
    if EXTRA_OPTIONS[precision]:
        argv += ["--extra_options", *EXTRA_OPTIONS[precision]]
    print("+", " ".join(argv), file=sys.stderr, flush=True)
    subprocess.run(argv, check=True, stdout=sys.stderr)


def greedy(folder: Path, prompt: str, new_tokens: int) -> dict[str, Any]:
    import numpy as np
    import onnxruntime_genai as og  # type: ignore[import-not-found]

    model = og.Model(str(folder))
    tokenizer = og.Tokenizer(model)
    ids = [int(t) for t in tokenizer.encode(prompt)]
    params = og.GeneratorParams(model)
    # genai sizes the shared KV buffer by max_length; the config's 8192 would cost ~0.4 GB.
    params.set_search_options(do_sample=False, max_length=len(ids) + new_tokens)
    generator = og.Generator(model, params)
    generator.append_tokens(ids)
    margins: list[float] = []
    while not generator.is_done():
        generator.generate_next_token()
        # After generate_next_token() the logits output holds the step the chosen token came from.
        logits = np.array(generator.get_output("logits"))[0, -1].astype(np.float64)
        top = np.sort(logits)[-2:]
        margins.append(float(top[1] - top[0]))
    sequence = [int(t) for t in generator.get_sequence(0)]
    new = sequence[len(ids):]
    return {"prompt": prompt, "prompt_ids": ids, "new_ids": new, "text": tokenizer.decode(new),
            "min_margin": round(min(margins), 4), "by": f"onnxruntime-genai {og.__version__} on the host"}


def main(argv: list[str] | None = None) -> int:
    os.environ.update(OFFLINE_ENV)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--precision", choices=sorted(EXTRA_OPTIONS), default="fp32")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--new-tokens", type=int, default=16)
    args = parser.parse_args(argv)
    start = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gguf-to-genai-") as scratch:
        hf_dir = Path(scratch) / "hf"
        hf_dir.mkdir()
        with contextlib.redirect_stdout(sys.stderr):
            config = export_hf(args.gguf.resolve(), hf_dir)
        exported = time.monotonic()
        build(hf_dir, args.out, args.precision, Path(scratch) / "cache")
    built = time.monotonic()
    with contextlib.redirect_stdout(sys.stderr):
        reference = greedy(args.out, args.prompt, args.new_tokens)
    (args.out / REFERENCE).write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"config": config, "reference": reference,
                      "seconds": {"export": round(exported - start, 1), "builder": round(built - exported, 1),
                                  "reference": round(time.monotonic() - built, 1)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
