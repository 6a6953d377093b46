"""What a row and a stage cost (costs.py): the runner charges each command's CPU (its whole process tree, from
wait4) to the meters open in its thread, pool threads charge the meter that handed them work, rows carry the
time of the work that made them, and the summary, the JSON and report-diff show it."""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import pytest

from crosslane import report
from crosslane.archs import Arch
from crosslane.log import Log
from crosslane.process import costs
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Scope, Verdict
from crosslane.reports import diff as reportdiff
from crosslane.reports import summary
from crosslane.smokes import target

# A process tree that burns ~0.4 s of CPU: a shell whose child python spins (the parent waits for it).
BURN = [sys.executable, "-c", "import subprocess, sys; subprocess.run([sys.executable, '-c', "
        "'import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass'])"]


@pytest.mark.spawns
def test_a_commands_cpu_counts_its_whole_tree_and_charges_the_open_meters() -> None:
    runner = Runner(Log(io.StringIO()))
    with costs.measured() as outer, costs.measured() as inner:
        result = runner.run(BURN, timeout=60)
    assert result.ok and result.cpu >= 0.35, result
    assert inner.cpu >= result.cpu and outer.cpu >= inner.cpu and outer.wall >= inner.wall >= 0.35
    assert runner.run(BURN, timeout=60).cpu >= 0.35  # no meter open: nothing to charge, still measured


@pytest.mark.spawns
def test_parallel_items_carry_their_own_time_and_charge_the_stage() -> None:
    runner = Runner(Log(io.StringIO()))

    def work(item: str) -> tuple[Row, str]:
        runner.run(BURN, timeout=60)
        return Row(component="c", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="ok",
                   profile=item), item

    ledger = costs.Ledger()
    with ledger.stage("smoke"):
        done = target.per_item(["rvv128", "rvv256"], work)
    assert [item for _, item in done] == ["rvv128", "rvv256"]
    for row, _ in done:
        assert row.cpu >= 0.35 and row.wall >= 0.35, row
    [(name, wall, cpu)] = ledger.totals()
    assert name == "smoke" and cpu >= 0.7 and wall >= 0.35


def test_a_rows_time_is_shown_kept_and_read_back_bounded(tmp_path: Path) -> None:
    row = Row(component="c", arch=Arch.RISCV64, check=Check.BUILD, verdict=Verdict.PASS, reason="built", wall=12.345,
              cpu=20.5)
    # the time is not the row's identity
    assert row == Row(component="c", arch=Arch.RISCV64, check=Check.BUILD, verdict=Verdict.PASS, reason="built")
    assert "12.3s/20.5s" in summary.table([row]) and "| 12.3s/20.5s |" in summary.markdown([row])
    [timed] = report.timed([Row(component="c", arch=Scope("a"), check=Check.GATE, verdict=Verdict.PASS)], 1.0, 2.0)
    assert (timed.wall, timed.cpu) == (1.0, 2.0)
    assert report.timed([row], 1.0, 2.0) == [row] and report.timed([row], 1.0, 2.0)[0].wall == 12.345
    summary.write_json([row], tmp_path / "r.json")
    [back] = report.rows_from(json.loads((tmp_path / "r.json").read_text()), "r.json")
    assert (back.wall, back.cpu) == (12.345, 20.5)
    for hostile in (-1, 1e12, True, "5", None, float("nan")):
        entry = {"component": "c", "arch": "a", "check": "build", "verdict": "PASS", "wall": hostile, "cpu": hostile}
        assert Row.from_dict(entry).wall == 0.0 and Row.from_dict(entry).cpu == 0.0


def test_the_stage_table_and_its_markdown() -> None:
    stages = [("setup and sysroots", 3.0, 1.5), ("build and gates", 600.25, 1100.0)]
    text = summary.stage_table(stages)
    assert text.splitlines()[0].split() == ["stage", "wall", "cpu"]
    assert "build and gates        600.2s    1100.0s" in text
    assert "| build and gates | 600.2s | 1100.0s |" in summary.markdown([], stages)
    assert summary.stage_table([]) == ""


def test_report_diff_names_the_rows_whose_time_changed_most() -> None:
    def data(walls: dict[str, float]) -> dict[str, object]:
        return {"schema": 3, "rows": [{"component": name, "arch": "riscv64", "check": "smoke", "verdict": "PASS",
                                       "wall": wall} for name, wall in walls.items()]}
    old = data({"a": 100.0, "b": 10.0, "c": 10.0, "d": 50.0})
    new = data({"a": 101.0, "b": 60.0, "c": 12.0, "d": 20.0})
    assert reportdiff.diff(old, new) == ["time b riscv64 smoke: 10.0s → 60.0s", "time d riscv64 smoke: 50.0s → 20.0s"]


@pytest.mark.spawns
def test_a_meter_is_closed_even_when_the_work_fails() -> None:
    with pytest.raises(RuntimeError), costs.measured() as meter:
        time.sleep(0.05)
        raise RuntimeError("x")
    assert meter.wall >= 0.05 and costs.open_meters() == []
