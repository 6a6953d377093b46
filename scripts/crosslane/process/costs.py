"""What a row or a stage cost: its wall seconds and its CPU seconds, children included.

A `Meter` is opened around the work that makes a row (`measured()`); while it is open, every command the runner
runs in that thread charges it the CPU its whole process tree used (os.wait4's rusage: the command and every
descendant it waited for), and the thread's own CPU counts too. Work handed to a pool thread (`carried()`) charges
the meters open where it was handed over, so a stage's meter holds the CPU of its parallel smokes as well. A
`Ledger` keeps a run's stage meters, in order, for the summary and the build report. Stdlib only.
"""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U")

_local = threading.local()


@dataclass
class Meter:
    """Seconds of one piece of work: wall once it is closed, CPU as it is charged."""

    started: float = field(default_factory=time.monotonic)
    wall: float = 0.0
    cpu: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def charge(self, seconds: float) -> None:
        with self._lock:
            self.cpu += seconds


def open_meters() -> list[Meter]:
    meters: list[Meter] = getattr(_local, "meters", [])
    return meters


def charge(cpu: float) -> None:
    """CPU seconds a command of this thread used: to every meter open in it."""
    for meter in open_meters():
        meter.charge(cpu)


@contextmanager
def measured() -> Iterator[Meter]:
    """A meter for the work inside the block (nested meters each count what is inside them)."""
    meter = Meter()
    outer = open_meters()
    _local.meters = [*outer, meter]
    thread_start = time.thread_time()
    try:
        yield meter
    finally:
        _local.meters = outer
        meter.charge(time.thread_time() - thread_start)
        meter.wall = time.monotonic() - meter.started


def carried(work: Callable[[U], T]) -> Callable[[U], T]:
    """*work* as a pool thread runs it: what it spends (its commands, its own CPU) charges the meters open in the
    thread that handed it over."""
    parents = open_meters()

    def run(item: U) -> T:
        _local.meters = list(parents)
        thread_start = time.thread_time()
        try:
            return work(item)
        finally:
            spent = time.thread_time() - thread_start
            for meter in parents:
                meter.charge(spent)
            _local.meters = []
    return run


@dataclass
class Ledger:
    """A run's stages, each with its meter, in the order they ran."""

    stages: list[tuple[str, Meter]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    @contextmanager
    def stage(self, name: str) -> Iterator[Meter]:
        with measured() as meter:
            yield meter
        self.stages.append((name, meter))

    def totals(self) -> list[tuple[str, float, float]]:
        """(stage, wall, cpu) with a stage that ran more than once (one per arch) summed."""
        found: dict[str, tuple[float, float]] = {}
        for name, meter in self.stages:
            wall, cpu = found.get(name, (0.0, 0.0))
            found[name] = (wall + meter.wall, cpu + meter.cpu)
        return [(name, wall, cpu) for name, (wall, cpu) in found.items()]

    def summary(self) -> list[tuple[str, float, float]]:
        """The stage totals and, last, the whole run so far: smokes run beside builds (overlap.py), so the stages'
        wall seconds may add up to more than the run's."""
        totals = self.totals()
        if not totals:
            return []
        usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        return [*totals, ("run", time.monotonic() - self.started, sum(u.ru_utime + u.ru_stime for u in usage))]
