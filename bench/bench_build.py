"""No-op rebuild vs cold build; crosslane's cold build vs the same cmake commands typed by hand."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from common import Measure, invoke, median_of, run, timed

ROUNDS = 3


def hand_commands(built: Path, fresh: Path) -> list[list[str]]:
    """The configure/build/install commands crosslane ran, pointed at another build folder."""
    stamp = json.loads((built / "riscv64/canary/.crosslane-stamp.json").read_text())
    configure = [arg.replace(str(built), str(fresh)) for arg in stamp["inputs"]["configure"]]
    cmake = configure[0]
    build_dir = configure[configure.index("-B") + 1]
    return [configure, [cmake, "--build", build_dir, "--parallel"], [cmake, "--install", build_dir]]


def run_bench() -> list[Measure]:
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-") as tmp:
        base = Path(tmp)
        cold_times, hand_times = [], []
        for index in range(ROUNDS):
            ours = base / f"ours{index}"
            hand = base / f"hand{index}"
            env = {"CROSSLANE_BUILD_DIR": str(ours)}
            cold_times.append(timed(lambda env=env: invoke("build", "--arch", "riscv64", "--component", "canary",
                                                           env=env)))
            (hand / "riscv64/toolchains").mkdir(parents=True)
            shutil.copy(ours / "riscv64/toolchains/clang.cmake", hand / "riscv64/toolchains/clang.cmake")
            commands = hand_commands(ours, hand)
            hand_times.append(timed(lambda commands=commands: [run(c) for c in commands]))
        env = {"CROSSLANE_BUILD_DIR": str(base / "ours0")}
        noop = median_of(5, lambda: invoke("build", "--arch", "riscv64", "--component", "canary", env=env))
    cold = sorted(cold_times)[len(cold_times) // 2]
    hand = sorted(hand_times)[len(hand_times) // 2]
    return [
        Measure("no-op rebuild (invoke build --arch riscv64) vs cold build", noop, cold, "s", "<= 1 s and <= 2 %"),
        Measure("canary cold build: crosslane vs the same cmake/ninja commands by hand", cold, hand, "s", "<= 1.10x"),
    ]
