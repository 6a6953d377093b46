"""Runs small real ONNX graphs on ONNX Runtime's CPU provider with the target's own CPython.

stdlib only at import time (numpy and onnxruntime are imported through bindkit, which tells absent from
broken). The models folder comes from ORT_MODELS_DIR or the first argument; its manifest.json lists each
graph's file and inputs. Ends with one line: ORT-BIND OK|FAIL|SKIP: ..., OK carrying the outputs as JSON
({"onnxruntime": version, "outputs": {graph: nested lists}}) for the cross-arch comparison.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

try:
    from crosslane.smokes.payloads import bindkit
except ImportError:  # run as a program on the target: the driver puts the helpers folder on sys.path
    import bindkit  # type: ignore[no-redef,import-not-found]

NAME = "ORT"
PROVIDER = "CPUExecutionProvider"


def run_graph(ort: Any, np: Any, folder: Path, graph: dict[str, Any]) -> tuple[list[Any] | None, str]:
    """The first output of one graph as nested lists, or None and what went wrong."""
    try:
        session = ort.InferenceSession(str(folder / graph["file"]), providers=[PROVIDER])
        providers = session.get_providers()
        if providers[:1] != [PROVIDER]:
            return None, f"session runs on {providers}, not {PROVIDER}"
        feeds = {name: np.array(spec["data"], dtype=np.float32).reshape(spec["shape"])
                 for name, spec in graph["inputs"].items()}
        result = session.run(None, feeds)
    # ORT raises its own exception types from native code (Fail, InvalidGraph, …): each is this graph's FAIL.
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
    first = result[0]
    if first.dtype != np.float32:
        return None, f"output dtype {first.dtype}, expected float32"
    return first.tolist(), f"shape {list(first.shape)}"


def main(argv: list[str]) -> int:
    np = bindkit.require(NAME, "numpy", "numpy")
    if isinstance(np, int):
        return np
    ort = bindkit.require(NAME, "onnxruntime", "onnxruntime")
    if isinstance(ort, int):
        return ort
    where = os.environ.get("ORT_MODELS_DIR") or (argv[1] if len(argv) > 1 else "")
    if not where:
        print("DEFECT no models folder given (ORT_MODELS_DIR or the first argument)")
        return bindkit.finish(NAME, "FAIL", "no models folder given")
    folder = Path(where)
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"DEFECT cannot read {folder / 'manifest.json'}: {exc}")
        return bindkit.finish(NAME, "FAIL", f"models manifest unreadable: {exc}")
    print(f"PROVEN onnxruntime {ort.__version__} providers {ort.get_available_providers()}")
    outputs: dict[str, Any] = {}
    failures = []
    for graph in manifest["graphs"]:
        value, note = run_graph(ort, np, folder, graph)
        if value is None:
            print(f"DEFECT graph {graph['name']}: {note}")
            failures.append(f"{graph['name']}: {note}")
            continue
        print(f"PROVEN graph {graph['name']} ran on {PROVIDER}: {note}")
        outputs[graph["name"]] = value
    if failures:
        return bindkit.finish(NAME, "FAIL", "; ".join(failures))
    detail = {"onnxruntime": ort.__version__, "outputs": outputs}
    return bindkit.finish(NAME, "OK", json.dumps(detail, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
