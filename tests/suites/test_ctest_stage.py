"""The ctest kind end to end: a small C project with its own tests, cross-built with the real clang against the
real riscv64 sysroot, run by ctest under real qemu-user on two profiles. A kernel broken on purpose (FLIP) turns
the row FAIL naming its test; a test that needs V fails only on the profile without it (the wrapper's -cpu is the
profile's); an exemption whose test passes again is reported; every case lands in the build report."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Component, Config, SuiteSpec, TreeSource
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.reports import build as buildreport
from crosslane.run import plan
from crosslane.suites import stage

pytestmark = [pytest.mark.cross, pytest.mark.qemu, pytest.mark.network]

PROJECT = """\
cmake_minimum_required(VERSION 3.20)
project(kernels C)
option(FLIP "a kernel broken on purpose" OFF)
add_library(kernel STATIC kernel.c)
if(FLIP)
  target_compile_definitions(kernel PRIVATE FLIP=1)
endif()
enable_testing()
foreach(name add hwcap)
  add_executable(${name}-test ${name}_test.c)
  target_link_libraries(${name}-test kernel)
  add_test(NAME ${name}-test COMMAND ${name}-test)
endforeach()
"""
KERNEL = """int add(int a, int b) {
#ifdef FLIP
  return a + b + 1;
#else
  return a + b;
#endif
}
"""
ADD_TEST = ('#include <stdio.h>\nint add(int, int);\nint main(void) { int r = add(2, 3); printf("%d\\n", r); '
            "return r == 5 ? 0 : 1; }\n")
# RISC-V's V bit in AT_HWCAP ('V' - 'A'): set exactly when qemu's -cpu has v=true.
HWCAP_TEST = "#include <sys/auxv.h>\nint main(void) { return (getauxval(AT_HWCAP) >> ('V' - 'A')) & 1 ? 0 : 1; }\n"


def config_for(cfg: Config, tmp_path: Path, spec: SuiteSpec) -> Config:
    source = tmp_path / "components" / "kernels"
    source.mkdir(parents=True, exist_ok=True)
    for name, text in (("CMakeLists.txt", PROJECT), ("kernel.c", KERNEL), ("add_test.c", ADD_TEST),
                       ("hwcap_test.c", HWCAP_TEST)):
        (source / name).write_text(text)
    component = Component(name="kernels", sources=(TreeSource(path=source),), arches=(Arch.RISCV64,), depends=(),
                          recipe="cmake", source_subdir="", cmake_args=(), arch_cmake_args={}, toolchain={},
                          smoke=None, patches=(), tests=spec)
    return dataclasses.replace(cfg, components={"kernels": component})


def run(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        spec: SuiteSpec) -> tuple[Context, list[Row]]:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    config = config_for(cfg, tmp_path, spec)
    ctx = Context(config, Runner(Log(io.StringIO())))
    profiles = [p for p in plan.profiles_for(config, Arch.RISCV64) if p.name in ("novector", "rvv128")]
    return ctx, list(stage.run(ctx, Arch.RISCV64, ["kernels"], profiles))


def test_cases_per_profile_and_a_broken_kernel(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    spec = SuiteSpec(kind="ctest", timeout=60, control=False)
    ctx, rows = run(cfg, sysroots, tmp_path, monkeypatch, spec)
    by_profile = {r.profile: r for r in rows if r.check is Check.TESTS and r.profile}
    assert by_profile["rvv128"].verdict is Verdict.PASS, by_profile["rvv128"].reason
    assert by_profile["rvv128"].reason == "2 cases: 2 passed"
    novector = by_profile["novector"]
    assert novector.verdict is Verdict.FAIL and "1 of 2 failed: hwcap-test" in novector.reason
    recorded = json.loads(stage.cases_path(ctx, Arch.RISCV64, "kernels", "rvv128").read_text())
    assert {c["id"]: c["outcome"] for c in recorded["cases"]} == {"add-test": "passed", "hwcap-test": "passed"}
    facts = buildreport.build(ctx, [Arch.RISCV64], {Arch.RISCV64: ("kernels",)}, rows)
    suites = facts["tests"]
    assert isinstance(suites, list) and {s["profile"] for s in suites} == {"novector", "rvv128"}

    broken = dataclasses.replace(spec, cmake_args=("-DFLIP=ON",), profiles=("rvv128",),
                                 exempt={Arch.RISCV64: {"hwcap-test": "needs V, which this profile set lacks"}})
    _, rows = run(cfg, sysroots, tmp_path, monkeypatch, broken)
    [row] = [r for r in rows if r.check is Check.TESTS and r.profile]
    assert row.verdict is Verdict.FAIL and "1 of 2 failed: add-test" in row.reason

    stale = dataclasses.replace(broken, cmake_args=())
    _, rows = run(cfg, sysroots, tmp_path, monkeypatch, stale)
    [row] = [r for r in rows if r.check is Check.TESTS and r.profile]
    assert row.verdict is Verdict.FAIL and "exemption no longer holds: 'hwcap-test'" in row.reason


def test_a_suite_runs_under_its_tool_roots_qemu(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """arches.<arch>.emulator: the wrapper runs the tool root's qemu-user (here one that logs each program, then runs
    the host's), not the host's; a tool root without one is a one-line error naming the fix."""
    import shutil

    from crosslane.config import ToolRootSpec
    from crosslane.errors import MissingPrerequisite
    from crosslane.host import toolroot

    root = tmp_path / "toolroot"
    (root / toolroot.MANIFEST).parent.mkdir(parents=True)
    (root / toolroot.MANIFEST).write_text('{"packages": {}}')
    monkeypatch.setattr(toolroot, "root_path", lambda spec: root)
    spec_root = ToolRootSpec(name="qemu-new", suite="forky", mirror="http://deb.debian.org/debian",
                             packages=("qemu-user",), architectures=("amd64",))
    cfg = dataclasses.replace(cfg, toolroots={"qemu-new": spec_root}, arches={
        **cfg.arches, Arch.RISCV64: dataclasses.replace(cfg.arches[Arch.RISCV64], emulator="qemu-new")})
    spec = SuiteSpec(kind="ctest", timeout=60, control=False, profiles=("rvv128",))
    with pytest.raises(MissingPrerequisite, match=r"tool root qemu-new has no usr/bin/qemu-riscv64"):
        run(cfg, sysroots, tmp_path, monkeypatch, spec)
    calls = tmp_path / "calls.log"
    host_qemu = shutil.which("qemu-riscv64-static")
    assert host_qemu
    qemu = root / "usr/bin/qemu-riscv64"
    qemu.parent.mkdir(parents=True)
    qemu.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {host_qemu} "$@"\n')
    qemu.chmod(0o755)
    _, rows = run(cfg, sysroots, tmp_path, monkeypatch, spec)
    [row] = [r for r in rows if r.check is Check.TESTS and r.profile]
    assert row.verdict is Verdict.PASS and row.reason == "2 cases: 2 passed", row.reason
    assert {line.split()[-1].rsplit("/", 1)[-1] for line in calls.read_text().splitlines()} >= {"add-test",
                                                                                              "hwcap-test"}
