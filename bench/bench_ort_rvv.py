"""ONNX Runtime's RVV kernels measured as work: guest instructions per MatMul of SmolLM2's decode shapes.

Under qemu a vector instruction is emulated element by element, so wall time says nothing of a board; the number of
instructions the CPU is asked to execute does. A TCG plugin (icount/icount.c, loaded by Debian's dynamically linked
qemu-user: the static builds take no plugins) counts them. One program (icount/ort_matmul.c) runs a one-MatMul
model through ORT's C API on one thread, once and three times: half the difference is one MatMul's instructions,
start-up and session creation cancelled.

Side by side in one run, per shape: onnxruntime-src (the RVV build) at VLEN 128/256/512 against the same library on
`novector`, where its run-time dispatch picks the portable kernels (the same source without RVV: no vector
instruction executes, so its count holds at every VLEN), and Debian's 1.23 (the sysroot's rv64gc build). Goal:
RVV at VLEN 256 at most half the portable kernels' instructions.

Per generated token, the same way: the riscv64 onnxruntime-genai wheel (built on onnxruntime-src, which it bundles)
generates the tier-4 model's greedy tokens (SmolLM2 fp32, intra-op threads 1 so no spinning worker adds to the
count) twice, FEW and MANY new tokens, each run checked against the host reference's first tokens; the difference
over the extra tokens is one token's instructions, the model load and the prompt cancelled. RVV at VLEN 128/256/512
against the same wheel on `novector`. Debian's 1.23 has no place here: the wheel is built against 1.27's C API,
which 1.23 does not serve. Tokens per second under qemu are genai's bench (bench_genai.py). Needs
`nox -s build-riscv64` (onnxruntime-src and the genai wheels built, the tier-4 model prepared) first.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from common import ROOT, Measure

from crosslane import config as config_mod
from crosslane.archs import Arch, info
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.guest import guest_root
from crosslane.host import hostsetup
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake_toolchain
from crosslane.report import Verdict
from crosslane.smokes import genai as genai_smoke
from crosslane.smokes import ort_models, payload, sentinel

COMPONENT = "onnxruntime-src"
HERE = Path(__file__).resolve().parent / "icount"
QEMU = "qemu-riscv64"  # Debian's qemu-user: dynamically linked, with TCG plugins
# (rows, columns, outputs) of SmolLM2-135M's per-token MatMuls: q/o projections, gate/up, down; and the prompt's
# 5 tokens through gate/up at once.
SHAPES = ((1, 576, 576), (1, 576, 1536), (1, 1536, 576), (5, 576, 1536))
COUNTED = re.compile(r"icount: insns=(\d+)")
GENAI = "onnxruntime-genai"
FEW, MANY = 2, 6  # new tokens of the two generate() runs whose difference is (MANY - FEW) tokens' work


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


def matmul_program(ctx: Context, folder: Path, name: str, include: Path, lib: Path, library: str) -> Path:
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


def one_thread_model(model: Path, folder: Path) -> Path:
    """The model folder with genai's session options at one intra-op thread: ORT's pool spins its idle workers,
    and their spinning would be counted as work. The weights are linked, not copied."""
    out = folder / f"{model.name}-1thread"
    out.mkdir(parents=True, exist_ok=True)
    for item in model.iterdir():
        if item.name != "genai_config.json" and not (out / item.name).exists():
            (out / item.name).symlink_to(item)
    settings = json.loads((model / "genai_config.json").read_text())
    options = settings["model"]["decoder"].setdefault("session_options", {})
    options["intra_op_num_threads"] = 1
    (out / "genai_config.json").write_text(json.dumps(settings, indent=2))
    return out


def generation_instructions(ctx: Context, so: Path, profile: Profile, installed: genai_smoke.Prepared,
                            generation: dict[str, str], new_tokens: int) -> int:
    """Guest instructions of one genai payload run generating *new_tokens* (checked against the reference's
    first ones: a run that computed other tokens is no measurement)."""
    reference = json.loads(generation["GENAI_EXPECTED_TOKENS"])[:new_tokens]
    env = {**generation, "GENAI_NEW_TOKENS": str(new_tokens), "GENAI_EXPECTED_TOKENS": json.dumps(reference)}
    program = genai_smoke.program_for(Arch.RISCV64, installed, env)
    argv = payload.command(ctx, Arch.RISCV64, profile, program)
    count = so.parent / "count.txt"
    count.unlink(missing_ok=True)
    argv = [QEMU, "-plugin", f"{so},out={count}", *argv[1:]]
    environment = {**os.environ, **payload.environment(program),
                   "PYTHONPYCACHEPREFIX": str(payload.bytecode_folder(ctx, Arch.RISCV64))}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=7200, check=False, env=environment)
    outcome = sentinel.decide(program.name, done.stdout, done.returncode)
    if outcome.verdict is not Verdict.PASS:  # the sentinel, not the exit status, says it ran
        raise ValueError(f"genai {new_tokens} tokens on {profile.name}: {outcome.reason} "
                         f"{(done.stderr or done.stdout).strip()[-300:]}")
    found = COUNTED.search(count.read_text()) if count.is_file() else None
    if found is None:
        raise ValueError(f"{count}: the plugin wrote no count")
    return int(found.group(1))


def per_token(ctx: Context, so: Path, folder: Path) -> list[Measure]:
    arch = Arch.RISCV64
    wheel = genai_smoke.lane_wheel(ctx, arch, GENAI)
    if wheel is None:
        raise ValueError(f"no riscv64 {GENAI} wheel for the sysroot's CPython: run nox -s build-riscv64 first")
    installed = genai_smoke.install_site(ctx, arch, GENAI, wheel)
    if installed.site is None:
        raise ValueError(installed.row.reason)
    spec = ctx.config.components[GENAI].smoke
    generation = genai_smoke.generation_env(ctx, spec.text("model") if spec else None)
    if "GENAI_EXPECTED_TOKENS" not in generation:
        raise ValueError(f"{GENAI}'s smoke names no model: the per-token count needs its tier-4 reference")
    generation["GENAI_MODEL_DIR"] = str(one_thread_model(Path(generation["GENAI_MODEL_DIR"]), folder))

    def token(profile: Profile) -> float:
        counts = [generation_instructions(ctx, so, profile, installed, generation, n)
                  for n in (FEW, MANY)]
        per = (counts[1] - counts[0]) / (MANY - FEW)
        print(f"   ({profile.name}: {counts[0]} instructions for {FEW} new tokens, {counts[1]} for {MANY}: "
              f"{per:.0f} per token)", flush=True)
        return per

    profiles = {p.name: p for p in ctx.config.arches[arch].profiles}
    scalar = token(profiles["novector"])
    return [Measure(f"genai generate() SmolLM2 fp32, instructions per token: RVV ORT at {name} vs the same wheel's "
                    "portable kernels (novector)", token(profiles[name]), scalar, "",
                    "<= 0.5 at rvv256" if name == "rvv256" else "informational")
            for name in ("rvv128", "rvv256", "rvv512")]


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
    built = matmul_program(ctx, folder, "src", install / "include" / "onnxruntime", install / "lib",
                           "libonnxruntime.so.1")
    debian_lib = sysroot / "usr/lib" / multiarch
    debian = matmul_program(ctx, folder, "debian", sysroot / "usr/include/onnxruntime", debian_lib,
                            "libonnxruntime.so")
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
    return measures + per_token(ctx, so, folder)
