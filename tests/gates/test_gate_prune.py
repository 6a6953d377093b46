"""Wheel pruning removes only GPU-flavoured ONNX wheels; CPU genai and plain onnxruntime always survive."""

from __future__ import annotations

from pathlib import Path

from crosslane.gates import prune

SURVIVORS = [
    "onnxruntime-1.21.0-cp313-cp313-linux_riscv64.whl",
    "onnxruntime_genai-0.9.0-cp313-cp313-linux_riscv64.whl",
    "onnxruntime_genai-0.18.0-cp313-cp313-manylinux_2_28_aarch64.whl",
    "onnx-1.17.0-cp313-cp313-linux_riscv64.whl",
    "numpy-2.2.0-cp313-cp313-linux_riscv64.whl",
]
DOOMED = [
    "onnxruntime_gpu-1.21.0-cp313-cp313-manylinux_2_28_x86_64.whl",
    "onnxruntime_migraphx-1.21.0-cp313-cp313-linux_x86_64.whl",
    "onnxruntime_genai_cuda-0.9.0-cp313-cp313-linux_x86_64.whl",
    "onnxruntime_genai_rocm-0.9.0-cp313-cp313-linux_x86_64.whl",
    "onnxruntime_genai_directml-0.9.0-cp313-cp313-win_amd64.whl",
]


def test_only_gpu_variants_are_conflicting() -> None:
    assert prune.conflicting(SURVIVORS + DOOMED) == sorted(DOOMED)


def test_prune_deletes_gpu_wheels_and_keeps_cpu_ones(tmp_path: Path) -> None:
    for name in SURVIVORS + DOOMED + ["notes_gpu-1.txt"]:
        (tmp_path / name).write_bytes(b"")
    assert prune.prune(tmp_path, dry_run=True) == [tmp_path / n for n in sorted(DOOMED)]
    assert len(list(tmp_path.iterdir())) == len(SURVIVORS) + len(DOOMED) + 1
    removed = prune.prune(tmp_path)
    assert sorted(p.name for p in removed) == sorted(DOOMED)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*SURVIVORS, "notes_gpu-1.txt"])
