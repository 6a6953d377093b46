"""Small real ONNX graphs made on the host with the `onnx` package, handed to the ORT payload as files.

Two graphs with fixed inputs and weights: "add" (A + B, exact on every arch) and "mlp" (MatMul, Add,
Relu, MatMul, Add with non-dyadic weights, so the kernels' summation order shows within a tolerance).
IR version 8 and opset 17 are accepted by every ONNX Runtime from 1.13 on, Debian trixie's 1.21 included.
A manifest.json beside the models lists each graph's file and inputs (shape and values).
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

from crosslane.errors import MissingPrerequisite
from crosslane.files import atomic

IR_VERSION = 8
OPSET = 17
MANIFEST = "manifest.json"


def values(count: int, seed: float, scale: float = 0.5) -> list[float]:
    """Deterministic, irregular float32-representable values."""
    raw = [scale * math.sin(seed * (index + 1) + 0.25 * index * index) for index in range(count)]
    return [struct.unpack("f", struct.pack("f", v))[0] for v in raw]


def _onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise MissingPrerequisite("the onnx package (PyPI) is not installed; it makes the ORT smoke's models",
                                  fix="pip install -e '.[dev]' (or pip install onnx)") from None
    return onnx


def add_graph() -> tuple[Any, dict[str, dict[str, object]]]:
    onnx = _onnx()
    helper, f32 = onnx.helper, onnx.TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["sum"])], "add",
        [helper.make_tensor_value_info("a", f32, [2, 3]), helper.make_tensor_value_info("b", f32, [2, 3])],
        [helper.make_tensor_value_info("sum", f32, [2, 3])])
    inputs = {"a": {"shape": [2, 3], "data": [0.5, -1.25, 3.0, 1e-3, 7.75, -0.0625]},
              "b": {"shape": [2, 3], "data": [0.25, 1.25, -2.5, 2e-3, 0.125, 1024.0]}}
    return _model(graph), inputs


def mlp_graph(batch: int = 4, features: int = 16, hidden: int = 32,
              out: int = 8) -> tuple[Any, dict[str, dict[str, object]]]:
    onnx = _onnx()
    helper, f32 = onnx.helper, onnx.TensorProto.FLOAT
    weights = [
        helper.make_tensor("w1", f32, [features, hidden], values(features * hidden, 0.37)),
        helper.make_tensor("b1", f32, [hidden], values(hidden, 1.13, 0.1)),
        helper.make_tensor("w2", f32, [hidden, out], values(hidden * out, 0.71)),
        helper.make_tensor("b2", f32, [out], values(out, 2.3, 0.1)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w2"], ["y0"]),
        helper.make_node("Add", ["y0", "b2"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", f32, [batch, features])],
                              [helper.make_tensor_value_info("y", f32, [batch, out])], initializer=weights)
    return _model(graph), {"x": {"shape": [batch, features], "data": values(batch * features, 0.53, 2.0)}}


def _model(graph: Any) -> Any:
    onnx = _onnx()
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)],
                                   producer_name="crosslane")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def write(folder: Path) -> Path:
    """Write the models and their manifest into *folder* (replaced atomically); return the folder."""
    onnx = _onnx()
    with atomic.replace_dir(folder) as work:
        graphs = []
        for name, (model, inputs) in {"add": add_graph(), "mlp": mlp_graph()}.items():
            onnx.save(model, str(work / f"{name}.onnx"))
            graphs.append({"name": name, "file": f"{name}.onnx", "inputs": inputs})
        manifest = {"ir_version": IR_VERSION, "opset": OPSET, "graphs": graphs}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return folder
