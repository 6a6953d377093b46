"""No-op rebuild vs cold build; crosslane's cold canary build vs the same cmake commands typed by hand.

ccache is disabled for every build here, so "cold" means compiled, not served from the cache. The cold build of
every default riscv64 lane takes over 25 minutes on 2 cores: only with CROSSLANE_BENCH_COLD=lanes (the default run
measures the no-op on the canary's cold build, so the suite finishes within 15 minutes).
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
from pathlib import Path

from common import Measure, cold, invoke, median_of, run_all, timed

ROUNDS = 3
COLD = {"CCACHE_DISABLE": "1"}


def hand_commands(built: Path, fresh: Path) -> list[list[str]]:
    """The configure/build/install commands crosslane ran, pointed at another build folder."""
    stamp = json.loads((built / "riscv64/canary/.crosslane-stamp.json").read_text())
    configure = [arg.replace(str(built), str(fresh)) for arg in stamp["inputs"]["configure"]]
    cmake = configure[0]
    build_dir = configure[configure.index("-B") + 1]
    return [configure, [cmake, "--build", build_dir, "--parallel"], [cmake, "--install", build_dir]]


def canary_rounds(base: Path) -> tuple[float, float]:
    ours_times, hand_times = [], []
    for index in range(ROUNDS):
        ours, hand = base / f"ours{index}", base / f"hand{index}"
        env = {**COLD, "CROSSLANE_BUILD_DIR": str(ours)}
        ours_times.append(timed(functools.partial(invoke, "build", "--arch", "riscv64", "--component", "canary",
                                                  env=env)))
        (hand / "riscv64/toolchains").mkdir(parents=True)
        shutil.copy(ours / "riscv64/toolchains/clang.cmake", hand / "riscv64/toolchains/clang.cmake")
        commands = hand_commands(ours, hand)
        hand_times.append(timed(functools.partial(run_all, commands, COLD)))
    return sorted(ours_times)[ROUNDS // 2], sorted(hand_times)[ROUNDS // 2]


def run_bench() -> list[Measure]:
    lanes = cold("lanes")
    what = ["build", "--arch", "riscv64"] + ([] if lanes else ["--component", "canary"])
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-") as tmp:
        base = Path(tmp)
        env = {**COLD, "CROSSLANE_BUILD_DIR": str(base / "default")}
        cold_build = timed(lambda: invoke(*what, env=env))
        noop = median_of(5, lambda: invoke(*what, env=env))
        ours, hand = canary_rounds(base)
    subject = "default components" if lanes else "canary; CROSSLANE_BENCH_COLD=lanes: every default lane"
    return [
        Measure(f"no-op `invoke {' '.join(what)}` ({subject}) vs its cold build", noop, cold_build, "s",
                "<= 1 s and <= 2 %" if lanes else "<= 1 s"),
        Measure("canary cold build: crosslane vs the same cmake/ninja commands by hand", ours, hand, "s", "<= 1.10x"),
    ]
