"""Host tools a project builds in an ExternalProject sub-build (ExecuTorch's flatc, flatcc) go through ccache:
the sub-build drops the toolchain file, so only CMake's environment defaults (host_launchers) reach it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.config import Config
from crosslane.context import Context
from crosslane.host import buildtools
from crosslane.log import Log
from crosslane.recipes import cmake
from crosslane.runner import Runner

pytestmark = pytest.mark.spawns

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(outer C)
include(ExternalProject)
ExternalProject_Add(hosttool SOURCE_DIR ${CMAKE_SOURCE_DIR}/tool CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=
                    INSTALL_COMMAND "")
"""
TOOL = """cmake_minimum_required(VERSION 3.20)
project(tool C)
add_executable(hosttool_bin hosttool_main.c)
"""


def test_an_external_project_host_tool_is_compiled_through_ccache(cfg: Config, tmp_path: Path) -> None:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    launchers = cmake.host_launchers(ctx)
    if not launchers:
        pytest.skip("ccache is not installed (invoke setup installs it)")
    tools = buildtools.ensure(ctx.runner, cfg.tools)
    (tmp_path / "src" / "tool").mkdir(parents=True)
    (tmp_path / "src" / "CMakeLists.txt").write_text(PROJECT)
    (tmp_path / "src" / "tool" / "CMakeLists.txt").write_text(TOOL)
    (tmp_path / "src" / "tool" / "hosttool_main.c").write_text("int main(void) { return 0; }\n")
    stats = tmp_path / "ccache-stats.log"
    env = {**launchers, "CCACHE_STATSLOG": str(stats), "CCACHE_DIR": str(tmp_path / "ccache")}
    build = tmp_path / "build"
    ctx.runner.run([tools.cmake, "-S", tmp_path / "src", "-B", build, "-G", "Ninja",
                    f"-DCMAKE_MAKE_PROGRAM={tools.ninja}"], env=env, quiet=True)
    ctx.runner.run([tools.cmake, "--build", build], env=env, quiet=True)
    assert stats.is_file() and "hosttool_main.c" in stats.read_text()
