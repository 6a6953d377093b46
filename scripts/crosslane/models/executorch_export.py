"""One ExecuTorch case exported on the host to a bundled program (.bpte) with reference outputs.

A program, run by the python of the [hostenvs.executorch-aot] venv (torch, executorch, transformers); crosslane
itself only reads MODELS (the names it can export): torch and executorch are imported inside the functions.

    python executorch_export.py --model add --backend portable|xnnpack [--quantize] --out X.bpte

Models are built from code with fixed seeds and no downloads. Inputs are chosen so the outputs are of order 1
(a random-weight model whose outputs are ~1e-10 passes any absolute tolerance): the summary records the mean
|output| of test case 0, which the smoke requires to be at least MIN_MAGNITUDE. The runner compares test case
0 only; the smoke also reads the runner's error statistics for that case and holds them to the tolerance.
stdout carries one JSON line (model, backend, quantize, delegated nodes, output magnitude, tolerances).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# Tolerances the runner is given (and the smoke checks): fp32 is tight; int8 as upstream's run.sh.
TOLERANCES = {False: (0.01, 0.01), True: (0.1, 0.25)}


def build_add(torch: Any) -> tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]:
    class Add(torch.nn.Module):  # type: ignore[misc]
        def forward(self, x: Any, y: Any) -> Any:
            return x + y

    generator = torch.Generator().manual_seed(0)
    cases = [(torch.randn(1, 4, generator=generator), torch.randn(1, 4, generator=generator)) for _ in range(3)]
    return Add().eval(), cases[0], cases


def build_llama2(torch: Any) -> tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]:
    from executorch.examples.models.llama.llama_transformer import (  # type: ignore[import-not-found]
        construct_transformer,
    )
    from executorch.examples.models.llama.model_args import ModelArgs  # type: ignore[import-not-found]

    torch.manual_seed(0)
    args = ModelArgs(dim=128, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=1024, hidden_dim=256, max_seq_len=8,
                     max_context_len=8, rope_theta=10000.0)
    model = construct_transformer(args).eval()
    example = (torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]], dtype=torch.long),)
    return model, example, [example]


def build_mobilebert(torch: Any) -> tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]:
    from transformers import MobileBertConfig, MobileBertModel  # type: ignore[import-not-found]

    torch.manual_seed(0)
    # A small config-only model; initializer_range 0.1 gives outputs of order 0.3 (the default's ~0.02 would sit
    # under the quantized atol, so that check could not fail).
    config = MobileBertConfig(vocab_size=1024, hidden_size=128, embedding_size=64, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=128, intra_bottleneck_size=32,
                              initializer_range=0.1)

    class Wrapper(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.model = MobileBertModel(config).eval()

        def forward(self, input_ids: Any) -> Any:
            return self.model(input_ids).last_hidden_state

    example = (torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]]),)
    return Wrapper().eval(), example, [example]


MODELS = {"add": build_add, "llama2": build_llama2, "mobilebert": build_mobilebert}


def export(model_name: str, backend: str, quantize: bool, out: Path) -> dict[str, object]:
    import torch  # type: ignore[import-not-found]
    from executorch.devtools import BundledProgram  # type: ignore[import-not-found]
    from executorch.devtools.bundled_program.config import (  # type: ignore[import-not-found]
        MethodTestCase,
        MethodTestSuite,
    )
    from executorch.devtools.bundled_program.serialize import (  # type: ignore[import-not-found]
        serialize_from_bundled_program_to_flatbuffer,
    )
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower  # type: ignore[import-not-found]

    model, example, cases = MODELS[model_name](torch)
    if quantize:
        from executorch.examples.xnnpack import MODEL_NAME_TO_OPTIONS  # type: ignore[import-not-found]
        from executorch.examples.xnnpack.quantization.utils import quantize as quantize_model  # type: ignore

        exported = torch.export.export(model, example, strict=False)
        model = quantize_model(exported.module(), example, MODEL_NAME_TO_OPTIONS[model_name].quantization)
    exported = torch.export.export(model, example, strict=False)
    partitioners = []
    if backend == "xnnpack":
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import (  # type: ignore[import-not-found]
            XnnpackPartitioner,
        )
        partitioners.append(XnnpackPartitioner())
    config = EdgeCompileConfig(_check_ir_validity=False) if quantize else None
    edge = to_edge_transform_and_lower(exported, partitioner=partitioners, compile_config=config)
    delegated = sum(1 for n in edge.exported_program().graph.nodes
                    if n.op == "call_function" and "call_delegate" in str(n.target))
    program = edge.to_executorch()
    with torch.no_grad():
        expected = [model(*inputs) for inputs in cases]
    suite = MethodTestSuite(method_name="forward", test_cases=[
        MethodTestCase(inputs=inputs, expected_outputs=(output,)) for inputs, output in zip(cases, expected,
                                                                                             strict=True)])
    data = serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite]))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    rtol, atol = TOLERANCES[quantize]
    return {"model": model_name, "backend": backend, "quantize": quantize, "delegated_nodes": delegated,
            "magnitude": float(expected[0].abs().mean()), "rtol": rtol, "atol": atol, "bytes": len(data)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--backend", choices=("portable", "xnnpack"), required=True)
    parser.add_argument("--quantize", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    summary = export(args.model, args.backend, args.quantize, args.out)
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
