"""Smokes beside builds (overlap.py): a smoke starts only once every build it waits for passed, none starts after a
failed build, and the rows come back in the plan's order whatever order the smokes ran in."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path
from types import MappingProxyType

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import Terminated, UsageError
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.run import overlap, pipeline
from crosslane.run.plan import RunPlan

BUILDS = {Arch.RISCV64: ("dep", "compared", "late"), Arch.AMD64: ("dep", "compared")}


def job() -> RunPlan:
    return RunPlan(arch=Arch.RISCV64, builds=MappingProxyType(BUILDS), smokes=("dep", "compared", "late"), profiles=(),
                   lanes=MappingProxyType({}),
                   whole_arch=False)


class Recorder:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.release = threading.Event()

    def __call__(self, name: str) -> list[Row]:
        self.started.append(name)
        self.release.wait(10)
        return [Row(component=name, arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="ran")]


def test_a_smoke_waits_for_its_builds_on_every_arch_and_rows_keep_the_plans_order() -> None:
    smoke = Recorder()
    beside = overlap.SmokesBeside(job(), smoke)
    beside.built(Arch.RISCV64, "dep", True)
    beside.built(Arch.RISCV64, "compared", True)
    beside.built(Arch.AMD64, "dep", True)  # "dep" waits for the control's copy too: it builds it
    assert smoke.started in ([], ["dep"])
    beside.built(Arch.RISCV64, "late", True)  # "late" can start before the control's "compared"
    beside.built(Arch.AMD64, "compared", True)
    smoke.release.set()
    rows = beside.finish(smoke_rest=True)
    assert [r.component for r in rows] == ["dep", "compared", "late"]
    assert smoke.started == ["dep", "late", "compared"]


def test_no_smoke_starts_after_a_failed_build_and_a_started_one_is_kept() -> None:
    smoke = Recorder()
    smoke.release.set()
    beside = overlap.SmokesBeside(job(), smoke)
    for arch in (Arch.RISCV64, Arch.AMD64):
        beside.built(arch, "dep", True)
    beside.built(Arch.RISCV64, "compared", True)
    beside.built(Arch.AMD64, "compared", False)
    beside.built(Arch.RISCV64, "late", True)  # all it waits for passed, but after a failure nothing starts
    rows = beside.finish(smoke_rest=False)
    assert [r.component for r in rows] == ["dep"] and smoke.started == ["dep"]


def test_the_rest_smokes_at_the_end_when_every_build_passed() -> None:
    smoke = Recorder()
    smoke.release.set()
    beside = overlap.SmokesBeside(job(), smoke)
    assert [r.component for r in beside.finish(smoke_rest=True)] == ["dep", "compared", "late"]


@pytest.mark.spawns
def test_an_interrupted_run_stops_the_smoke_beside_it_at_once(cfg: Config, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """SIGTERM during a build (Terminated in the main thread) kills the smoke's qemu beside it, not minutes later."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    running = threading.Event()

    def build(ctx: Context, job: RunPlan, arch: Arch, names: tuple[str, ...] | None = None,
              on_built: pipeline.OnBuilt | None = None, **kw: object) -> list[Row]:
        for name in names or ():
            if on_built:
                on_built(arch, name, True)
        if arch is Arch.RISCV64 and not running.wait(10):
            raise AssertionError("the smoke did not start beside the build")
        raise Terminated

    def smoke_one(ctx: Context, job: RunPlan, name: str) -> list[Row]:
        running.set()
        ctx.runner.run(["sleep", "60"], timeout=120)
        return []

    monkeypatch.setattr(pipeline, "setup", lambda *a, **k: [])
    monkeypatch.setattr(pipeline, "sysroots", lambda *a, **k: [])
    monkeypatch.setattr(pipeline, "build", build)
    monkeypatch.setattr(pipeline, "smoke_one", smoke_one)
    started = time.monotonic()
    with pytest.raises(Terminated):
        pipeline.run_arch(Context(cfg, Runner(Log(io.StringIO()))), Arch.RISCV64, ["cpuinfo"], smokes="beside")
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(("when", "cores", "expected"), [("auto", 1, False), ("auto", 2, True), ("auto", 64, True),
                                                         ("beside", 2, True), ("after", 64, False)])
def test_when_smokes_run_beside_the_builds(when: str, cores: int, expected: bool) -> None:
    assert overlap.beside(when, cores) is expected


def test_an_unknown_smokes_value_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--smokes: unknown value 'early' \(one of auto, beside, after\)"):
        overlap.beside("early", 8)


def test_with_smokes_after_no_smoke_starts_before_every_build_ended(cfg: Config, monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path))
    events: list[str] = []
    smoked = threading.Event()

    def build(ctx: Context, job: RunPlan, arch: Arch, names: tuple[str, ...] | None = None,
              on_built: pipeline.OnBuilt | None = None, **kw: object) -> list[Row]:
        for name in names or ():
            if name == "cpuinfo":  # the last build: beside, the canary's smoke would have started by now
                smoked.wait(1)
            events.append(f"build {name} {arch}")
            if on_built:
                on_built(arch, name, True)
        return []

    def smoke_one(ctx: Context, job: RunPlan, name: str) -> list[Row]:
        events.append(f"smoke {name}")
        smoked.set()
        return []

    monkeypatch.setattr(pipeline, "setup", lambda *a, **k: [])
    monkeypatch.setattr(pipeline, "sysroots", lambda *a, **k: [])
    monkeypatch.setattr(pipeline, "build", build)
    monkeypatch.setattr(pipeline, "smoke_one", smoke_one)
    monkeypatch.setattr(pipeline, "report_rows", lambda ctx, job, rows: rows)
    pipeline.run_arch(Context(cfg, Runner(Log(io.StringIO()))), Arch.RISCV64, ["canary", "cpuinfo"], smokes="after")
    assert events == ["build canary riscv64", "build canary amd64", "build cpuinfo riscv64", "smoke canary",
                      "smoke cpuinfo"]
