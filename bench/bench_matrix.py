"""The ExecuTorch riscv-ci matrix's cost: upstream's way (each of its 17 jobs sets up ExecuTorch and builds the
runner before its runs) against crosslane's (three runners built once, then every case on every profile), in
CPU-minutes (user + system of every process, from getrusage of the children).

Only with CROSSLANE_BENCH_COLD=matrix (the sources staged; ~45 minutes on 2 cores): builds are cold (ccache off).
- upstream, one job measured here: setup (a fresh venv with the pinned torch and executorch wheels from the pip
  cache; upstream's install_executorch builds the package from source, so this is a lower bound), then
  examples/riscv/run.sh --model=add (its export, its preset's GCC cross build of the runner, one qemu run),
  bounded by UPSTREAM_LIMIT (a run killed there is a lower bound, and said so). Extrapolated: 17 × that job.
- crosslane, measured whole: `invoke build` of the three ExecuTorch runners into an empty build folder, then
  `invoke smoke` of every case on every profile (cases "all").
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BIN, ROOT, Measure, cold, opt_in, run_bounded

sys.path.insert(0, str(ROOT / "scripts"))

JOBS = 17  # ExecuTorch's riscv64.yml matrix (versions.toml [cases.riscv-ci])
RUNNERS = ("executorch-portable", "executorch-xnnpack", "executorch-xnnpack-novector")
COLD = {"CCACHE_DISABLE": "1", "CROSSLANE_OFFLINE": "1"}
UPSTREAM_LIMIT = 1200.0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(argv: list[str], env: dict[str, str], cwd: Path, limit: float | None = None) -> tuple[float, bool]:
    """CPU seconds of *argv* and everything it waited for, and whether it finished before *limit*."""
    before = children_cpu()
    finished = run_bounded(argv, env, cwd, limit)
    return children_cpu() - before, finished


def upstream_job(tmp: Path) -> tuple[float, float, bool]:
    """(setup CPU s, build-and-run CPU s, finished) of one upstream job, on the staged ExecuTorch source."""
    from crosslane import config
    from crosslane.files.paths import cache_dir
    from crosslane.sources import pinned

    cfg = config.load(ROOT / "versions.toml")
    source = cfg.components["executorch-portable"].sources[0]
    assert isinstance(source, config.PinnedSource)
    staged = pinned.cached("executorch-portable", source)
    if staged is None:
        raise SystemExit("executorch is not staged: invoke sources --arch riscv64 --component executorch-portable")
    venv = tmp / "venv"
    tmp.mkdir(parents=True)
    setup, _ = cpu_of([sys.executable, "-m", "venv", str(venv)], {}, tmp)
    more, _ = cpu_of([str(venv / "bin/pip"), "install", "-q", *cfg.hostenvs["executorch"]], {}, tmp)
    tree = tmp / "executorch"
    subprocess.run(["cp", "-a", str(staged), str(tree)], check=True)
    cmake = next(cache_dir().glob(f"buildtools/cmake-{cfg.tools.cmake}-*/cmake/data/bin/cmake"))
    # The binaries themselves: bin/cmake of the pinned tools is pip's wrapper, bound to another venv's Python.
    path = f"{venv / 'bin'}:{cmake.parent}:{cmake.parents[3] / 'bin'}:{os.environ['PATH']}"
    run, finished = cpu_of(["bash", str(tree / "examples/riscv/run.sh"), "--model=add",
                            f"--build_dir={tmp}/cmake-out-riscv", f"--output_dir={tmp}/riscv_test"],
                           {"CCACHE_DISABLE": "1", "PATH": path, "QEMU_CPU": "rv64,v=false", **activated(venv)}, tree,
                           UPSTREAM_LIMIT)
    return setup + more, run, finished


def activated(venv: Path) -> dict[str, str]:
    """The job's venv as `source venv/bin/activate` leaves it. Under nox, VIRTUAL_ENV names the bench's own venv,
    and CMake's FindPython takes VIRTUAL_ENV first: run.sh's codegen then ran a Python without torch (measured:
    selected_operators.yaml, Error 1)."""
    return {"VIRTUAL_ENV": str(venv)}


def crosslane_matrix(tmp: Path) -> tuple[float, float]:
    """(CPU s of the three cold runner builds, CPU s of every case on every profile)."""
    env = {**COLD, "CROSSLANE_BUILD_DIR": str(tmp / "build")}
    components = [word for c in RUNNERS for word in ("--component", c)]
    build, _ = cpu_of([str(BIN / "invoke"), "build", "--arch", "riscv64", *components], env, ROOT)
    smoke, _ = cpu_of([str(BIN / "invoke"), "smoke", "--arch", "riscv64", *components, "--case", "all"], env, ROOT)
    return build, smoke


def run_bench() -> list[Measure]:
    if not cold("matrix"):
        print(opt_in("matrix", "matrix cost, upstream's 17 jobs vs crosslane's matrix", 45))
        return []
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-matrix-") as tmp:
        started = time.perf_counter()
        try:
            setup, run, finished = upstream_job(Path(tmp) / "upstream")
        except (RuntimeError, SystemExit) as exc:  # crosslane's side is still measured, then the bench fails
            upstream_failed: BaseException | None = exc
        else:
            upstream_failed = None
        build, smoke = crosslane_matrix(Path(tmp) / "crosslane")
        wall = time.perf_counter() - started
    ours = build + smoke
    print(f"   crosslane: 3 runner builds {build / 60:.1f} + every case on every profile {smoke / 60:.1f} = "
          f"{ours / 60:.1f} CPU-min (measured whole; this bench's wall time {wall / 60:.1f} min)", flush=True)
    if upstream_failed is not None:
        raise RuntimeError(f"upstream's job could not be measured: {upstream_failed}")
    one_job = setup + run
    upstream = JOBS * one_job
    bound = "" if finished else f"; run.sh killed at {UPSTREAM_LIMIT:.0f} s, a lower bound"
    print(f"   upstream, one job: setup {setup / 60:.1f} + export/build/run {run / 60:.1f} CPU-min{bound}; "
          f"extrapolated: {JOBS} jobs x {one_job / 60:.1f} = {upstream / 60:.1f} CPU-min", flush=True)
    return [Measure("riscv-ci matrix: crosslane (3 builds, every case x profile) vs upstream (17 x one job)",
                    ours / 60, upstream / 60, " CPU-min", "reported (issue 24)")]

