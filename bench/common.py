"""Shared by the benchmarks: timing helpers and the result line every bench prints."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# The lane-sized measurements, each opt-in (CROSSLANE_BENCH_COLD=1 for all of them, or a comma list of these names).
COLD_PARTS = ("lanes", "guidance", "by-hand", "profiles", "matrix", "executorch", "repro")


def cold(part: str) -> bool:
    """Whether the lane-sized measurement `part` runs in this bench run (CROSSLANE_BENCH_COLD)."""
    assert part in COLD_PARTS, part
    wanted = {w.strip() for w in os.environ.get("CROSSLANE_BENCH_COLD", "").split(",")}
    return "1" in wanted or "all" in wanted or part in wanted


def opt_in(part: str, what: str, minutes: int) -> str:
    return f"   ({what}: set CROSSLANE_BENCH_COLD={part} (or 1 for every lane-sized part), ~{minutes} minutes)"


@dataclass(frozen=True)
class Measure:
    name: str
    subject: float
    baseline: float
    unit: str
    goal: str

    @property
    def ratio(self) -> float:
        return self.subject / self.baseline if self.baseline else float("inf")

    def line(self) -> str:
        return (f"{self.name}: {self.subject:.3f}{self.unit} vs {self.baseline:.3f}{self.unit} "
                f"ratio {self.ratio:.3f}  (goal: {self.goal})")


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


@dataclass(frozen=True)
class Cost:
    """What one measured action took: wall seconds, and the CPU seconds of the processes it ran (user + system,
    reaped children and theirs)."""
    wall: float
    cpu: float

    def line(self) -> str:
        return f"{self.wall:.1f}s wall, {self.cpu:.1f}s CPU"


def stolen_seconds(stat: Path = Path("/proc/stat")) -> float:
    """The machine's steal time so far, all CPUs (0 where the kernel does not count it)."""
    try:
        fields = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return 0.0
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if fields[0] == "cpu" and len(fields) > 8 else 0.0


def best_of(runs: int, action: Callable[[], object]) -> float:
    return min(timed(action) for _ in range(runs))


def median_of(runs: int, action: Callable[[], object]) -> float:
    return statistics.median(timed(action) for _ in range(runs))


def run(argv: Sequence[str | Path], env: dict[str, str] | None = None, cwd: Path = ROOT) -> None:
    subprocess.run([str(a) for a in argv], check=True, cwd=cwd, env={**os.environ, **(env or {})},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_bounded(argv: Sequence[str], env: dict[str, str], cwd: Path, limit: float | None) -> bool:
    """Run *argv* in its own process group; False when *limit* (wall seconds) killed the whole group first (make's
    children too). A non-zero exit is an error naming the command and its last lines of output."""
    with tempfile.TemporaryFile() as output, subprocess.Popen(
            list(argv), cwd=cwd, env={**os.environ, **env}, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True) as process:
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return False
        if code != 0:
            output.seek(max(output.seek(0, os.SEEK_END) - 4096, 0))
            tail = output.read().decode(errors="replace").strip().splitlines()[-4:]
            raise RuntimeError(f"{' '.join(argv[:4])} exited {code}: {' | '.join(tail)}")
    return True


def run_all(commands: Sequence[Sequence[str | Path]], env: dict[str, str] | None = None) -> None:
    for argv in commands:
        run(argv, env=env)


def invoke(*args: str, env: dict[str, str] | None = None) -> None:
    run([BIN / "invoke", *args], env=env)


# A CPU-bound program with no I/O and no memory traffic to speak of: what two cores can do side by side at best.
SPIN = "n = 0\nfor i in range(12_000_000):\n    n += i\n"


def parallel_ceiling(processes: int = 2) -> Measure:
    """This machine's own ceiling for the side-by-side goals (≤ 0.6 on 2 cores): *processes* copies of SPIN side
    by side vs one after another, measured in the same run as the goal it qualifies. A virtual machine whose cores
    are not whole (steal, shared siblings) shows it here, not as a defect of the matrix."""
    argv = [sys.executable, "-c", SPIN]
    serial = timed(lambda: [subprocess.run(argv, check=True) for _ in range(processes)])

    def side_by_side() -> None:
        running = [subprocess.Popen(argv) for _ in range(processes)]
        if any(p.wait() != 0 for p in running):
            raise RuntimeError("the spin program failed")
    parallel = timed(side_by_side)
    return Measure(f"this machine: {processes} CPU-bound processes side by side vs one after another", parallel,
                   serial, "s", f"informational: {1 / processes:.2f} is whole cores")
