"""The ExecuTorch lane: the default cases of the riscv64 matrix run in parallel (one per core) against one
after another, with each run single-threaded (goal <= 0.6x on 2 cores: the matrix's own parallelism) and as the
smoke runs them (each run's threadpool already on every core: reported); and a cold portable executor_runner
build through crosslane against ExecuTorch's own driver, `examples/riscv/run.sh --model=add --build_only` (its AOT
export, then its preset's GCC cross build of the runner), both with ccache off (~15 minutes; goal <= 1.0x).

Needs the runners built (nox -s build-riscv64-executorch-xnnpack); the build half runs only with
CROSSLANE_BENCH_COLD=executorch. run.sh runs in a copy of the staged source (it writes into its tree, as users run it
in their checkout); making the copy is not timed, while crosslane's own source copy is part of its time.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from pathlib import Path

from bench_matrix import activated
from common import ROOT, Measure, cold, invoke, parallel_ceiling, run, run_bounded, timed

sys.path.insert(0, str(ROOT / "scripts"))

COMPONENT = "executorch-xnnpack"
COLD = {"CCACHE_DISABLE": "1", "CROSSLANE_OFFLINE": "1"}


def matrix_measure() -> list[Measure]:
    from crosslane import config
    from crosslane.archs import Arch
    from crosslane.context import Context
    from crosslane.log import Log
    from crosslane.process.runner import Runner
    from crosslane.smokes import executorch

    cfg = config.load(ROOT / "versions.toml")
    if not (ROOT / "build" / "riscv64" / COMPONENT / "install" / "bin" / "executor_runner").is_file():
        print(f"   ({COMPONENT} not built for riscv64: nox -s build-riscv64-{COMPONENT} first)")
        return []
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profiles = cfg.arches[Arch.RISCV64].profiles
    executorch.smoke(ctx, Arch.RISCV64, COMPONENT, profiles)  # exports cached, host venv made
    times: dict[tuple[int | None, bool], float] = {}
    for threads in (None, 1):
        executorch.THREADS = threads
        for parallel in (True, False):
            executorch.PARALLEL = parallel
            times[(threads, parallel)] = timed(lambda: executorch.smoke(ctx, Arch.RISCV64, COMPONENT, profiles))
    executorch.THREADS, executorch.PARALLEL = None, True
    cores = os.cpu_count() or 1
    return [Measure(f"{COMPONENT} default cases, each run single-threaded (--cpu_threads 1), parallel vs one after "
                    f"another", times[(1, True)], times[(1, False)], "s", f"<= 0.6x on {cores} cores"),
            Measure(f"{COMPONENT} default cases with each run's threadpool on every core (the smoke's way), parallel "
                    "vs one after another", times[(None, True)], times[(None, False)], "s",
                    "(report: ~1.0x, each run already uses the cores)"),
            Measure(f"{COMPONENT} default cases the smoke's way vs single-threaded runs in parallel",
                    times[(None, True)], times[(1, True)], "s", "<= 1.0x (and the threadpool is kept)")]


# run.sh's Unix Makefiles generator writes a 70 MB build.make for portable_ops_lib, and GNU make 4.3 spent over
# 20 minutes at 100 % of one core in that target's `depend` step here (measured): the upstream side is bounded,
# and a run that hits the bound reports it (the ratio is then an upper bound).
UPSTREAM_LIMIT = 900.0


def timed_bounded(argv: list[str], env: dict[str, str], cwd: Path, limit: float) -> tuple[float, bool]:
    """Seconds taken and whether it finished before *limit*."""
    start = time.perf_counter()
    finished = run_bounded(argv, env, cwd, limit)
    return time.perf_counter() - start, finished


def build_measure() -> Measure:
    from crosslane import config
    from crosslane.files.paths import cache_dir
    from crosslane.log import Log
    from crosslane.models import hostenv
    from crosslane.process.runner import Runner
    from crosslane.sources import pinned

    cfg = config.load(ROOT / "versions.toml")
    component = "executorch-portable"
    source = cfg.components[component].sources[0]
    assert isinstance(source, config.PinnedSource)
    staged = pinned.cached(component, source)
    if staged is None:
        raise SystemExit(f"{component} is not staged: invoke sources --arch riscv64 --component {component}")
    python = hostenv.ensure(Runner(Log(io.StringIO())), cfg.hostenvs["executorch"], cache_dir() / "hostenvs",
                            offline=False)
    cmake = next(cache_dir().glob(f"buildtools/cmake-{cfg.tools.cmake}-*/cmake/data/bin/cmake"))
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-et-") as tmp:
        ours, theirs = Path(tmp) / "ours", Path(tmp) / "executorch"
        env = {**COLD, "CROSSLANE_BUILD_DIR": str(ours)}
        cold = timed(lambda: invoke("build", "--arch", "riscv64", "--component", component, env=env))
        run(["cp", "-a", str(staged), str(theirs)])
        # The binaries themselves: bin/cmake of the pinned tools is pip's wrapper, bound to another venv's Python.
        path = f"{python.parent}:{cmake.parent}:{cmake.parents[3] / 'bin'}:{os.environ['PATH']}"
        upstream, finished = timed_bounded(
            ["bash", str(theirs / "examples/riscv/run.sh"), "--model=add", "--build_only",
             f"--build_dir={tmp}/cmake-out-riscv", f"--output_dir={tmp}/riscv_test"],
            {"CCACHE_DISABLE": "1", "PATH": path, **activated(python.parent.parent)}, theirs, UPSTREAM_LIMIT)
    what = "" if finished else f" (run.sh killed unfinished at {UPSTREAM_LIMIT:.0f} s: the ratio is an upper bound)"
    return Measure(f"{component} cold build (add): crosslane vs ExecuTorch's run.sh --build_only{what}", cold,
                   upstream, "s", "<= 1.0x")


def run_bench() -> list[Measure]:
    measures = [*matrix_measure(), parallel_ceiling()]
    if cold("executorch"):
        measures.append(build_measure())
    return measures
