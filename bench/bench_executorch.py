"""The ExecuTorch lane: the default cases of the riscv64 matrix run in parallel (one per core) against one
after another (goal <= 0.6x on 2 cores), and a cold executor_runner build through crosslane against the same
configure/build/install commands by hand (ccache off for both; ~12 minutes; goal <= 1.0x).

Needs the runners built (nox -s build-riscv64-executorch-xnnpack); the build half runs only with
CROSSLANE_BENCH_COLD=1.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from pathlib import Path

from common import ROOT, Measure, invoke, run, timed

sys.path.insert(0, str(ROOT / "scripts"))

COMPONENT = "executorch-xnnpack"
COLD = {"CCACHE_DISABLE": "1", "CROSSLANE_OFFLINE": "1"}


def matrix_measure() -> Measure | None:
    from crosslane import config
    from crosslane.archs import Arch
    from crosslane.context import Context
    from crosslane.log import Log
    from crosslane.runner import Runner
    from crosslane.smokes import executorch

    cfg = config.load(ROOT / "versions.toml")
    if not (ROOT / "build" / "riscv64" / COMPONENT / "install" / "bin" / "executor_runner").is_file():
        print(f"   ({COMPONENT} not built for riscv64: nox -s build-riscv64-{COMPONENT} first)")
        return None
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profiles = cfg.arches[Arch.RISCV64].profiles
    executorch.run(ctx, Arch.RISCV64, COMPONENT, profiles)  # exports cached, host venv made
    times = {}
    for parallel in (True, False):
        executorch.PARALLEL = parallel
        times[parallel] = timed(lambda: executorch.run(ctx, Arch.RISCV64, COMPONENT, profiles))
    return Measure(f"{COMPONENT} default cases, parallel vs one after another", times[True], times[False], "s",
                   "<= 0.6x on 2 cores")


def build_measure() -> Measure:
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-et-") as tmp:
        ours, hand = Path(tmp) / "ours", Path(tmp) / "hand"
        env = {**COLD, "CROSSLANE_BUILD_DIR": str(ours)}
        cold = timed(lambda: invoke("build", "--arch", "riscv64", "--component", COMPONENT, env=env))
        stamp = json.loads((ours / "riscv64" / COMPONENT / ".crosslane-stamp.json").read_text())
        configure = [a.replace(str(ours), str(hand)) for a in stamp["inputs"]["configure"]]
        hand.mkdir()
        run(["cp", "-a", str(ours / "riscv64"), str(hand / "riscv64")])  # the same source copy and toolchain file
        build_dir = configure[configure.index("-B") + 1]
        run(["rm", "-rf", build_dir])
        commands = [configure, [configure[0], "--build", build_dir, "--parallel"],
                    [configure[0], "--install", build_dir]]
        by_hand = timed(lambda: [run(c, env=COLD) for c in commands])
    return Measure(f"{COMPONENT} cold build: crosslane vs the same commands by hand", cold, by_hand, "s", "<= 1.0x")


def run_bench() -> list[Measure]:
    measures = [m for m in (matrix_measure(),) if m is not None]
    if os.environ.get("CROSSLANE_BENCH_COLD") == "1":
        measures.append(build_measure())
    return measures
