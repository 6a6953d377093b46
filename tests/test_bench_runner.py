"""bench/run.py: a bench whose tool fails prints a failed measurement with the reason, and the others still run."""

from __future__ import annotations

import importlib.util
import sys
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
    (tmp_path / "bench_zzz_fine.py").write_text(
        "from common import Measure\n"
        "def run_bench():\n    return [Measure('fine', 1.0, 2.0, 's', '<= 1')]\n")
    monkeypatch.setattr(runner, "HERE", tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert runner.main([]) == 1
    out = capsys.readouterr().out
    assert "FAILED measurement (bench_aaa_boom): StepFailed: debootstrap --foreign failed" in out
    assert "fine: 1.000s vs 2.000s ratio 0.500" in out  # the bench after it still ran
    assert "Traceback" not in out
    for name in ("bench_aaa_boom", "bench_zzz_fine"):
        sys.modules.pop(name, None)
