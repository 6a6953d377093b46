"""Upstream suites' results: JUnit files as ctest, googletest and pytest really wrote them (tests/fixtures/junit,
captured from cpuinfo's tests under qemu and genai's pytest on a riscv64 board), hostile ones, and the verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.process.runner import Result
from crosslane.report import Check, Verdict
from crosslane.reports import summary
from crosslane.suites import ctest, junit, pytest_suite, verdict
from crosslane.suites.junit import Case, Outcome

pytestmark = [pytest.mark.hostile("4 test results from a target")]

FIXTURES = Path(__file__).parent.parent / "fixtures" / "junit"


def test_ctest_file_lists_each_program_once() -> None:
    cases = junit.read(FIXTURES / "cpuinfo-ctest.xml")
    assert [(c.id, c.outcome) for c in cases] == [("init-test", Outcome.FAILED), ("get-current-test", Outcome.PASSED)]


def test_googletest_file_has_every_case_with_its_message() -> None:
    cases = junit.read(FIXTURES / "cpuinfo-init-test.xml", prefix="init-test/", separator=".")
    assert len(cases) == 131
    failed = {c.id: c.message for c in cases if c.outcome is Outcome.FAILED}
    assert failed["init-test/CORE.known_vendor"] == \
        "init.cc:301: Expected: (cpuinfo_vendor_unknown) != (core->vendor), actual: 0 vs 0"
    assert len(failed) == 8


def test_merge_replaces_a_program_by_its_cases(tmp_path: Path) -> None:
    (tmp_path / "init-test-0.xml").write_bytes((FIXTURES / "cpuinfo-init-test.xml").read_bytes())
    merged = ctest.merge(junit.read(FIXTURES / "cpuinfo-ctest.xml"), tmp_path)
    ids = [c.id for c in merged]
    assert "init-test" not in ids  # its failures are named by case, not as one program
    assert "get-current-test" in ids  # no XML of its own here: the ctest entry stands
    assert sum(1 for c in merged if c.outcome is Outcome.FAILED) == 8


def test_merge_keeps_a_program_that_failed_after_its_cases_passed(tmp_path: Path) -> None:
    (tmp_path / "p-0.xml").write_text('<testsuites><testsuite name="S"><testcase classname="S" name="a" time="0.1"/>'
                                    "</testsuite></testsuites>")
    crashed = Case("p", Outcome.FAILED, 1.0, "Exception: SegFault")
    merged = ctest.merge([crashed], tmp_path)
    assert [c.id for c in merged] == ["p/S.a", "p"]


def test_ctest_notrun_is_a_skip_only_when_the_test_asked_for_it() -> None:
    """ctest 3.31.6's own file for a test that exits 1, one that crashes, one that exits its SKIP_RETURN_CODE and
    one whose program does not exist (ctest counts it failed, exit 8)."""
    cases = {c.id: (c.outcome, c.message) for c in junit.read(FIXTURES / "ctest-statuses.xml", ctest=True)}
    assert cases == {"fails": (Outcome.FAILED, "Failed"), "crashes": (Outcome.FAILED, "SEGFAULT"),
                     "skips": (Outcome.SKIPPED, "SKIP_RETURN_CODE=77"),
                     "gone": (Outcome.FAILED, "Unable to find executable")}


def test_merge_keeps_a_crash_after_a_failed_case_and_a_shard_that_wrote_nothing(tmp_path: Path) -> None:
    (tmp_path / "p-0.xml").write_text('<testsuites><testsuite name="S"><testcase classname="S" name="a">'
                                      '<failure message="exempt, say"/></testcase></testsuite></testsuites>')
    crashed = Case("p", Outcome.FAILED, 1.0, "SEGFAULT")
    assert [c.id for c in ctest.merge([crashed], tmp_path)] == ["p/S.a", "p"]
    failed_by_its_case = Case("p", Outcome.FAILED, 1.0, "Failed")
    assert [c.id for c in ctest.merge([failed_by_its_case], tmp_path)] == ["p/S.a"]
    shard = Case("p-1", Outcome.FAILED, 1.0, "SEGFAULT")  # its own XML never written
    assert [c.id for c in ctest.merge([failed_by_its_case, shard], tmp_path)] == ["p/S.a", "p-1"]


def test_an_exemption_key_with_brackets_is_the_parametrized_id_itself() -> None:
    exempt = {"test_m::test_op[fp16]": "measured", "test_m::slow_*": "measured"}
    assert verdict.exemption_for("test_m::test_op[fp16]", exempt) == "test_m::test_op[fp16]"
    assert verdict.exemption_for("test_m::test_op1", exempt) is None
    assert verdict.exemption_for("test_m::slow_one[a]", exempt) == "test_m::slow_*"


@pytest.mark.parametrize("time", ["1e999", "inf", "nan", "-1"])
def test_a_time_that_is_no_time_is_zero(tmp_path: Path, time: str) -> None:
    (tmp_path / "r.xml").write_text(f'<testsuite><testcase classname="m" name="t" time="{time}"/></testsuite>')
    assert [c.seconds for c in junit.read(tmp_path / "r.xml")] == [0.0]


def test_merge_shards_share_one_program_file(tmp_path: Path) -> None:
    for name, case in (("t-0.xml", "a"), ("t-1.xml", "b")):
        (tmp_path / name).write_text(f'<testsuites><testsuite name="S"><testcase classname="S" name="{case}"/>'
                                     "</testsuite></testsuites>")
    shards = [Case("t", Outcome.PASSED, 1.0), Case("t-1", Outcome.PASSED, 1.0)]
    assert sorted(c.id for c in ctest.merge(shards, tmp_path)) == ["t/S.a", "t/S.b"]


def test_a_truncated_or_hostile_file_is_a_value_error(tmp_path: Path) -> None:
    cut = tmp_path / "cut.xml"
    cut.write_bytes((FIXTURES / "cpuinfo-init-test.xml").read_bytes()[:5000])
    with pytest.raises(ValueError, match="not well-formed"):
        junit.read(cut)
    bomb = tmp_path / "bomb.xml"
    bomb.write_text('<!DOCTYPE t [<!ENTITY a "aaaa">]><testsuites>&a;</testsuites>')
    with pytest.raises(ValueError, match="document type"):
        junit.read(bomb)
    # The same declaration in UTF-16 (no "<!DOCTYPE" bytes to search for): refused by the parser, not expanded.
    wide = tmp_path / "wide.xml"
    wide.write_bytes('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE t [<!ENTITY a "aaaa">]><testsuites>&a;'
                     '</testsuites>'.encode("utf-16"))
    with pytest.raises(ValueError, match="document type"):
        junit.read(wide)
    other = tmp_path / "other.xml"
    other.write_text("<html/>")
    with pytest.raises(ValueError, match="<html>"):
        junit.read(other)
    with pytest.raises(ValueError, match="a folder"):
        junit.read(tmp_path)


def test_pytest_skips_and_errors() -> None:
    xml = FIXTURES / "genai-pytest-riscv64.xml"
    cases = junit.read(xml)
    outcomes = junit.counts(cases)
    assert outcomes[Outcome.PASSED] > 10 and outcomes[Outcome.SKIPPED] > 10
    assert all("::" in c.id and c.id.startswith("test_onnxruntime_genai_api::") for c in cases)


def cases(*spec: tuple[str, Outcome]) -> list[Case]:
    return [Case(i, o, 0.1, "boom" if o is Outcome.FAILED else "") for i, o in spec]


P, F, S = Outcome.PASSED, Outcome.FAILED, Outcome.SKIPPED


def no_data(case: Case) -> str | None:
    return None


def test_a_failure_is_named_and_fails_the_row() -> None:
    judged = verdict.judge(cases(("a", P), ("b", F), ("c", S)), {}, no_data)
    row = verdict.row("x", Arch.RISCV64, "rvv128", judged)
    assert row.verdict is Verdict.FAIL and row.check is Check.TESTS
    assert "1 of 3 failed: b (boom)" in row.reason and row.label == "upstream-tests@rvv128"


def test_an_exempt_failure_passes_and_a_stale_exemption_fails() -> None:
    exempt = {"b*": "fails on this target because of a named reason"}
    judged = verdict.judge(cases(("a", P), ("b1", F), ("b2", F)), exempt, no_data)
    assert verdict.row("x", Arch.RISCV64, "p", judged).verdict is Verdict.PASS
    healed = verdict.judge(cases(("a", P), ("b1", P), ("b2", P)), exempt, no_data)
    row = verdict.row("x", Arch.RISCV64, "p", healed, where="components.x.tests.exempt.riscv64")
    assert row.verdict is Verdict.FAIL and "'b*'" in row.reason and "components.x.tests.exempt.riscv64" in row.reason
    partly = verdict.judge(cases(("b1", P), ("b2", F)), exempt, no_data)
    assert partly.stale == ()  # one of its cases still fails: the exemption still holds


def test_absent_data_is_named_never_passed() -> None:
    def missing(case: Case) -> str | None:
        return "test/models/whisper/dummy_encoder.onnx" if case.id == "w" else None

    judged = verdict.judge(cases(("a", P), ("w", F)), {}, missing)
    row = verdict.row("x", Arch.RISCV64, "p", judged)
    assert row.verdict is Verdict.PASS and judged.passed == 1
    assert "1 not run for data the staged source lacks (test/models/whisper/dummy_encoder.onnx)" in row.reason


def test_nothing_ran_or_nothing_passed_is_a_failure() -> None:
    assert verdict.row("x", Arch.RISCV64, "p", verdict.judge([], {}, no_data)).verdict is Verdict.FAIL
    all_skipped = verdict.judge(cases(("a", S)), {}, no_data)
    assert verdict.row("x", Arch.RISCV64, "p", all_skipped).verdict is Verdict.FAIL


def test_parity_calls_out_target_only_failures() -> None:
    control = verdict.judge(cases(("a", P), ("b", P), ("c", F)), {}, no_data)
    target = verdict.judge(cases(("a", P), ("b", F), ("c", F)), {}, no_data)
    row = verdict.parity("x", Arch.RISCV64, "rvv256", target, control)
    assert row.verdict is Verdict.FAIL and row.check is Check.PARITY and "b (boom)" in row.reason
    exempted = verdict.judge(cases(("a", P), ("b", F)), {"b": "a measured reason of some length"}, no_data)
    row = verdict.parity("x", Arch.RISCV64, "rvv256", exempted, control)
    assert row.verdict is Verdict.PASS and "1 exempted target-only failures" in row.reason
    table = verdict.table([("rvv256", target)], control)
    assert "| rvv256 | 3 | 1 | 2 | 0 | 0 | 0 |" in table and "| amd64 control |" in table


@pytest.mark.parametrize(("output", "shown"), [
    ("ok\nqemu: uncaught target signal 11 (Segmentation fault) - core dumped\n",
     "ok | qemu: uncaught target signal 11 (Segmentation fault) - core dumped"),
    ("a\nb\nc\nversion `GLIBC_2.43' not found (required by ./prog)\n",
     "b | c | version `GLIBC_2.43' not found (required by ./prog)"),
    ("x\n/usr/bin/qemu-riscv64-static: ../../target/riscv/translate.c:1153: decode_save_opc: Assertion "
     "`ctx->insn_start != NULL' failed.\nAborted\n",
     "emulator crash (qemu's own, not the program's): /usr/bin/qemu-riscv64-static: ../../target/riscv/translate.c:"
     "1153: decode_save_opc: Assertion `ctx->insn_start != NULL' failed."),
    ("qemu: fatal: Lockup: can't escalate 3 to HardFault\n",
     "emulator crash (qemu's own, not the program's): qemu: fatal: Lockup: can't escalate 3 to HardFault"),
    ("**\nERROR:../../accel/tcg/cpu-exec.c:1028:cpu_exec_setjmp: assertion failed: (cpu == current_cpu)\n",
     "emulator crash (qemu's own, not the program's): ERROR:../../accel/tcg/cpu-exec.c:1028:cpu_exec_setjmp: "
     "assertion failed: (cpu == current_cpu)"),
    ("ERROR: model.cc:12: expected 3 got 4\n", "ERROR: model.cc:12: expected 3 got 4"),
    ("Failed\n", ""),
    ("\x1b[31mred\n", "\\x1b[31mred"),
    ("x" * 500 + "\nshort\n", "short"),
    ("y" * 500 + "\n", "…" + "y" * 240),
], ids=["guest-signal-is-the-programs", "last-lines", "qemu-assertion", "qemu-fatal", "qemu-glib-assertion",
        "a-programs-own-error", "only-the-label", "control-characters", "long-line-crowded-out", "one-long-line"])
def test_what_a_failed_cases_output_says(output: str, shown: str) -> None:
    assert junit.output_tail(output, "Failed") == shown


def test_targets_regex_matches_targets_and_their_shards() -> None:
    import re

    pattern = re.compile(ctest.targets_regex(["f32-gemm-test", "qd8.x"]))
    assert pattern.match("f32-gemm-test") and pattern.match("f32-gemm-test-7") and pattern.match("qd8.x-1")
    assert not pattern.match("f32-gemm-test2") and not pattern.match("qd8-x")


def test_emulator_script_takes_the_cpu_from_the_environment() -> None:
    text = ctest.emulator_script(["/usr/bin/qemu-riscv64-static", "-L", "/g r", "-cpu", "rv64,v=false"])
    assert 'exec /usr/bin/qemu-riscv64-static -L \'/g r\' -cpu "${CROSSLANE_TEST_CPU:-rv64,v=false}" "$@"' in text
    assert 'GTEST_OUTPUT="xml:${CROSSLANE_GTEST_DIR}/${1##*/}-${GTEST_SHARD_INDEX:-0}.xml"' in text


@pytest.mark.spawns
def test_the_emulator_wrapper_passes_the_cpu_and_names_each_shards_xml(tmp_path: Path) -> None:
    import subprocess

    fake = tmp_path / "qemu"
    fake.write_text('#!/bin/sh\necho "args: $*"\necho "xml: $GTEST_OUTPUT"\n')
    fake.chmod(0o755)
    wrapper = tmp_path / "emulator"
    wrapper.write_text(ctest.emulator_script([str(fake), "-L", "/root", "-cpu", "rv64"]))
    wrapper.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "CROSSLANE_TEST_CPU": "rv64,v=true", "CROSSLANE_GTEST_DIR": "/r/gtest",
           "GTEST_SHARD_INDEX": "3"}
    done = subprocess.run([str(wrapper), "/b/test/f32-vadd-test", "--x"], env=env, capture_output=True, text=True,
                          check=True)
    assert done.stdout == ("args: -L /root -cpu rv64,v=true /b/test/f32-vadd-test --x\n"
                           "xml: xml:/r/gtest/f32-vadd-test-3.xml\n")
    plain = subprocess.run([str(wrapper), "/b/t"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                           check=True)
    assert plain.stdout == "args: -L /root -cpu rv64 /b/t\nxml: \n"


def test_the_nightly_runs_the_whole_suite() -> None:
    from crosslane.config import SuiteSpec

    spec = SuiteSpec(kind="ctest", timeout=60, targets=("a-test",), regex="^a", label="fast")
    assert ctest.selection(spec, {}) == spec
    whole = ctest.selection(spec, {"CROSSLANE_TESTS_FULL": "1"})
    assert (whole.targets, whole.regex, whole.label) == ((), "", "")


def test_pip_said_it_installed_or_found_each_requirement() -> None:
    from crosslane.suites import pytest_suite

    output = ("Requirement already satisfied: packaging>=20 in ./usr/lib/python3/dist-packages (from pytest)\n"
              "Successfully installed iniconfig-2.3.1 pluggy-1.7.0 pytest-8.4.2 pytest_timeout-2.4.0\n")
    assert pytest_suite.has_requirement("pytest", output) and pytest_suite.has_requirement("pytest-timeout", output)
    assert pytest_suite.has_requirement("Packaging", output) and not pytest_suite.has_requirement("numpy", output)


def test_a_name_cannot_forge_lines_or_grow_without_bound(tmp_path: Path) -> None:
    from crosslane import report

    forged = tmp_path / "forged.xml"
    long_name = "x" * (20 << 20)
    forged.write_text('<testsuites><testsuite name="S">'
                      '<testcase classname="S" name="a&#10;::error::forged&#10;| FAIL |"/>'
                      f'<testcase classname="S" name="{long_name}"/><testcase classname="S" name="{long_name}y"/>'
                      '</testsuite></testsuites>')
    first, second, third = junit.read(forged)
    assert "\n" not in first.id and first.id == "S::a\\n::error::forged\\n| FAIL |"
    assert len(second.id) <= junit.ID_LIMIT and len(third.id) <= junit.ID_LIMIT and second.id != third.id
    row = report.Row(component="c", arch=Arch.RISCV64, check=report.Check.TESTS, verdict=report.Verdict.FAIL,
                     reason=f"failed: {first.id}")
    assert summary.table([row]).count("\n") == 2  # header, rule, one row
    assert "\\| FAIL \\|" in summary.markdown([row]) and "\n::error" not in summary.markdown([row])


def test_the_boards_results_are_its_own_file_never_a_link(tmp_path: Path) -> None:
    """A program on the board may replace its junit.xml (or the folder holding it) with a link to a host file."""
    from crosslane.suites import pytest_suite
    board = tmp_path / "board"
    (board / "crosslane").mkdir(parents=True)
    host_file = tmp_path / "host-secret.xml"
    host_file.write_text("<testsuite/>")
    assert pytest_suite.results_file(board) == board / "crosslane/junit.xml"
    (board / "crosslane/junit.xml").symlink_to(host_file)
    with pytest.raises(ValueError, match="a link"):
        pytest_suite.results_file(board)
    (board / "crosslane/junit.xml").unlink()
    (board / "crosslane").rmdir()
    (board / "crosslane").symlink_to(tmp_path)  # the folder itself a link out of the board
    with pytest.raises(ValueError, match="a link"):
        pytest_suite.results_file(board)
    (board / "crosslane").unlink()
    (board / "crosslane/junit.xml").mkdir(parents=True)
    with pytest.raises(ValueError, match="not a file"):
        pytest_suite.results_file(board)


@pytest.mark.parametrize(("returncode", "timed_out", "ended"), [
    (0, False, None), (1, False, None), (-11, False, "SIGSEGV"), (139, False, "SIGSEGV"), (3, False, "exit 3"),
    (5, False, "exit 5"), (0, True, "timed out"),
], ids=["passed", "some-failed", "crash", "crash-in-a-shell", "internal-error", "nothing-collected", "timeout"])
def test_pytests_own_end_is_a_failure_no_case_reports(returncode: int, timed_out: bool, ended: str | None) -> None:
    assert pytest_suite.unreported_end(Result(argv=("python",), returncode=returncode, output="", seconds=1.0,
                                              timed_out=timed_out)) == ended
