"""Host tools a project builds in an ExternalProject sub-build (ExecuTorch's flatc, flatcc) go through ccache:
the sub-build drops the toolchain file, so only CMake's environment defaults (cmake.host_launchers) reach it.
A real riscv64 build through the cmake recipe, whose ccache statistics must name the host tool's source."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from types import MappingProxyType

import pytest

from crosslane.archs import Arch
from crosslane.config import Config, TreeSource
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import pipeline

pytestmark = [pytest.mark.cross, pytest.mark.network]

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(outer C)
include(ExternalProject)
ExternalProject_Add(hosttool SOURCE_DIR ${CMAKE_SOURCE_DIR}/tool CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=
                    INSTALL_COMMAND "")
add_library(outer SHARED outer.c)
install(TARGETS outer)
"""
TOOL = """cmake_minimum_required(VERSION 3.20)
project(tool C)
add_executable(hosttool_bin hosttool_main.c)
"""


def test_an_external_project_host_tool_is_compiled_through_ccache(cfg: Config, sysroots: dict[Arch, Path],
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    if ctx.runner.find("ccache") is None:
        pytest.skip("ccache is not installed (invoke setup installs it)")
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    source = tmp_path / "outer"
    (source / "tool").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(PROJECT)
    (source / "outer.c").write_text("int outer(void) { return 1; }\n")
    (source / "tool" / "CMakeLists.txt").write_text(TOOL)
    (source / "tool" / "hosttool_main.c").write_text("int main(void) { return 0; }\n")
    component = dataclasses.replace(cfg.components["canary"], sources=(TreeSource(path=source),), cmake_args=(),
                                    smoke=None)
    cfg = dataclasses.replace(cfg, components=MappingProxyType({**cfg.components, "canary": component}))
    rows = pipeline.build_components(Context(cfg, Runner(Log(io.StringIO()))), Arch.RISCV64, ["canary"])
    assert [r.verdict for r in rows if r.label == "build"] == [Verdict.PASS], rows
    stats = tmp_path / "build" / "riscv64" / "canary" / "ccache-stats.log"
    assert "hosttool_main.c" in stats.read_text() and "outer.c" in stats.read_text()
