"""This checkout against an earlier one, side by side in one run: the no-op `invoke build --arch riscv64`,
`invoke verify` on one wheel and `invoke --list`, each command in its own checkout with its own venv.

The earlier checkout is a clone at the revision to compare with, built once (`nox -s build-riscv64` in it):
  git clone . ../crosslane-before && git -C ../crosslane-before checkout REV
  (cd ../crosslane-before && nox -s build-riscv64)
  CROSSLANE_BENCH_BEFORE=../crosslane-before nox -s bench -- before_after
CROSSLANE_BENCH_NOOP=canary,cpuinfo narrows the no-op to those components (both checkouts built them only), and
says so in the figure's name.
Rounds alternate (this checkout, then the earlier one), so a slower spell of the machine falls on both; the
medians are compared. Goals: the no-op under half a second, verify within 1.0x auditwheel show (bench_verify).
"""

from __future__ import annotations

import os
import statistics
import subprocess
from collections.abc import Sequence
from pathlib import Path

from common import BIN, ROOT, Measure, timed

ROUNDS = 9
VENV = Path(".nox") / "build-riscv64" / "bin"  # the venv `nox -s build-riscv64` made in the earlier checkout
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def earlier_checkout() -> Path | None:
    value = os.environ.get("CROSSLANE_BENCH_BEFORE", "")
    return Path(value).resolve() if value else None


def timed_run(argv: Sequence[str | Path], cwd: Path) -> float:
    return timed(lambda: subprocess.run([str(a) for a in argv], cwd=cwd, env=ENV, check=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600))


def side_by_side(name: str, ours: Sequence[str | Path], theirs: Sequence[str | Path], before: Path,
                 goal: str) -> Measure:
    for argv, cwd in ((ours, ROOT), (theirs, before)):  # warm-up: page cache, bytecode, anything left to do
        timed_run(argv, cwd)
    after_times, before_times = [], []
    for _ in range(ROUNDS):
        after_times.append(timed_run(ours, ROOT))
        before_times.append(timed_run(theirs, before))
    return Measure(name, statistics.median(after_times), statistics.median(before_times), "s", goal)


def run_bench() -> list[Measure]:
    before = earlier_checkout()
    if before is None:
        print("   (this checkout vs an earlier one: set CROSSLANE_BENCH_BEFORE to a built clone; see this file)")
        return []
    theirs = before / VENV
    if not (theirs / "invoke").is_file() or not (before / "build" / "riscv64").is_dir():
        raise SystemExit(f"{before}: no {VENV}/invoke or build/riscv64; run nox -s build-riscv64 there first")
    from bench_verify import WHEEL_ARCH, wheel_for_bench

    wheel = wheel_for_bench()
    verify = ["verify", "--arch", WHEEL_ARCH.value, "--path", str(wheel)]
    narrowed = [c for c in os.environ.get("CROSSLANE_BENCH_NOOP", "").split(",") if c]
    noop = ["build", "--arch", "riscv64", *(w for c in narrowed for w in ("--component", c))]
    scope = f" --component {' '.join(narrowed)}" if narrowed else ""
    return [
        side_by_side("`invoke --list`, this checkout vs the earlier one", [BIN / "invoke", "--list"],
                     [theirs / "invoke", "--list"], before, "(report)"),
        side_by_side(f"no-op `invoke build --arch riscv64{scope}`, this checkout vs the earlier one",
                     [BIN / "invoke", *noop], [theirs / "invoke", *noop], before, "this checkout <= 0.5 s"),
        side_by_side(f"`invoke verify` on {wheel.name}, this checkout vs the earlier one", [BIN / "invoke", *verify],
                     [theirs / "invoke", *verify], before, "(report; vs auditwheel show: bench_verify)"),
    ]
