"""A bare-metal case under qemu-system against the same case under qemu-user (the Linux portable runner), per
case, on the scalar CPU profile: what running without an OS costs (or saves) in emulation time."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from common import ROOT, Measure, median_of

ROUNDS = 3
CASES = ("add-portable", "mv2-portable")


def run_bench() -> list[Measure]:
    from crosslane import config
    from crosslane.archs import Arch
    from crosslane.baremetal import run as bm_run
    from crosslane.config.cases import Case
    from crosslane.context import Context
    from crosslane.host import toolroot
    from crosslane.log import Log
    from crosslane.process.runner import Runner
    from crosslane.smokes import executorch, target

    cfg = config.load(ROOT / "versions.toml")
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    bm = cfg.baremetal["rv64-elf"]
    linux_runner = ROOT / "build" / "riscv64" / "executorch-portable" / "install" / "bin" / "executor_runner"
    root = toolroot.find(cfg.toolroots[bm.toolroot])
    mode = toolroot.entry_mode(ctx.runner) or "root"
    novector = next(p for p in cfg.arches[Arch.RISCV64].profiles if p.name == "novector")
    measures = []
    for name in CASES:
        image = ROOT / "build" / bm.name / "scalar" / "images" / name / "executorch_runner"
        if root is None or not image.is_file() or not linux_runner.is_file():
            print(f"   ({name}: build both first: nox -s build-rv64-elf and nox -s build-riscv64-executorch-portable)")
            continue
        model, _, backend = name.partition("-")
        program = executorch.export(ctx, Case(model, backend, False, ()))

        def bare_metal(image: Path = image) -> None:
            with tempfile.TemporaryDirectory(prefix="cl-bm-") as tmp:
                monitor = Path(tmp) / "m.sock"
                argv = toolroot.command(root, bm_run.qemu_command(bm.qemu, bm.profile("novector").cpu, image, monitor),
                                        binds=[image.parent, Path(tmp)], cwd=image.parent, mode=mode)
                ctx.runner.run(argv, timeout=bm.timeout, quiet=True)

        def user_mode(program: executorch.Program = program) -> None:
            target.run(ctx, Arch.RISCV64, novector, [linux_runner, "--model_path", program.path,
                                                     "--bundleio_rtol", str(program.rtol), "--bundleio_atol",
                                                     str(program.atol)], timeout=600)

        measures.append(Measure(f"{name}: qemu-system (bare metal) vs qemu-user (Linux runner), novector",
                                median_of(ROUNDS, bare_metal), median_of(ROUNDS, user_mode), "s",
                                "information: the cost of running without an OS under emulation"))
    return measures
