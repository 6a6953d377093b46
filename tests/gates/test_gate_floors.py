"""Floors: counts of components whose smoke passed; floors only go up, and only after two runs reached them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands, gate_tasks
from crosslane.errors import ConfigError
from crosslane.policy import floors
from crosslane.report import Check, Row, Verdict
from crosslane.reports import summary

P, F, S = Verdict.PASS, Verdict.FAIL, Verdict.SKIP


def rows() -> list[Row]:
    return [
        Row(component="canary", arch=Arch.RISCV64, check=Check.BUILD, verdict=P),
        Row(component="canary", arch=Arch.RISCV64, check=Check.SMOKE, verdict=P, subject="cli", profile="rvv128"),
        Row(component="canary", arch=Arch.RISCV64, check=Check.SMOKE, verdict=P, subject="python-import",
            profile="rvv128"),
        Row(component="ort", arch=Arch.RISCV64, check=Check.SMOKE, verdict=P, subject="cli", profile="rvv128"),
        Row(component="ort", arch=Arch.RISCV64, check=Check.SMOKE, verdict=F, subject="cli", profile="novector"),
        Row(component="genai", arch=Arch.RISCV64, check=Check.SMOKE, verdict=S, reason="no smoke declared"),
        # A parity row is not a smoke, whatever its step says: it must not lift genai's count.
        Row(component="genai", arch=Arch.RISCV64, check=Check.PARITY, verdict=P, profile="rvv256"),
        Row(component="canary", arch=Arch.AMD64, check=Check.SMOKE,
            verdict=P), Row(component="ort", arch=Arch.AMD64, check=Check.SMOKE, verdict=P),
        Row(component="broken", arch=Arch.ARM64, check=Check.BUILD, verdict=F),
    ]


def test_passed_counts_need_a_pass_and_no_fail() -> None:
    assert floors.passed_counts(rows()) == {Arch.RISCV64: 1, Arch.AMD64: 2}


@pytest.mark.parametrize(("floor", "verdict"), [(1, P), (2, F), (0, P)], ids=["at", "below", "zero"])
def test_check_against_floor(floor: int, verdict: Verdict) -> None:
    [result] = floors.check({Arch.RISCV64: floor}, rows())
    assert result.verdict is verdict
    if verdict is F:
        assert "below the floor 2" in result.reason


def test_arch_with_floor_but_no_rows_fails() -> None:
    [result] = floors.check({Arch.ARM64: 1}, rows())
    assert result.verdict is F and result.reason.startswith("0 components")


def test_lowering_is_refused_with_a_reason() -> None:
    [problem] = floors.check_change({Arch.RISCV64: 3}, {Arch.RISCV64: 2}, [])
    assert "lowering 3 → 2 refused" in problem and "regression" in problem


def obs(*counts: int) -> list[floors.Observation]:
    return [floors.Observation(recorded=float(i), counts={Arch.RISCV64: n}) for i, n in enumerate(counts)]


@pytest.mark.parametrize(("seen", "allowed"), [
    (obs(), False), (obs(4), False), (obs(4, 3), False), (obs(3, 4), False), (obs(4, 4), True),
    (obs(1, 5, 4), True), (obs(4, 5, 3), False),
], ids=["none", "one-run", "second-short", "first-short", "two-reached", "last-two-reached", "latest-short"])
def test_raising_needs_the_last_two_runs_to_reach_it(seen: list[floors.Observation], allowed: bool) -> None:
    problems = floors.check_change({Arch.RISCV64: 2}, {Arch.RISCV64: 4}, seen)
    assert (problems == []) is allowed


def test_record_and_read_observations(tmp_path: Path) -> None:
    folder = tmp_path / "obs"
    floors.record(rows(), folder, now=10.0)
    floors.record(rows(), folder, now=20.0)
    seen = floors.observations(folder)
    assert [o.recorded for o in seen] == [10.0, 20.0]
    assert seen[-1].counts == {Arch.AMD64: 2, Arch.RISCV64: 1}
    (folder / "junk.json").write_text("{")
    with pytest.raises(ConfigError, match=r"junk\.json: not valid JSON"):
        floors.observations(folder)


def test_load_report_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    summary.write_json(rows(), path)
    assert floors.load_report(path) == rows()
    path.write_text(json.dumps([{"component": "x"}]))
    with pytest.raises(ConfigError, match="not a crosslane --json report"):
        floors.load_report(path)
    with pytest.raises(ConfigError, match=r"missing\.json: cannot read"):
        floors.load_report(tmp_path / "missing.json")
    path.write_text(json.dumps([{"component": [1], "arch": "riscv64", "check": "smoke", "verdict": "PASS"}]))
    with pytest.raises(ConfigError, match="entry 0 lacks the text fields"):
        floors.load_report(path)


def test_floors_task_fails_below_floor_and_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from cfgkit import make
    make(tmp_path, "[floors]\nriscv64 = 2\n")
    old = tmp_path / "old.toml"
    old.write_text((tmp_path / "versions.toml").read_text().replace("riscv64 = 2", "riscv64 = 3"))
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    path = tmp_path / "r.json"
    summary.write_json(rows(), path)
    code = commands.run(gate_tasks.floors(str(path), True, str(old)), config_path=str(tmp_path / "versions.toml"))
    out = capsys.readouterr().out
    assert code == 1
    assert "below the floor 2" in out and "lowering 3 → 2 refused" in out
    assert len(list((tmp_path / "build" / "reports" / "observations").glob("*.json"))) == 1


def test_previous_versions_toml_is_read_against_this_checkout(tmp_path: Path) -> None:
    """`git show HEAD~:versions.toml > /tmp/old.toml` has no components/ beside it: paths resolve here."""
    from cfgkit import make

    make(tmp_path / "repo", "[floors]\nriscv64 = 2\n")
    old = tmp_path / "elsewhere" / "old.toml"
    old.parent.mkdir()
    old.write_text((tmp_path / "repo" / "versions.toml").read_text())
    assert gate_tasks.previous_floors(old, tmp_path / "repo") == {Arch.RISCV64: 2}
