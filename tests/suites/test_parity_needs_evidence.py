"""A parity verdict is evidence only when something was compared: a control that passed nothing, no case passing on
both sides, or a control whose suite ran no case is never a PASS."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane import contract
from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.suites import SuiteCases, outcome, stage, verdict
from crosslane.suites.junit import Case, Outcome

P, F, S = Outcome.PASSED, Outcome.FAILED, Outcome.SKIPPED
COMPONENT = "executorch-portable"  # versions.toml runs its suite on riscv64 and on the amd64 control


def cases(*spec: tuple[str, Outcome]) -> list[Case]:
    return [Case(i, o, 0.1, "boom" if o is Outcome.FAILED else "") for i, o in spec]


def no_data(case: Case) -> str | None:
    return None


def test_parity_against_a_control_that_passed_nothing_is_no_pass() -> None:
    """The amd64 control's programs could not load: 21 cases failed there, so parity compared nothing."""
    failed_control = verdict.judge(cases(*((f"t{i}", F) for i in range(21))), {}, no_data)
    target = verdict.judge(cases(*((f"t{i}", P) for i in range(21))), {}, no_data)
    row = verdict.parity("x", Arch.RISCV64, "rvv128", target, failed_control)
    assert row.verdict is Verdict.FAIL, row.reason
    assert row.reason.startswith("nothing to compare with: the amd64 control passed none of its 21 cases (0 passed, "
                                 "21 failed: t0 (boom)"), row.reason
    empty_control = verdict.judge([], {}, no_data)
    assert verdict.parity("x", Arch.RISCV64, "rvv128", target, empty_control).verdict is Verdict.FAIL


def test_parity_with_no_case_passing_on_both_sides_is_no_pass() -> None:
    control = verdict.judge(cases(("a", P), ("b", P)), {}, no_data)
    skipped_here = verdict.judge(cases(("a", S), ("b", S), ("c", P)), {}, no_data)
    row = verdict.parity("x", Arch.RISCV64, "rvv128", skipped_here, control)
    assert row.verdict is Verdict.FAIL
    assert row.reason == "nothing compared: none of the 2 cases that pass on amd64 passed here (1 passed, 2 skipped)"


def test_a_control_suite_that_ran_no_case_gives_failing_parity_rows(cfg: Config, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    profiles = [p for p in cfg.arches[Arch.RISCV64].profiles if p.name in ("novector", "rvv128")]
    broken = Row(component=COMPONENT, arch=Arch.AMD64, check=Check.BUILD, verdict=Verdict.FAIL,
                 reason="cmake --build failed (exit 1)")

    def suite(ctx: Context, arch: Arch, name: str, chosen: list[object]) -> contract.Outcome[SuiteCases]:
        if arch is Arch.AMD64:
            return outcome((broken,))
        return outcome(cases={p.name: tuple(cases(("a", P))) for p in profiles})

    monkeypatch.setattr(stage, "suite", suite)
    rows = stage.run_component(ctx, Arch.RISCV64, COMPONENT, profiles)
    parity = [r for r in rows if r.check is Check.PARITY]
    assert [(r.profile, r.verdict) for r in parity] == [("novector", Verdict.FAIL), ("rvv128", Verdict.FAIL)], rows
    assert parity[0].reason == ("nothing to compare with: the amd64 control's suite ran no case (cmake --build "
                                "failed (exit 1))")
