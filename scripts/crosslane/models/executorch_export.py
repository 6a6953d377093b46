"""One ExecuTorch case exported on the host to a bundled program (.bpte) with reference outputs.

A program, run by the python of the [hostenvs.executorch-aot] venv (torch, executorch, transformers); crosslane
itself only reads MODELS (the names it can export): torch and executorch are imported inside the functions.

    python executorch_export.py --model add --backend portable|xnnpack [--quantize] --out X.bpte

Models are built from code with fixed seeds and no downloads. The reference outputs are eager PyTorch's, except
for quantized cases: there the host's own run of the lowered int8 program (see export()). Inputs are chosen so
the outputs are of order 1 (a random-weight model whose outputs are ~1e-10 passes any absolute tolerance): the
summary records the mean
|output| of test case 0, which the smoke requires to be at least MIN_MAGNITUDE. The runner compares test case
0 only; the smoke also reads the runner's error statistics for that case and holds them to the tolerance.
stdout carries one JSON line (model, backend, quantize, delegated nodes, output magnitude, tolerances).
"""

from __future__ import annotations

import argparse
import json
import os
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


# torchvision's C++ operator schemas (torchvision/csrc/ops/*.cpp, stable since 0.8). PyPI's torchvision for torch
# 2.13.0 is the CUDA build: with the CPU torch its _C.so cannot load (libc10_cuda.so), so these operators are never
# registered and `import torchvision` fails registering fake kernels for them (operator torchvision::nms does not
# exist). Declared here, the package imports; the classification models used here never call them, and a call
# would fail loudly (no kernel), never silently.
TORCHVISION_OPS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    ("roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio, bool aligned) -> Tensor"),
    ("_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "SymInt batch_size, SymInt channels, SymInt height, SymInt width, int sampling_ratio, bool aligned) -> Tensor"),
    ("ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio) -> (Tensor, Tensor)"),
    ("_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, SymInt batch_size, SymInt channels, "
    "SymInt height, SymInt width) -> Tensor"),
    ("roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
    "-> (Tensor, Tensor)"),
    ("_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor"),
    ("ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
    "-> (Tensor, Tensor)"),
    ("_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) "
    "-> Tensor"),
    ("deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, "
    "SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, "
    "SymInt offset_groups, bool use_mask) -> Tensor"),
    ("_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
    "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, "
    "SymInt groups, SymInt offset_groups, bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"),
)
_declared: list[Any] = []  # the Library object must live as long as the process


def prepare_torchvision(torch: Any) -> None:
    """When torchvision is installed but its C++ extension cannot load, declare its operators (see above) before
    anything imports it: the models, and transformers, which imports torchvision whenever it is installed."""
    import importlib.util

    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations or _declared:
        return
    extension = Path(next(iter(spec.submodule_search_locations))) / "_C.so"
    try:
        torch.ops.load_library(str(extension))
        return
    except OSError:
        pass
    library = torch.library.Library("torchvision", "DEF")
    for schema in TORCHVISION_OPS:
        library.define(schema)
    _declared.append(library)


def calibrated_batchnorm(torch: Any, model: Any, shape: tuple[int, ...]) -> Any:
    """Random weights with BatchNorm's running statistics at their defaults make the activations shrink layer by
    layer (mobilenet_v2's outputs are ~1e-9, its quantized reference exactly 0, so no check could fail): a few
    train-mode passes on random input give every BatchNorm the statistics of what reaches it."""
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.reset_running_stats()
            module.momentum = None  # a cumulative average over the passes
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(*shape))
    return model.eval()


def build_mv2(torch: Any) -> tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]:
    import torchvision  # type: ignore[import-not-found]

    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(weights=None)
    head = model.classifier[-1]
    torch.nn.init.normal_(head.weight, std=head.in_features ** -0.5)  # N(0, 1/fan_in): outputs of order 1
    torch.nn.init.zeros_(head.bias)
    model = calibrated_batchnorm(torch, model, (2, 3, 224, 224))
    example = (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)),)
    return model, example, [example]


def build_resnet18(torch: Any) -> tuple[Any, tuple[Any, ...], list[tuple[Any, ...]]]:
    import torchvision

    torch.manual_seed(0)  # before building: upstream seeds after, so its weights differ run to run
    model = torchvision.models.resnet18(weights=None).eval()
    example = (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)),)
    return model, example, [example]


MODELS = {"add": build_add, "llama2": build_llama2, "mobilebert": build_mobilebert, "mv2": build_mv2,
          "resnet18": build_resnet18}


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

    prepare_torchvision(torch)
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
        eager = [model(*inputs) for inputs in cases]
    expected = eager
    if quantize:
        # The reference of a quantized case is the host's own run of the same lowered program: the PT2E eager
        # simulation differs from any int8 kernel by rounding compounded layer by layer, which on random weights
        # is more than the tolerance (docs/lanes.md gives the figure), so an eager
        # reference would fail every CPU and prove nothing. The host's int8 result is what the target must match.
        from executorch.runtime import Runtime  # type: ignore[import-not-found]

        method = Runtime.get().load_program(program.buffer).load_method("forward")
        expected = [method.execute(list(inputs))[0] for inputs in cases]
    suite = MethodTestSuite(method_name="forward", test_cases=[
        MethodTestCase(inputs=inputs, expected_outputs=(output,)) for inputs, output in zip(cases, expected,
                                                                                             strict=True)])
    data = serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite]))
    out.parent.mkdir(parents=True, exist_ok=True)
    _replace(out, data)
    rtol, atol = TOLERANCES[quantize]
    return {"model": model_name, "backend": backend, "quantize": quantize, "delegated_nodes": delegated,
            "magnitude": float(expected[0].abs().mean()), "rtol": rtol, "atol": atol, "bytes": len(data),
            "reference": "host run of the lowered program" if quantize else "eager",
            "eager_max_abs": float((expected[0] - eager[0]).abs().max()),
            # How far the reference is from eager as a direction (rounding keeps it near 1; a wrong quantized
            # program, the same on every CPU, does not): the smoke holds it to MIN_AGREEMENT.
            "eager_agreement": float(torch.nn.functional.cosine_similarity(
                expected[0].flatten().double(), eager[0].flatten().double(), dim=0))}


def _replace(path: Path, data: bytes) -> None:
    """Written whole or not at all: a killed export leaves no half file under the final name."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--backend", choices=("portable", "xnnpack"), required=True)
    parser.add_argument("--quantize", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    summary = export(args.model, args.backend, args.quantize, args.out)
    # The summary last: its presence is what marks the case exported (smokes/executorch.py).
    _replace(args.out.with_suffix(".json"), (json.dumps(summary, indent=1) + "\n").encode())
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
