"""A run's rows as the summary table, markdown and JSON (report.py), read back equal."""

from __future__ import annotations

import json
from pathlib import Path

from crosslane.archs import Arch
from crosslane.report import Check, Row, Scope, Verdict
from crosslane.reports import summary


def test_report_table_and_json(tmp_path: Path) -> None:
    rows = [Row(component="canary", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="ok",
                subject="cli", profile="rvv128"),
            Row(component="c", arch=Scope("a"), check=Check.GATE, verdict=Verdict.FAIL, reason="x|y", subject="s")]
    text = summary.table(rows)
    assert text.splitlines()[0].split() == ["component", "arch", "step", "verdict", "wall/cpu", "reason"]
    assert "cli@rvv128" in text
    assert "x\\|y" in summary.markdown(rows)  # a cell's | escaped, as GitHub's tables read it
    summary.write_json(rows, tmp_path / "r.json")
    written = json.loads((tmp_path / "r.json").read_text())
    assert written[1]["verdict"] == "FAIL"
    assert (written[0]["check"], written[0]["subject"], written[0]["profile"]) == ("smoke", "cli", "rvv128")
    assert [Row.from_dict(d) for d in written] == rows
    assert summary.failed(rows) == rows[1:]
