"""ONNX Runtime's RVV kernels measured as work: guest instructions per MatMul of SmolLM2's decode shapes.

Under qemu a vector instruction is emulated element by element, so wall time says nothing of a board; the number of
instructions the CPU is asked to execute does. A TCG plugin (icount/icount.c, loaded by Debian's dynamically linked
qemu-user: the static builds take no plugins) counts them. One program (icount/ort_matmul.c) runs a one-MatMul
model through ORT's C API on one thread, once and three times: half the difference is one MatMul's instructions,
start-up and session creation cancelled.

Side by side in one run, per shape: onnxruntime-src (the RVV build) at VLEN 128/256/512 against the same library on
`novector`, where its run-time dispatch picks the portable kernels (the same source without RVV: no vector
instruction executes, so its count holds at every VLEN), and Debian's 1.23 (the sysroot's rv64gc build). Goal:
RVV at VLEN 256 at most half the portable kernels' instructions. Tokens per second under qemu are genai's bench.
Needs `nox -s build-riscv64` (onnxruntime-src built) first.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from common import ROOT, Measure

from crosslane import config as config_mod
from crosslane.archs import Arch, info
from crosslane.context import Context
from crosslane.guest import guest_root
from crosslane.host import hostsetup
from crosslane.log import Log
from crosslane.recipes import cmake_toolchain
from crosslane.runner import Runner
from crosslane.smokes import ort_models

COMPONENT = "onnxruntime-src"
HERE = Path(__file__).resolve().parent / "icount"
QEMU = "qemu-riscv64"  # Debian's qemu-user: dynamically linked, with TCG plugins
# (rows, columns, outputs) of SmolLM2-135M's per-token MatMuls: q/o projections, gate/up, down; and the prompt's
# 5 tokens through gate/up at once.
SHAPES = ((1, 576, 576), (1, 576, 1536), (1, 1536, 576), (5, 576, 1536))
COUNTED = re.compile(r"icount: insns=(\d+)")


def matmul_model(rows: int, columns: int, outputs: int, path: Path) -> Path:
    onnx = ort_models._onnx()
    helper, f32 = onnx.helper, onnx.TensorProto.FLOAT
    weight = helper.make_tensor("w", f32, [columns, outputs], ort_models.values(columns * outputs, 0.37))
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "matmul",
                              [helper.make_tensor_value_info("x", f32, [rows, columns])],
                              [helper.make_tensor_value_info("y", f32, [rows, outputs])], initializer=[weight])
    onnx.save(ort_models._model(graph), str(path))
    return path


def plugin(folder: Path) -> Path:
    out = folder / "libicount.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(out), str(HERE / "icount.c")], check=True,
                   capture_output=True, timeout=120)
    return out


def payload(ctx: Context, folder: Path, name: str, include: Path, lib: Path, library: str) -> Path:
    """ort_matmul for riscv64 against one ONNX Runtime (its headers, its library), with the sysroot's C library."""
    sysroot = ctx.sysroot(Arch.RISCV64).path
    target = info(Arch.RISCV64)
    gcc_dir = cmake_toolchain.gcc_install_dir(sysroot, target.multiarch)
    out = folder / f"ort_matmul-{name}"
    argv = ["clang-19", f"--target={target.triplet}", f"--sysroot={sysroot}", "-O2", "-march=rv64gc",
            "-fuse-ld=lld", f"-I{include}", str(HERE / "ort_matmul.c"), "-o", str(out), f"-L{lib}",
            f"-l:{library}", f"-Wl,-rpath-link,{lib}", f"-Wl,-rpath-link,{sysroot}/usr/lib/{target.multiarch}"]
    if gcc_dir is not None:
        argv.insert(1, f"--gcc-install-dir={gcc_dir}")
    subprocess.run(argv, check=True, capture_output=True, timeout=300)
    return out


def instructions(ctx: Context, so: Path, cpu: str, program: Path, lib: Path, model: Path, rows: int,
                 columns: int, runs: int) -> int:
    root = guest_root.ensure(ctx.build_root, ctx.sysroot(Arch.RISCV64))
    count = program.parent / "count.txt"
    done = subprocess.run([QEMU, "-L", str(root), "-cpu", cpu, "-plugin", f"{so},out={count}",
                           "-E", f"LD_LIBRARY_PATH={lib}", str(program), str(model), str(rows), str(columns),
                           str(runs)], capture_output=True, text=True, timeout=3600, check=False)
    if "ort_matmul: OK" not in done.stdout:  # the sentinel, not the exit status, says it ran
        raise ValueError(f"{program.name} on {cpu}: no 'ort_matmul: OK' (exit {done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()[-300:]}")
    found = COUNTED.search(count.read_text())
    if found is None:
        raise ValueError(f"{count}: the plugin wrote no count")
    return int(found.group(1))


def per_matmul(ctx: Context, so: Path, cpu: str, program: Path, lib: Path, model: Path, rows: int,
               columns: int) -> float:
    once = instructions(ctx, so, cpu, program, lib, model, rows, columns, 1)
    thrice = instructions(ctx, so, cpu, program, lib, model, rows, columns, 3)
    return (thrice - once) / 2


def run_bench() -> list[Measure]:
    ctx = Context(config_mod.load(ROOT / "versions.toml"), Runner(Log()))
    arch = Arch.RISCV64
    hostsetup.install(ctx.runner, ["qemu-user", "gcc"])
    if shutil.which(QEMU) is None:
        raise ValueError(f"{QEMU} (Debian's qemu-user) is not on PATH")
    install = ctx.component_dir(arch, COMPONENT) / "install"
    if not (install / "lib" / "libonnxruntime.so.1").exists():
        raise ValueError(f"{install}: {COMPONENT} is not built; run nox -s build-riscv64 first")
    folder = ctx.build_root / "bench" / "ort-rvv"
    folder.mkdir(parents=True, exist_ok=True)
    so = plugin(folder)
    sysroot = ctx.sysroot(arch).path
    multiarch = info(arch).multiarch
    built = payload(ctx, folder, "src", install / "include" / "onnxruntime", install / "lib", "libonnxruntime.so.1")
    debian_lib = sysroot / "usr/lib" / multiarch
    debian = payload(ctx, folder, "debian", sysroot / "usr/include/onnxruntime", debian_lib, "libonnxruntime.so")
    profiles = {p.name: p.cpu for p in ctx.config.arches[arch].profiles}
    measures = []
    for rows, columns, outputs in SHAPES:
        model = matmul_model(rows, columns, outputs, folder / f"matmul-{rows}x{columns}x{outputs}.onnx")
        shape = f"MatMul {rows}x{columns} by {columns}x{outputs}"
        scalar = per_matmul(ctx, so, profiles["novector"], built, install / "lib", model, rows, columns)
        for name in ("rvv128", "rvv256", "rvv512"):
            vector = per_matmul(ctx, so, profiles[name], built, install / "lib", model, rows, columns)
            measures.append(Measure(f"{shape}, instructions: RVV kernels at {name} vs the same library's portable "
                                    "kernels (novector)", vector, scalar, "",
                                    "<= 0.5 at rvv256" if name == "rvv256" else "informational"))
        old = per_matmul(ctx, so, profiles["novector"], debian, debian_lib, model, rows, columns)
        measures.append(Measure(f"{shape}, instructions: Debian's ONNX Runtime 1.23 (rv64gc) vs onnxruntime-src's "
                                "portable kernels", old, scalar, "", "informational: the scalar baselines agree"))
    return measures
