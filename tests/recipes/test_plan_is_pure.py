"""recipes/cmake.plan() is the build as data: given what prepare() made and the machine's facts already found, it
writes nothing, fetches nothing and runs nothing (the unit tier's no-spawn fixture fails any process)."""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.guest.cpython import TargetPython
from crosslane.guest.sysroot import Sysroot
from crosslane.host.toolchains import Compiler
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake
from crosslane.sources.worktree import Prepared
from crosslane_helpers import REPO

SYSROOT = Path("/nonexistent/sysroots/riscv64-forky")


class FactsFound(Context):
    """A context whose compiler, sysroot, target CPython and qemu are already known: what prepare() leaves."""

    def compiler(self, component: str, arch: Arch) -> Compiler:
        return Compiler(toolchain="clang", family="clang", arch=arch, cc=("/usr/bin/clang-19",),
                        cxx=("/usr/bin/clang++-19",), version="19.1.7", target_flags=("--target=riscv64-linux-gnu",),
                        linker_flags=("-fuse-ld=lld-19",))

    def sysroot(self, arch: Arch) -> Sysroot:
        return Sysroot(arch, SYSROOT, "sysroot-key")

    def target_python(self, arch: Arch, version: str | None = None) -> TargetPython:
        return TargetPython(version="3.13", include=SYSROOT / "usr/include/python3.13",
                            pyconfig=SYSROOT / "usr/include/riscv64-linux-gnu/python3.13/pyconfig.h",
                            ext_suffix=".cpython-313-riscv64-linux-gnu.so", interpreter=SYSROOT / "usr/bin/python3.13")

    def qemu(self, arch: Arch) -> str:
        return "/usr/bin/qemu-riscv64-static"


def listing(root: Path) -> list[str]:
    return sorted(str(Path(folder, name)) for folder, dirs, files in os.walk(root) for name in dirs + files)


def test_plan_reads_what_prepare_made_and_touches_nothing(cfg: Config, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    ctx = FactsFound(cfg, Runner(Log(io.StringIO())))
    canary = cfg.components["canary"]
    source = Prepared(path=REPO / "components/canary", source_id="tree:canary", rows=(), patch_inputs=())
    staged = cmake.Staged(source=source,
                          fetchcontent=(["-DFETCHCONTENT_FULLY_DISCONNECTED=ON"], [], {}), hostenvs={},
                          epoch=1_700_000_000)
    before = listing(tmp_path)
    planned = cmake.plan(ctx, canary, Arch.RISCV64, staged)
    assert listing(tmp_path) == before == []
    assert planned.env["SOURCE_DATE_EPOCH"] == "1700000000" and planned.stamp_inputs["source"] == "tree:canary"
    assert "set(CMAKE_SYSROOT" in planned.toolchain_text and str(SYSROOT) in planned.toolchain_text
    assert planned.configure[planned.configure.index("-S") + 1] == str(REPO / "components/canary")
    assert "-DFETCHCONTENT_FULLY_DISCONNECTED=ON" in planned.configure
    assert cmake.plan(ctx, canary, Arch.RISCV64, staged).stamp_key == planned.stamp_key  # data: the same again


def test_a_build_plan_is_made_by_keyword_only(cfg: Config) -> None:
    fields = [f.name for f in dataclasses.fields(cmake.BuildPlan)]
    assert fields[:3] == ["component", "arch", "source"]
    with pytest.raises(TypeError):
        cmake.BuildPlan(cfg.components["canary"], Arch.RISCV64, Path("src"))  # type: ignore[call-arg]
