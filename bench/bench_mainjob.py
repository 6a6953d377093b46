"""The main job's time against its compile time, from the build report of its last run (nox -s build-riscv64 writes
build/reports/report-riscv64.json; a 35-minute job is not re-run by the bench).

- the run's wall seconds against the sum of its components' build rows (goal: at most 1.25x);
- the smoke stage's wall seconds against the run's (its share; with smokes beside builds it overlaps them);
- the seconds the run went on after its builds and gates, against the run's: what the smokes still add at the end.

With smokes beside the builds (the default on 2 cores), the run's own build rows include the seconds they shared
the cores with the smokes, so the first ratio flatters. The compile seconds to hold the run against are those of a
run of `-- --smokes after` on the same machine and day: CROSSLANE_BENCH_COMPILE_REPORT=<that run's
report-riscv64.json> adds the run against them (goal: at most 1.25x).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from common import ROOT, Measure

REPORT = ROOT / "build" / "reports" / "report-riscv64.json"


def figures(data: dict[str, Any]) -> dict[str, float]:
    """The run's, the stages' and the summed build rows' wall seconds from a build report (schema 3)."""
    stages = {str(s["stage"]): float(s["wall"]) for s in data.get("stages") or [] if isinstance(s, dict)}
    rows = [r for r in data.get("rows") or [] if isinstance(r, dict)]
    # One row per component build with the whole build's time (its source, patch and wheel rows repeat it).
    builds = sum(float(r.get("wall") or 0) for r in rows if r.get("check") == "build" and not r.get("subject"))
    return {"run": stages.get("run", 0.0), "builds": builds, "smoke": stages.get("smoke", 0.0),
            "before smokes": stages.get("setup and sysroots", 0.0) + stages.get("build and gates", 0.0)}


def beside(found: dict[str, float]) -> bool:
    """Whether the smokes overlapped the builds: the stages' wall seconds then add up to more than the run's."""
    return found["before smokes"] + found["smoke"] > found["run"] * 1.02


def run_bench() -> list[Measure]:
    if not REPORT.is_file():
        print(f"   (no {REPORT.relative_to(ROOT)}: run nox -s build-riscv64 first)")
        return []
    data = json.loads(Path(REPORT).read_text())
    found = figures(data)
    if not found["run"] or not found["builds"]:
        print(f"   ({REPORT.relative_to(ROOT)} has no run or build times: not a report of the whole job)")
        return []
    print(f"   (from {REPORT.relative_to(ROOT)}, generated {data.get('generated', '?')})")
    if beside(found):
        print("   (its smokes ran beside the builds: the build rows include the seconds they shared the cores, so the "
              "first ratio flatters; compare the run with one of --smokes after)")
    return [*against_compile(found),
            Measure("main job riscv64: the run vs its build rows' sum", found["run"], found["builds"], "s",
                    "ratio <= 1.25"),
            Measure("main job riscv64: the smoke stage vs the run", found["smoke"], found["run"], "s",
                    "reported: the smoke stage's share (beside the builds)"),
            Measure("main job riscv64: the run after its builds and gates vs the run",
                    max(found["run"] - found["before smokes"], 0.0), found["run"], "s",
                    "reported: what the smokes add at the end")]


def against_compile(found: dict[str, float]) -> list[Measure]:
    """The run against the build rows of a --smokes after run (CROSSLANE_BENCH_COMPILE_REPORT), when one is given."""
    given = os.environ.get("CROSSLANE_BENCH_COMPILE_REPORT", "")
    if not given:
        return []
    try:
        serial = figures(json.loads(Path(given).read_text()))
    except (OSError, ValueError) as exc:
        print(f"   (CROSSLANE_BENCH_COMPILE_REPORT={given}: not a readable report: {exc})")
        return []
    if not serial["builds"] or beside(serial):
        print(f"   (CROSSLANE_BENCH_COMPILE_REPORT={given}: not a report of a --smokes after run with build rows)")
        return []
    return [Measure("main job riscv64: the run vs the build rows of a --smokes after run", found["run"],
                    serial["builds"], "s", "ratio <= 1.25")]
