"""XNNPACK's microkernel tests (the upstream suite of [components.xnnpack.tests], already built by
`nox -s tests-riscv64-xnnpack`) on each of its profiles: ctest -j2 against -j1 in the same run, and the cases
run per minute on each profile against the first one's (what a wider VLEN costs under qemu).

The whole suite as [components.xnnpack.tests] declares it (its programs and their shards), the way a user runs
it; each side is the best of REPEAT alternating runs. Goal: -j2 ≤ 0.6 of -j1 on 2 cores.
"""

from __future__ import annotations

import time

from common import Measure, parallel_ceiling

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.suites import ctest

COMPONENT = "xnnpack"
# A side takes 6-48 s. The earlier three-program subset could not show the goal: one program was 66-73 % of its
# time (qs8-vadd-minmax-test, 2026-12-06), so -j2 could never go below that share.
REPEAT = 2


def run_bench() -> list[Measure]:
    ctx = Context(config_mod.load(), Runner(Log()))
    arch = Arch.RISCV64
    spec = ctx.config.components[COMPONENT].tests
    if spec is None:
        raise ValueError(f"versions.toml declares no tests for {COMPONENT}")
    build = ctx.component_dir(arch, COMPONENT) / ctest.FOLDER / "build"
    if not (build / "CTestTestfile.cmake").is_file():
        raise ValueError(f"{build}: not built; run nox -s tests-riscv64-{COMPONENT} first")
    profiles = [p for p in ctx.config.arches[arch].profiles if p.name in spec.profiles]
    measures, per_minute = [], []
    for profile in profiles:
        seconds: dict[int, float] = {}
        for _ in range(REPEAT):  # -j1 and -j2 alternate, so a drift of the machine meets both
            for jobs in (1, 2):
                start = time.monotonic()
                cases = ctest.run_profile(ctx, arch, COMPONENT, spec, build, profile, jobs=jobs,
                                          results=ctx.build_root / "bench" / "upstream" / profile.name)
                seconds[jobs] = min(seconds.get(jobs, float("inf")), time.monotonic() - start)
                if not cases:
                    raise ValueError(f"{profile.name}: ctest wrote no results")
        per_minute.append((profile.name, len(cases) * 60 / seconds[2]))
        measures.append(Measure(f"{COMPONENT} suite ({len(cases)} cases) on {profile.name}: ctest -j2 vs -j1",
                                seconds[2], seconds[1], "s", "<= 0.6 on 2 cores"))
    measures.append(parallel_ceiling())
    first, base = per_minute[0]
    measures += [Measure(f"{COMPONENT} cases per minute at -j2: {name} vs {first}", rate, base, "/min",
                         "informational: the cost of a wider VLEN under qemu") for name, rate in per_minute]
    return measures
