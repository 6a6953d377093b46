"""The executorch smoke's verdict from the runner's own log (fixtures from real runs), and the case plumbing."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.config.cases import Case
from crosslane.report import Verdict
from crosslane.smokes import executorch

PASSING = """\
I 00:00:00.015845 executorch:executor_runner.cpp:798] 1 outputs:
OutputX 0: tensor(sizes=[1, 4], [0.456474, -1.69202, -1.77544, 1.40646])
I 00:00:00.027595 executorch:executor_runner.cpp:261] ETDump written to file 'add.etdump'.
I 00:00:00.027963 executorch:executor_runner.cpp:883] === Error stats for testset 0 ===
I 00:00:00.027980 executorch:executor_runner.cpp:884]  mean_absolute_error: 0.000000
I 00:00:00.028013 executorch:executor_runner.cpp:885]  max_absolute_error:  0.000000
I 00:00:00.028026 executorch:executor_runner.cpp:886]  mean_relative_error: 0.000000
I 00:00:00.028037 executorch:executor_runner.cpp:887]  max_relative_error:  0.000000
I 00:00:00.028339 executorch:executor_runner.cpp:904] Model output match expected BundleIO bpte ref data.
I 00:00:00.028354 executorch:executor_runner.cpp:905] TEST: BundleIO index[0] Test_result: PASS
"""
PROGRAM = executorch.Program(Case("add", "xnnpack", False, ("rvv128",)), Path("/x.bpte"), 0.01, 0.01, 1.33, 1)


def test_a_real_pass() -> None:
    verdict, reason = executorch.decide(PASSING, 0, timed_out=False, program=PROGRAM)
    assert verdict is Verdict.PASS and "max rel 0" in reason and "1 delegated" in reason


@pytest.mark.parametrize(("output", "code", "timed_out", "magnitude", "words"), [
    (PASSING, 132, False, 1.3, "died of SIGILL (XNNPACK's RVV kernels on a CPU without V?)"),
    (PASSING, -11, False, 1.3, "died of SIGSEGV"),
    (PASSING, 0, True, 1.3, "timed out"),
    (PASSING.replace("Test_result: PASS", "Test_result: FAIL"), 1, False, 1.3, "Test_result FAIL"),
    ("", 0, False, 1.3, "Test_result missing"),
    (PASSING.replace("max_relative_error:  0.000000", "max_relative_error:  0.5").replace(
        "max_absolute_error:  0.000000", "max_absolute_error:  0.2"), 0, False, 1.3, "over tolerance"),
    ("\n".join(line for line in PASSING.splitlines() if "max_" not in line), 0, False, 1.3, "no error statistics"),
    (PASSING, 0, False, 1e-9, "make the check meaningless"),
    (PASSING, 1, False, 1.3, "Test_result: PASS but exit 1"),
], ids=["sigill", "sigsegv", "timeout", "fail", "silent", "stats", "no-stats", "tiny-outputs", "rc"])
def test_every_other_outcome_fails_with_its_reason(output: str, code: int, timed_out: bool, magnitude: float,
                                                   words: str) -> None:
    program = executorch.Program(PROGRAM.case, PROGRAM.path, 0.01, 0.01, magnitude, 1)
    verdict, reason = executorch.decide(output, code, timed_out=timed_out, program=program)
    assert verdict is Verdict.FAIL and words in reason


def test_a_quantized_reference_far_from_eager_fails_everywhere() -> None:
    program = executorch.Program(Case("mv2", "xnnpack", True, ()), Path("/x.bpte"), 0.1, 0.25, 0.37, 1, 0.42)
    verdict, reason = executorch.decide(PASSING, 0, timed_out=False, program=program)
    assert verdict is Verdict.FAIL and "cosine 0.420" in reason and "wrong on every CPU" in reason
    close = executorch.Program(program.case, program.path, 0.1, 0.25, 0.37, 1, 0.97)
    assert executorch.decide(PASSING, 0, timed_out=False, program=close)[0] is Verdict.PASS


def test_program_keys_follow_the_case_and_the_pins() -> None:
    one = executorch.program_key(Case("add", "xnnpack", True, ()), ["torch==2.13.0"])
    assert one != executorch.program_key(Case("add", "xnnpack", False, ()), ["torch==2.13.0"])
    assert one != executorch.program_key(Case("add", "xnnpack", True, ()), ["torch==2.13.1"])
    assert one == executorch.program_key(Case("add", "xnnpack", True, ("rvv128",)), ["torch==2.13.0"])


def test_the_repository_matrix_is_upstreams_with_reasons(cfg: Config) -> None:
    grid = cfg.cases["riscv-ci"]
    assert len(grid.cases()) == 17
    assert set(grid.exempt) == {"yolo26"} and "trained weights" in grid.exempt["yolo26"]
    assert set(grid.models) - set(grid.exempt) <= set(executorch.EXPORTABLE)
    xnnpack = cfg.components["executorch-xnnpack"]
    assert xnnpack.options["xnnpack"] == "on" and xnnpack.source_of == "executorch-portable"
    assert xnnpack.sources == cfg.components["executorch-portable"].sources


def test_microkernels_come_from_the_xnnpack_log() -> None:
    log = ("Note (XNNPACK): Using binary microkernel 'xnn_f32_vadd_ukernel__rvv_u8v'.\n"
           "Note (XNNPACK): Using microkernel 'xnn_f32_vaddc_ukernel__rvv_u8v'\n"
           "Note (XNNPACK): Using binary microkernel 'xnn_f32_vadd_ukernel__rvv_u8v'.\n")
    assert executorch.microkernels(log) == ("xnn_f32_vadd_ukernel__rvv_u8v", "xnn_f32_vaddc_ukernel__rvv_u8v")


def test_profile_names_restrict_only_the_arch_that_defines_them(cfg: Config) -> None:
    names = cfg.components["executorch-xnnpack"].smoke.profiles  # type: ignore[union-attr]
    riscv = cfg.arches[Arch.RISCV64].profiles
    riscv_names = {p.name for p in riscv}
    assert [p.name for p in executorch.arch_profiles(riscv, riscv_names, names)] == ["rvv128", "rvv256", "rvv512"]
    # the RVV runner never lands on novector, even when novector is the only profile asked for
    novector = [p for p in riscv if p.name == "novector"]
    assert executorch.arch_profiles(novector, riscv_names, names) == []
    arm = cfg.arches[Arch.ARM64].profiles
    assert executorch.arch_profiles(arm, {p.name for p in arm}, names) == list(arm)


def test_an_unreadable_summary_is_removed_with_its_program(cfg: Config, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A summary cut short (a killed export) is not a cache entry: both files go, so the next run re-exports."""
    from crosslane.context import Context
    from crosslane.errors import StepFailed
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path))
    case = Case("add", "xnnpack", False, ())
    key = executorch.program_key(case, cfg.hostenvs[executorch.HOSTENV])[:16]
    program = tmp_path / "executorch-programs" / f"{case.name}-{key}.bpte"
    program.parent.mkdir()
    program.write_bytes(b"bpte")
    program.with_suffix(".json").write_text('{"rtol": 0.01, "atol"')
    with pytest.raises(StepFailed, match="removed it and the program"):
        executorch.export(Context(cfg, Runner(Log())), case)
    assert not program.exists() and not program.with_suffix(".json").exists()
