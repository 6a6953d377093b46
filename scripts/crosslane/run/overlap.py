"""Smokes beside builds: a component's smoke starts once every build it waits for has passed, while the later
builds compile (docs/architecture.md, "Smokes beside builds").

One smoke at a time runs beside the builds, in a thread of its own; its profiles run in parallel as they always do
(smokes/target.py), and the OS shares the cores between them and the compilers. Once a build fails no smoke starts
(a running one finishes, and its rows are kept). The rows come back in the plan's order, whatever order the smokes
ran in, so a report reads the same as one of a run that smoked after building.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from crosslane.archs import Arch
from crosslane.errors import UsageError
from crosslane.report import Row
from crosslane.run.plan import RunPlan

WHEN = ("auto", "beside", "after")
# On two cores the main job ends sooner with smokes beside its builds (bench/README.md, "Dated figures"); on one core a
# smoke beside a build could only slow it.
BESIDE_FROM_CORES = 2


def beside(when: str, cores: int | None = None) -> bool:
    """Whether smokes run beside the builds: *when* is --smokes (auto: with BESIDE_FROM_CORES cores or more)."""
    if when not in WHEN:
        raise UsageError(f"--smokes: unknown value '{when}' (one of {', '.join(WHEN)})")
    if when == "auto":
        return (cores if cores is not None else os.cpu_count() or 1) >= BESIDE_FROM_CORES
    return when == "beside"


class SmokesBeside:
    """Start each smoke of *job* through *smoke* once `built` has been told of every build it waits for."""

    def __init__(self, job: RunPlan, smoke: Callable[[str], list[Row]]) -> None:
        self._job = job
        self._smoke = smoke
        self._done: dict[Arch, set[str]] = {arch: set() for arch in job.builds}
        self._started: dict[str, Future[list[Row]]] = {}
        self._stopped = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crosslane-smoke")

    def built(self, arch: Arch, name: str, passed: bool) -> None:
        """A build of the plan ended (a lane that is off counts as passed: its smoke says why it is off)."""
        if not passed:
            self._stopped = True
        if self._stopped:
            return
        self._done[arch].add(name)
        for each in self._job.smokes:
            if each not in self._started and all(names <= self._done.get(a, set())
                                                 for a, names in self._job.needs(each).items()):
                self._started[each] = self._pool.submit(self._smoke, each)

    def finish(self, *, smoke_rest: bool) -> list[Row]:
        """Every smoke's rows in the plan's order: those not started run now when *smoke_rest* (every build
        passed), else only those already started are waited for."""
        try:
            if smoke_rest and not self._stopped:
                for each in self._job.smokes:
                    if each not in self._started:
                        self._started[each] = self._pool.submit(self._smoke, each)
            return [row for each in self._job.smokes if each in self._started for row in self._started[each].result()]
        finally:
            self.stop()

    def stop(self) -> None:
        """No smoke starts any more; one running is waited for (its qemu runs are bounded by their timeouts)."""
        self._stopped = True
        self._pool.shutdown(wait=True, cancel_futures=True)
