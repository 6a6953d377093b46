"""Remove conflicting ONNX wheels: only GPU-flavoured variants; CPU onnxruntime-genai and plain onnxruntime stay."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

# Wheel file names use underscores for dashes in the distribution name (onnxruntime_gpu-1.21.0-…).
GPU_PATTERNS = ("*_gpu-*", "*_migraphx-*", "*genai_cuda-*", "*genai_rocm-*", "*genai_directml-*")


def is_gpu_variant(filename: str) -> bool:
    return filename.endswith(".whl") and any(fnmatch.fnmatchcase(filename, p) for p in GPU_PATTERNS)


def conflicting(names: Iterable[str]) -> list[str]:
    return sorted(n for n in names if is_gpu_variant(n))


def prune(folder: Path, *, dry_run: bool = False) -> list[Path]:
    """Delete the GPU-flavoured ONNX wheels in *folder*; return what was (or would be) removed."""
    doomed = [folder / n for n in conflicting(p.name for p in folder.glob("*.whl"))]
    if not dry_run:
        for path in doomed:
            path.unlink()
    return doomed
