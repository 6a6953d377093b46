"""The four riscv64 CPU profiles of the ORT smoke run in parallel vs one after another, in the same run.

Goal: ratio <= 0.6 on 2 cores. A plain host CPU burn is measured the same way, to show the machine's load.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from common import Measure

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.smokes import ort_models, payload


def program(ctx: Context, arch: Arch, smoke: str) -> payload.Payload:
    if smoke == "ort":
        models = ort_models.write(ctx.build_root / "models" / "ort")
        return payload.Payload.builtin("ort_payload", "ORT", env={"ORT_MODELS_DIR": str(models)})
    install = ctx.component_dir(arch, "canary") / "install" / "python"
    return payload.Payload.builtin("canary_payload", "CANARY", pythonpath=(install,))


def measure(ctx: Context, arch: Arch, smoke: str, parallel: bool) -> tuple[float, list[payload.Attempt]]:
    start = time.monotonic()
    attempts = payload.run_profiles(ctx, arch, ctx.config.arches[arch].profiles, program(ctx, arch, smoke),
                                    base_timeout=120, parallel=parallel)
    return time.monotonic() - start, attempts


def calibration(ctx: Context, jobs: int = 4) -> tuple[float, float]:
    """(parallel, serial) seconds of a plain host CPU burn: how much parallelism the machine gives now."""
    burn = [sys.executable, "-c", "sum(i * i for i in range(4_000_000))"]
    start = time.monotonic()
    for _ in range(jobs):
        ctx.runner.run(burn, quiet=True)
    serial = time.monotonic() - start
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(lambda _: ctx.runner.run(burn, quiet=True), range(jobs)))
    return time.monotonic() - start, serial


def run_bench(smoke: str = "ort", arch_name: str = Arch.RISCV64.value) -> list[Measure]:
    """Serial and parallel runs of the arch's CPU profiles, and a host CPU burn measured the same way."""
    ctx = Context(config_mod.load(), Runner(Log()))
    arch = Arch(arch_name)
    serial, serial_attempts = measure(ctx, arch, smoke, parallel=False)
    parallel, parallel_attempts = measure(ctx, arch, smoke, parallel=True)
    burn_parallel, burn_serial = calibration(ctx)
    for attempt in serial_attempts + parallel_attempts:
        if attempt.outcome.verdict is not Verdict.PASS:
            ctx.log.warn(f"{attempt.profile.name}: {attempt.reason} (timings still printed)")
    names = ", ".join(p.name for p in ctx.config.arches[arch].profiles)
    return [Measure(f"{smoke} smoke on {arch} ({names}), parallel vs serial", parallel, serial, "s", "ratio <= 0.6"),
            Measure(f"plain CPU burn x4 on this machine now ({os.cpu_count()} cores), parallel vs serial",
                    burn_parallel, burn_serial, "s", "1/cores when the machine is idle")]

