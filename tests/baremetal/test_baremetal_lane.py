"""The bare-metal lane's flow, with the minutes-long steps (ExecuTorch builds, qemu runs) stood in for: every
build runs every case on its profiles, a V build also on its trap profiles, a failed runtime build skips its
images, an image that does not link is a FAIL row; and the wrapper scripts a build's toolchain file names."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from crosslane.baremetal import lane
from crosslane.baremetal import run as bm_run
from crosslane.config import BareMetalBuild, Config, ToolRootSpec
from crosslane.context import Context
from crosslane.host import toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import executorch


@pytest.fixture
def setting(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> lane.Setting:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    root = toolroot.ToolRoot(ToolRootSpec(name="t", suite="forky", mirror="http://x", packages=(),
                                          architectures=("amd64",)), tmp_path / "root", "k")
    return lane.Setting(ctx, cfg.baremetal["rv64-elf"], root, "root", tmp_path / "build" / "rv64-elf")


def test_the_wrappers_run_the_roots_tools_in_the_callers_folder(setting: lane.Setting) -> None:
    tools = lane._tools(setting, setting.folder / "scalar")
    gcc = tools["gcc"]
    text = gcc.read_text()
    assert os.access(gcc, os.X_OK) and text.startswith("#!/bin/sh\n")
    assert '--cwd "$PWD"' in text and text.rstrip().endswith('-- riscv64-unknown-elf-gcc "$@"')
    assert str(setting.root.path) in text and f"--bind {setting.ctx.build_root.resolve()}" in text
    before = gcc.stat().st_mtime_ns
    assert lane._tools(setting, setting.folder / "scalar")["gcc"].stat().st_mtime_ns == before  # unchanged text


def built_runtime(s: lane.Setting, build: BareMetalBuild, source: Path, ops: object) -> Row:
    return s.row(build, Check.BUILD, Verdict.PASS, "built")


def linked_image(s: lane.Setting, build: BareMetalBuild, source: Path, runtime: Path,
                 program: executorch.Program) -> Path | Row:
    return s.folder / build.name / "images" / program.case.name / "executorch_runner"


def test_every_build_runs_its_profiles_and_a_v_build_its_traps(setting: lane.Setting,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, str, str]] = []

    def run(s: lane.Setting, build: BareMetalBuild, profile: str, elf: Path, case: str, *,
            expect_trap: bool = False) -> Row:
        ran.append((build.name, case, profile))
        assert expect_trap == (build.name == "rvv" and profile == "novector")  # only the V build's trap profiles
        if expect_trap:
            trapped = bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x80000000 mtval=0x0\n", returncode=130,
                                 seconds=0.1,
                                 nonce="n1")
            row = s.row(build, Check.SMOKE, Verdict.FAIL, "trap: illegal instruction (mcause 2) at pc 0x80000000",
                        subject=case, profile=profile)
            return lane.expected_trap(row, trapped)
        return s.row(build, Check.SMOKE, Verdict.PASS, "Test_result: PASS", subject=case, profile=profile)

    stand_in(monkeypatch, setting, built_runtime, linked_image, run)
    rows = lane.run_target(setting.ctx, "rv64-elf", ["add"])
    assert ("scalar", "add-portable", "novector") in ran and ("rvv", "add-portable", "novector") in ran
    assert [r.verdict for r in rows] == [Verdict.PASS] * len(rows)
    trap = next(r for r in rows if r.component == "executorch-rvv" and r.profile == "novector")
    assert trap.reason.startswith("expected trap: illegal instruction")
    assert len([r for r in rows if r.check is Check.SMOKE]) == 4 + 3 + 1
    assert [(r.component, r.subject) for r in rows if r.check is Check.ARTIFACT] == [
        ("executorch-scalar", "add-portable"), ("executorch-rvv", "add-portable")]  # each linked image, once


def test_a_failed_runtime_skips_its_images_and_a_failed_link_is_a_row(setting: lane.Setting,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def runtime(s: lane.Setting, build: BareMetalBuild, source: Path, ops: object) -> Row:
        verdict = Verdict.FAIL if build.name == "scalar" else Verdict.PASS
        return s.row(build, Check.BUILD, verdict, "x")

    def image(s: lane.Setting, build: BareMetalBuild, source: Path, runtime: Path,
              program: executorch.Program) -> Path | Row:
        return s.row(build, Check.BUILD, Verdict.FAIL, "does not link", subject=program.case.name)

    def run(*args: object) -> Row:
        raise AssertionError("nothing runs without an image")

    stand_in(monkeypatch, setting, runtime, image, run)
    stale = [setting.folder / "dist" / build / "add-portable" / "executorch_runner" for build in ("scalar", "rvv")]
    for path in stale:  # what an earlier run published
        path.parent.mkdir(parents=True)
        path.write_bytes(b"an image that linked last time")
    rows = lane.run_target(setting.ctx, "rv64-elf", ["add"])
    assert [(r.component, r.verdict.value, r.reason) for r in rows] == [
        ("executorch-scalar", "FAIL", "x"), ("executorch-rvv", "PASS", "x"),
        ("executorch-rvv", "FAIL", "does not link")]
    assert not any(path.exists() for path in stale)  # neither build published this time: nothing stays published


def test_an_exempt_case_is_a_skip_row_with_its_reason(cfg: Config, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    root = toolroot.ToolRoot(ToolRootSpec(name="t", suite="forky", mirror="http://x", packages=(),
                                          architectures=("amd64",)), tmp_path / "root", "k")
    setting = lane.Setting(ctx, cfg.baremetal["rv32-elf"], root, "root", tmp_path / "build" / "rv32-elf")

    def runtime(s: lane.Setting, build: BareMetalBuild, source: Path, ops: object) -> Row:
        return s.row(build, Check.BUILD, Verdict.PASS, "built")

    def image(s: lane.Setting, build: BareMetalBuild, source: Path, runtime: Path,
              program: executorch.Program) -> Path | Row:
        return s.folder / "x.elf"

    def run(s: lane.Setting, build: BareMetalBuild, profile: str, elf: Path, case: str, *,
            expect_trap: bool = False) -> Row:
        assert not (build.name == "rvv" and case.startswith("mv2"))  # exempt: never run
        return s.row(build, Check.SMOKE, Verdict.PASS, "ok", subject=case, profile=profile)

    stand_in(monkeypatch, setting, runtime, image, run)
    rows = lane.run_target(ctx, "rv32-elf", ["add", "mv2"])
    skipped = [r for r in rows if r.verdict is Verdict.SKIP]
    assert [(r.component, r.subject) for r in skipped] == [("executorch-rvv", "mv2-portable")]
    assert skipped[0].reason.startswith("exempt: does not finish within 300 s")


def stand_in(monkeypatch: pytest.MonkeyPatch, setting: lane.Setting, runtime: object, image: object,
             run: object) -> None:
    """The lane with its tool root, source copy, exports and op list stood in (each costs minutes or the network)."""
    monkeypatch.setattr(toolroot, "ensure", lambda runner, spec: setting.root)
    monkeypatch.setattr(toolroot, "require_mode", lambda runner: "root")
    monkeypatch.setattr(lane, "writable_source", lambda s: s.folder / "src" / "executorch")
    monkeypatch.setattr(lane, "selected_ops", lambda ctx, programs: ["aten::add.out"])
    monkeypatch.setattr(executorch, "export", lambda ctx, case: executorch.Program(case, Path("/p.bpte"), 0.01,
                                                                                     0.01, 1.0, 0))
    monkeypatch.setattr(lane, "build_runtime", runtime)
    monkeypatch.setattr(lane, "build_image", image)
    monkeypatch.setattr(lane, "run_image", run)
    # the papers of a linked image (tests/baremetal/test_baremetal_papers.py makes real ones)
    monkeypatch.setattr(lane, "published", lambda s, build, program, elf, runtime, source: s.row(
        build, Check.ARTIFACT, Verdict.PASS, "published", subject=program.case.name))


def test_an_image_stays_published_only_when_every_run_passed(setting: lane.Setting,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def run(s: lane.Setting, build: BareMetalBuild, profile: str, elf: Path, case: str, *,
            expect_trap: bool = False) -> Row:
        failed = build.name == "scalar" and profile == "rvv256"
        return s.row(build, Check.SMOKE, Verdict.FAIL if failed else Verdict.PASS, "x", subject=case, profile=profile)

    stand_in(monkeypatch, setting, built_runtime, linked_image, run)

    def publish(s: lane.Setting, build: BareMetalBuild, program: executorch.Program, elf: Path, runtime: Path,
                source: Path) -> Row:
        where = s.folder / "dist" / build.name / program.case.name
        where.mkdir(parents=True)
        (where / "executorch_runner").write_bytes(b"image")
        return s.row(build, Check.ARTIFACT, Verdict.PASS, "published", subject=program.case.name)

    monkeypatch.setattr(lane, "published", publish)
    lane.run_target(setting.ctx, "rv64-elf", ["add"])
    assert not (setting.folder / "dist/scalar/add-portable").exists()  # its rvv256 run failed
    assert (setting.folder / "dist/rvv/add-portable/executorch_runner").is_file()


def test_an_image_whose_papers_cannot_be_made_is_a_fail_row(setting: lane.Setting) -> None:
    build = setting.target.builds[0]
    program = executorch.Program(setting.ctx.config.cases["riscv-ci"].cases()[0], Path("/p.bpte"), 0.01, 0.01, 1.0, 0)
    row = lane.published(setting, build, program, setting.folder / "nowhere" / "executorch_runner",
                         setting.folder / "runtime", setting.folder / "src")
    assert row.verdict is Verdict.FAIL and row.check is Check.ARTIFACT
    assert "wrote no executorch_runner.map" in row.reason
