"""Op-timing tables from ExecuTorch etdumps: the table from events recorded off real riscv64 runs (default tier),
and the reading of a real etdump with executorch.devtools (slow tier: it needs the pinned torch + executorch venv).

The fixtures came from `invoke smoke --arch riscv64 --component executorch-xnnpack` (qemu, XNNPACK with RVV):
tests/fixtures/add-xnnpack-rvv128.etdump as written by the runner, and tests/fixtures/etdump-events.json as
`executorch_etdump.py --events` read it and mobilebert-xnnpack-q8@rvv256.etdump.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from crosslane.config import Config
from crosslane.files.paths import cache_dir
from crosslane.log import Log
from crosslane.models import executorch_etdump, hostenv
from crosslane.process.runner import Runner
from crosslane_helpers import FIXTURES


@pytest.fixture(scope="module")
def recorded() -> dict[str, list[dict[str, object]]]:
    data: dict[str, list[dict[str, object]]] = json.loads((FIXTURES / "etdump-events.json").read_text())
    return data


def test_one_xnnpack_add(recorded: dict[str, list[dict[str, object]]]) -> None:
    table = executorch_etdump.table(recorded["add-xnnpack@rvv128.etdump"])
    assert table["ops"] == [{"op": "Add (ND)", "calls": 1, "sum_ms": 0.173, "avg_ms": 0.173, "max_ms": 0.173}]
    assert {row["op"] for row in table["framework"]} == {"Program::load_method", "Method::init",
                                                         "Method::execute", "DELEGATE_CALL"}


def test_operator_instances_are_counted_per_operator(recorded: dict[str, list[dict[str, object]]]) -> None:
    events = recorded["mobilebert-xnnpack-q8@rvv256.etdump"]
    table = executorch_etdump.table(events)
    gemm = "Fully Connected (NC, QD8, F32, QC8W) GEMM"
    instances = [e for e in events if str(e["name"]).startswith(gemm + " #")]
    first = table["ops"][0]
    assert first["op"] == gemm and first["calls"] == len(instances) == 31
    assert not any("#" in row["op"] for row in table["ops"])
    sums = [row["sum_ms"] for row in table["ops"]]
    assert sums == sorted(sums, reverse=True)
    for row in table["ops"]:
        assert row["avg_ms"] == pytest.approx(row["sum_ms"] / row["calls"], abs=1e-3)
        assert row["max_ms"] <= row["sum_ms"] + 1e-9
    assert "native_call_eq.Scalar_out" in {row["op"] for row in table["ops"]}  # portable ops outside the delegate


@pytest.mark.slow
@pytest.mark.network
def test_a_real_etdump_reads_as_recorded(cfg: Config) -> None:
    python = hostenv.ensure(Runner(Log()), cfg.hostenvs["executorch-aot"], cache_dir() / "hostenvs", offline=False)
    script = Path(executorch_etdump.__file__)
    out = subprocess.run([python, script, "--events", FIXTURES / "add-xnnpack-rvv128.etdump"], check=True,
                         capture_output=True, text=True, timeout=600).stdout.splitlines()[-1]
    [(_, events)] = json.loads(out).items()
    assert events == json.loads((FIXTURES / "etdump-events.json").read_text())["add-xnnpack@rvv128.etdump"]
