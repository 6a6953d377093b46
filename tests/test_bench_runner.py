"""bench/run.py: a bench whose tool fails prints a failed measurement with the reason, and the others still run."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crosslane_helpers import REPO


def test_a_failing_bench_is_a_failed_measurement_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_run_under_test", REPO / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    spec.loader.exec_module(runner)
    (tmp_path / "bench_aaa_boom.py").write_text(
        "from crosslane.errors import StepFailed\n"
        "def run_bench():\n    raise StepFailed('debootstrap --foreign failed', fix='see its log')\n")
    (tmp_path / "bench_mmm_exit.py").write_text(
        "def run_bench():\n    raise SystemExit('executorch is not staged: invoke sources')\n")
    (tmp_path / "bench_zzz_fine.py").write_text(
        "from common import Measure\n"
        "def run_bench():\n    return [Measure('fine', 1.0, 2.0, 's', '<= 1')]\n")
    monkeypatch.setattr(runner, "HERE", tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert runner.main([]) == 1
    out = capsys.readouterr().out
    assert "FAILED measurement (bench_aaa_boom): StepFailed: debootstrap --foreign failed" in out
    assert "FAILED measurement (bench_mmm_exit): SystemExit: executorch is not staged: invoke sources" in out
    assert "fine: 1.000s vs 2.000s ratio 0.500" in out  # the benches after them still ran
    assert "Traceback" not in out
    for name in ("bench_aaa_boom", "bench_mmm_exit", "bench_zzz_fine"):
        sys.modules.pop(name, None)


@pytest.mark.spawns
def test_a_bounded_command_that_fails_names_its_last_lines_and_one_too_slow_is_killed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import common

    failing = ["sh", "-c", "echo step 1; echo 'cmake: no preset riscv64-linux' >&2; exit 3"]
    with pytest.raises(RuntimeError, match=r"sh -c .* exited 3: step 1 \| cmake: no preset riscv64-linux"):
        common.run_bounded(failing, {}, tmp_path, None)
    marker = tmp_path / "survived"
    slow = ["sh", "-c", f"(sleep 2; touch {marker}) & sleep 30"]
    assert common.run_bounded(slow, {}, tmp_path, 0.5) is False
    assert common.run_bounded(["true"], {}, tmp_path, 5) is True
    time.sleep(2.5)
    assert not marker.exists()  # the whole group was killed, its background child too


def test_steal_time_is_read_from_the_cpu_line_and_absent_counts_as_none(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import common

    stat = tmp_path / "stat"
    stat.write_text("cpu  16230 0 6370 32333 1817 0 153 752 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
    assert common.stolen_seconds(stat) == pytest.approx(752 / os.sysconf("SC_CLK_TCK"))
    stat.write_text("cpu  1 2 3 4\n")  # a kernel that does not count steal time
    assert common.stolen_seconds(stat) == 0.0
    assert common.stolen_seconds(tmp_path / "absent") == 0.0


@pytest.mark.spawns
def test_a_pinned_child_runs_on_its_core_and_its_cpu_seconds_are_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_genai

    core = sorted(os.sched_getaffinity(0))[-1]
    burn = ("import os, time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"
            "print(sorted(os.sched_getaffinity(0)))")
    began = time.perf_counter()
    busy = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, preexec_fn=bench_genai.pinned(core))
    idle = subprocess.Popen(["sleep", "0.4"])
    assert busy.stdout is not None
    with busy.stdout:
        assert busy.stdout.read().decode().strip() == f"[{core}]"
    busy_code, busy_cost = bench_genai.reaped(busy, began)
    idle_code, idle_cost = bench_genai.reaped(idle, began)
    assert busy_code == 0 and idle_code == 0 and busy.returncode == 0
    assert busy_cost.cpu >= 0.35 and busy_cost.wall >= busy_cost.cpu * 0.9
    assert idle_cost.cpu < 0.2 and idle_cost.wall >= 0.35  # waiting is wall time, not CPU time
    assert busy_cost.line() == f"{busy_cost.wall:.1f}s wall, {busy_cost.cpu:.1f}s CPU"


def test_the_split_is_each_phase_in_the_order_they_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_genai

    line = bench_genai.split_line({"configure": 5.04, "compile": 270.0, "install": 0.0, "package": 9.96})
    assert line == "configure 5.0s; compile 270.0s; install 0.0s; package 10.0s"


def test_the_main_jobs_figures_count_each_build_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build's source, patch and wheel rows repeat the build's time: only its own row counts."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_mainjob

    rows = [{"component": "g", "check": "build", "subject": "", "wall": 400.0},
            {"component": "g", "check": "build", "subject": "cp313-linux_riscv64", "wall": 400.0},
            {"component": "g", "check": "source", "subject": "", "wall": 400.0},
            {"component": "c", "check": "build", "subject": "", "wall": 100.0},
            {"component": "c", "check": "smoke", "subject": "", "wall": 300.0}]
    stages = [{"stage": "setup and sysroots", "wall": 10.0}, {"stage": "build and gates", "wall": 520.0},
              {"stage": "smoke", "wall": 300.0}, {"stage": "run", "wall": 620.0}]
    found = bench_mainjob.figures({"rows": rows, "stages": stages})
    assert found == {"run": 620.0, "builds": 500.0, "smoke": 300.0, "before smokes": 530.0}
    assert bench_mainjob.beside(found)  # 530 + 300 > 620: the smokes overlapped the builds
    assert not bench_mainjob.beside({**found, "smoke": 90.0})


def test_the_main_job_is_held_against_a_serial_runs_compile_seconds(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    """Beside the builds, a run's own build rows include the seconds the smokes shared the cores: the compile
    seconds come from a --smokes after run's report; a beside run's report given instead is refused."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import bench_mainjob

    def report(build: float, stages: tuple[float, float, float]) -> dict[str, object]:
        names = ("build and gates", "smoke", "run")
        return {"rows": [{"component": "g", "check": "build", "subject": "", "wall": build}],
                "stages": [{"stage": n, "wall": w} for n, w in zip(names, stages, strict=True)]}

    found = bench_mainjob.figures(report(600.0, (610.0, 300.0, 640.0)))  # beside
    monkeypatch.delenv("CROSSLANE_BENCH_COMPILE_REPORT", raising=False)
    assert bench_mainjob.against_compile(found) == []
    serial = tmp_path / "serial.json"
    serial.write_text(json.dumps(report(500.0, (505.0, 200.0, 705.0))))
    monkeypatch.setenv("CROSSLANE_BENCH_COMPILE_REPORT", str(serial))
    [measure] = bench_mainjob.against_compile(found)
    assert (measure.subject, measure.baseline) == (640.0, 500.0) and measure.ratio == 1.28
    serial.write_text(json.dumps(report(600.0, (610.0, 300.0, 640.0))))  # a beside run's report: refused
    assert bench_mainjob.against_compile(found) == []
    serial.write_text("{")
    assert bench_mainjob.against_compile(found) == []
