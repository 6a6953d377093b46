"""A failed case says why: its row carries the last lines of its output, not only ctest's label ("Failed",
"SEGFAULT"), and qemu's own crash is told apart from the program's.

Real ctest writes the JUnit file; the programs are real riscv64 ELF files run bare by /bin/sh, or under the real
qemu-user with the real sysroot (a library the loader cannot find, a guest segfault). qemu 7.2's own assertion
cannot be provoked on purpose: a script named like qemu prints it, word for word, and aborts. (qemu 11 prints nothing
of a guest's signal; 7.2's "qemu: uncaught target signal" line is in tests/suites/test_suite_results.py.)
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.suites import junit, verdict
from crosslane.suites.junit import Case, Outcome

pytestmark = [pytest.mark.cross, pytest.mark.qemu, pytest.mark.spawns]

PROJECT = """\
cmake_minimum_required(VERSION 3.20)
project(reasons NONE)
enable_testing()
add_test(NAME bare COMMAND sh ${RV_OK})
add_test(NAME missing-lib COMMAND ${QEMU} -L ${SYSROOT} ${RV_NEEDS_LIB})
add_test(NAME guest-segv COMMAND ${QEMU} -L ${SYSROOT} ${RV_SEGV})
add_test(NAME qemu-assert COMMAND ${FAKE_QEMU})
add_test(NAME passes COMMAND ${QEMU} -L ${SYSROOT} ${RV_OK})
"""
OK_C = '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n'
SEGV_C = '#include <stdio.h>\nint main(void) { puts("reading"); fflush(stdout); return *(volatile int *)0; }\n'
NEEDS_C = "int proj(void);\nint main(void) { return proj(); }\n"
LIB_C = "int proj(void) { return 0; }\n"
QEMU_ASSERT = """#!/bin/sh
echo "loading the model"
echo "qemu-riscv64: ../../target/riscv/translate.c:1153: decode_save_opc: Assertion \\`ctx->insn_start != NULL' \
failed." >&2
kill -ABRT $$
"""


def no_data(case: Case) -> str | None:
    return None


def riscv(runner: Runner, tmp_path: Path, name: str, source: str, *flags: str | Path) -> Path:
    (tmp_path / f"{name}.c").write_text(source)
    runner.run(["riscv64-linux-gnu-gcc", "-O1", "-o", tmp_path / name, tmp_path / f"{name}.c", *flags], quiet=True)
    return tmp_path / name


@pytest.fixture(scope="module")
def ctest_cases(cfg: Config, sysroots: dict[Arch, Path], tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    tmp_path = tmp_path_factory.mktemp("reasons")
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    runner = ctx.runner
    lib = riscv(runner, tmp_path, "libproj.so.1", LIB_C, "-shared", "-fPIC", "-Wl,-soname,libproj.so.1")
    fake = tmp_path / "qemu-riscv64"
    fake.write_text(QEMU_ASSERT)
    fake.chmod(0o755)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(PROJECT)
    cmake = ctx.tools().cmake
    runner.run([cmake, "-S", tmp_path / "src", "-B", tmp_path / "build", f"-DQEMU={ctx.qemu(Arch.RISCV64)}",
                f"-DSYSROOT={sysroots[Arch.RISCV64]}", f"-DRV_OK={riscv(runner, tmp_path, 'ok', OK_C)}",
                f"-DRV_SEGV={riscv(runner, tmp_path, 'segv', SEGV_C)}",
                f"-DRV_NEEDS_LIB={riscv(runner, tmp_path, 'needs-lib', NEEDS_C, lib)}", f"-DFAKE_QEMU={fake}"],
               quiet=True)
    out = tmp_path / "ctest.xml"
    runner.run([cmake.with_name("ctest"), "--test-dir", tmp_path / "build", "--output-junit", out,
                "--output-on-failure", "--timeout", "60"], check=False, quiet=True, timeout=300)
    return junit.read(out, ctest=True)


def test_each_failed_case_carries_the_end_of_its_output(ctest_cases: list[Case]) -> None:
    by_id = {c.id: c for c in ctest_cases}
    assert by_id["passes"].outcome is Outcome.PASSED and by_id["passes"].output == ""
    bare = by_id["bare"]
    assert bare.outcome is Outcome.FAILED and bare.message == "Failed"
    # dash reads the ELF file as a script: a line of its bytes, then the error, whole (the bytes' line does not fit)
    assert bare.output.endswith('/ok: 4: Syntax error: "(" unexpected') and "NON-XML-CHAR" not in bare.output, bare
    missing = by_id["missing-lib"]
    assert "libproj.so.1: cannot open shared object file" in missing.output, missing
    assert missing.why.startswith("Failed: ") and not missing.emulator_crash


def test_qemus_own_crash_is_told_apart_from_the_guests(ctest_cases: list[Case]) -> None:
    by_id = {c.id: c for c in ctest_cases}
    segv = by_id["guest-segv"]
    assert (segv.message, segv.output, segv.emulator_crash) == ("SEGFAULT", "reading", False), segv
    crash = by_id["qemu-assert"]
    assert crash.emulator_crash, crash
    assert crash.output == ("emulator crash (qemu's own, not the program's): qemu-riscv64: "
                            "../../target/riscv/translate.c:1153: decode_save_opc: Assertion "
                            "`ctx->insn_start != NULL' failed."), crash.output


def test_the_row_names_each_failure_with_its_reason(ctest_cases: list[Case]) -> None:
    row = verdict.row("demo", Arch.RISCV64, "rvv128", verdict.judge(ctest_cases, {}, no_data))
    assert row.verdict is Verdict.FAIL
    assert row.reason.startswith("4 of 5 failed (1 of them qemu's own crash, not the program's): bare (Failed: "), \
        row.reason
    for words in ('Syntax error: "(" unexpected', "libproj.so.1: cannot open shared object file",
                  "guest-segv (SEGFAULT: reading)", "decode_save_opc: Assertion"):
        assert words in row.reason, (words, row.reason)
    assert ctest_cases[1].to_dict()["output"] == ctest_cases[1].output  # the build report keeps it too
