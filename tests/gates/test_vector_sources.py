"""gates/vector_sources.py on a real CMake/Ninja cross build (clang-19): a library of a scalar file and a kernel
compiled for V passes when the kernel is the declared vector source, and fails naming the file when vector code
shows up anywhere else, when the declared kernel holds none, or when the library that ships holds none."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.gates import vector_sources
from crosslane.report import Verdict

pytestmark = [pytest.mark.cross, pytest.mark.spawns]

LOOP = "void {name}(int *restrict a, const int *restrict b, int n) {{ for (int i = 0; i < n; i++) a[i] += b[i]; }}\n"
PROJECT = """cmake_minimum_required(VERSION 3.20)
project(kernels C)
add_library(kernels SHARED lib/scalar.c lib/rv/kernel_rvv.c)
set_source_files_properties(lib/rv/kernel_rvv.c PROPERTIES COMPILE_FLAGS "-march=rv64gcv")
"""


def build(tmp_path: Path, scalar_march: str = "rv64gc", kernel_march: str = "rv64gcv") -> tuple[Path, Path]:
    """(source tree, build tree) of a two-file library cross-built for riscv64 without a sysroot."""
    clang, cmake, ninja = shutil.which("clang-19"), shutil.which("cmake"), shutil.which("ninja")
    if clang is None or cmake is None or ninja is None:
        pytest.skip("clang-19, cmake and ninja are installed by invoke setup")
    source, build_dir = tmp_path / "my src", tmp_path / "build"  # a space: ninja escapes it in build.ninja
    (source / "lib/rv").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(PROJECT.replace("rv64gcv", kernel_march))
    (source / "lib/scalar.c").write_text(LOOP.format(name="scalar_add"))
    (source / "lib/rv/kernel_rvv.c").write_text(LOOP.format(name="kernel_add"))
    flags = f"-march={scalar_march} -O3"
    subprocess.run([cmake, "-S", str(source), "-B", str(build_dir), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}",
                    "-DCMAKE_SYSTEM_NAME=Linux", "-DCMAKE_SYSTEM_PROCESSOR=riscv64", f"-DCMAKE_C_COMPILER={clang}",
                    "-DCMAKE_C_COMPILER_TARGET=riscv64-linux-gnu", f"-DCMAKE_C_FLAGS={flags}",
                    "-DCMAKE_SHARED_LINKER_FLAGS=-nostdlib -fuse-ld=lld", "-DCMAKE_C_COMPILER_WORKS=ON"],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([cmake, "--build", str(build_dir)], check=True, capture_output=True, timeout=120)
    return source, build_dir


def library(build_dir: Path) -> list[Path]:
    return [build_dir / "libkernels.so"]


def test_vector_code_only_in_the_declared_kernel_passes(tmp_path: Path) -> None:
    source, build_dir = build(tmp_path)
    found = vector_sources.objects(build_dir, source)
    assert {o.source for o in found} == {"lib/scalar.c", "lib/rv/kernel_rvv.c"}
    assert [o.instructions for o in found if o.source == "lib/scalar.c"] == [0]
    [row] = vector_sources.rows("k", Arch.RISCV64, build_dir, source, library(build_dir), ["lib/rv/*_rvv.c"])
    assert row.verdict is Verdict.PASS, row
    assert "in 1 of 2 objects, all from lib/rv/*_rvv.c" in row.reason and "in the installed libraries" in row.reason


def test_vector_code_in_an_undeclared_file_fails_naming_it(tmp_path: Path) -> None:
    source, build_dir = build(tmp_path, scalar_march="rv64gcv")
    [row] = vector_sources.rows("k", Arch.RISCV64, build_dir, source, library(build_dir), ["lib/rv/*_rvv.c"])
    assert row.verdict is Verdict.FAIL and "outside the declared vector sources" in row.reason, row
    assert "lib/scalar.c (" in row.reason


def test_a_declared_kernel_without_vector_code_fails(tmp_path: Path) -> None:
    source, build_dir = build(tmp_path, kernel_march="rv64gc")
    [row] = vector_sources.rows("k", Arch.RISCV64, build_dir, source, library(build_dir), ["lib/rv/*_rvv.c"])
    assert row.verdict is Verdict.FAIL and "lib/rv/*_rvv.c hold no vector instruction" in row.reason, row


def test_vector_objects_that_reach_no_installed_file_fail(tmp_path: Path) -> None:
    source, build_dir = build(tmp_path)
    scalar_only = tmp_path / "installed.o"
    shutil.copy(build_dir / "CMakeFiles/kernels.dir/lib/scalar.c.o", scalar_only)
    [row] = vector_sources.rows("k", Arch.RISCV64, build_dir, source, [scalar_only], ["lib/rv/*_rvv.c"])
    assert row.verdict is Verdict.FAIL and "no vector instruction shipped" in row.reason, row


def test_a_build_tree_without_build_ninja_is_no_evidence(tmp_path: Path) -> None:
    [row] = vector_sources.rows("k", Arch.RISCV64, tmp_path, tmp_path, [], ["*"])
    assert row.verdict is Verdict.FAIL and "no build.ninja" in row.reason


@pytest.mark.parametrize(("line", "expected"), [
    ("build CMakeFiles/a.dir/x.c.o: C_COMPILER__a_Release /s/x.c || cmake_object_order_depends_target_a",
     ("CMakeFiles/a.dir/x.c.o", "/s/x.c")),
    ("build CMakeFiles/a.dir/my$ src/x.cpp.o: CXX_COMPILER__a_unscanned_Release /my$ src/x.cpp",
     ("CMakeFiles/a.dir/my src/x.cpp.o", "/my src/x.cpp")),
    ("build liba.so: C_SHARED_LIBRARY_LINKER__a_Release CMakeFiles/a.dir/x.c.o", None),
], ids=["plain", "escaped-space", "link-edge"])
def test_compile_edges_are_read_from_build_ninja(line: str, expected: tuple[str, str] | None) -> None:
    assert list(vector_sources.compile_edges(line)) == ([expected] if expected else [])
