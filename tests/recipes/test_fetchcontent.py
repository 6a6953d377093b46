"""Hermetic CMake: every FetchContent dependency pinned, and a C++ cross build that a second ninja run finds done."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake, cmake_toolchain
from crosslane_helpers import cmake_binary

CACHE = """\
// Directory under which to collect all populated content
FETCHCONTENT_BASE_DIR:PATH=/b/_deps
// for given
FETCHCONTENT_SOURCE_DIR_GIVEN:PATH=/src/given
// for Forgotten_Dep
FETCHCONTENT_SOURCE_DIR_FORGOTTEN_DEP:PATH=
FETCHCONTENT_SOURCE_DIR_NO_COMMENT:PATH=
"""


def test_unpinned_names_come_from_the_cache() -> None:
    assert cmake.unpinned_fetchcontent(CACHE) == ["Forgotten_Dep", "no_comment"]
    assert cmake.unpinned_fetchcontent("FETCHCONTENT_FULLY_DISCONNECTED:BOOL=ON\n") == []


PROJECT = """\
cmake_minimum_required(VERSION 3.24)
project(t NONE)
include(FetchContent)
FetchContent_Declare(given URL https://example.invalid/given.zip)
FetchContent_Declare(Forgotten_Dep URL https://example.invalid/forgotten.zip)
FetchContent_MakeAvailable(given Forgotten_Dep)
"""


@pytest.mark.spawns
def test_real_cmake_configures_on_and_the_check_catches_it(cfg: Config, tmp_path: Path) -> None:
    """The trap itself: fully disconnected, CMake configures fine without the forgotten dependency."""
    (tmp_path / "CMakeLists.txt").write_text(PROJECT)
    (tmp_path / "given").mkdir()
    done = subprocess.run([cmake_binary(cfg), "-S", str(tmp_path), "-B", str(tmp_path / "b"),
                           "-DFETCHCONTENT_FULLY_DISCONNECTED=ON",
                           f"-DFETCHCONTENT_SOURCE_DIR_GIVEN={tmp_path / 'given'}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert cmake.unpinned_fetchcontent((tmp_path / "b/CMakeCache.txt").read_text()) == ["Forgotten_Dep"]


CXX_PROJECT = """\
cmake_minimum_required(VERSION 3.20)
project(t CXX)
add_library(t SHARED t.cpp)
"""
CXX_SOURCE = """\
#include <string>
#include <vector>
#include <memory>
std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += part;
  return out;
}
"""


@pytest.mark.cross
@pytest.mark.network
def test_second_ninja_run_has_no_work(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path) -> None:
    """Depfiles must name headers that exist: with clang's default GCC detection in a merged-usr sysroot they
    named <sysroot>/lib/gcc/…/../../../../include/c++/…, which ninja folds to a missing path, so every
    C++ object was rebuilt on every run (--gcc-install-dir in the toolchain file fixes it)."""
    arch = Arch.RISCV64
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    compiler = ctx.compiler("onnxruntime-genai", arch)
    toolchain = cmake_toolchain.write(tmp_path / "toolchain.cmake",
                                      cmake_toolchain.render(compiler, sysroots[arch], []))
    (tmp_path / "src").mkdir()
    (tmp_path / "src/CMakeLists.txt").write_text(CXX_PROJECT)
    (tmp_path / "src/t.cpp").write_text(CXX_SOURCE)
    tools = ctx.tools()
    build = tmp_path / "b"
    subprocess.run([str(tools.cmake), "-S", str(tmp_path / "src"), "-B", str(build), "-G", "Ninja",
                    f"-DCMAKE_MAKE_PROGRAM={tools.ninja}", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"],
                   check=True, capture_output=True, timeout=300)
    first = subprocess.run([str(tools.ninja), "-C", str(build)], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0 and "Linking CXX shared library" in first.stdout, first.stdout
    second = subprocess.run([str(tools.ninja), "-C", str(build), "-d", "explain"], capture_output=True, text=True,
                            timeout=300)
    assert "ninja: no work to do." in second.stdout, second.stdout + second.stderr
