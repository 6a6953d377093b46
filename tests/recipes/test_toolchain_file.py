"""The CMake toolchain file an arch's compiler gets (recipes/cmake_toolchain.py), and that writing the same text
again leaves the file alone."""

from __future__ import annotations

from pathlib import Path

from crosslane.archs import Arch
from crosslane.host.toolchains import Compiler
from crosslane.recipes import cmake_toolchain


def test_toolchain_file_clang_and_gcc(tmp_path: Path) -> None:
    clang = Compiler("clang", "clang", Arch.RISCV64, ("/usr/bin/clang-19",), ("/usr/bin/clang++-19",), "19.1.7",
                     ("--target=riscv64-linux-gnu",), ("-fuse-ld=/usr/bin/ld.lld-19",))
    text = cmake_toolchain.render(clang, Path("/sr"), ["/usr/bin/qemu-riscv64-static", "-L", "/sr", "-cpu", "rv64"])
    assert "set(CMAKE_SYSTEM_PROCESSOR riscv64)" in text
    assert 'set(CMAKE_SYSROOT "/sr")' in text
    assert "set(CMAKE_C_COMPILER_TARGET riscv64-linux-gnu)" in text
    assert 'set(CMAKE_CROSSCOMPILING_EMULATOR "/usr/bin/qemu-riscv64-static;-L;/sr;-cpu;rv64")' in text
    assert "CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER" in text
    gcc = Compiler("gcc", "gcc", Arch.ARM64, ("/usr/bin/aarch64-linux-gnu-gcc",),
                   ("/usr/bin/aarch64-linux-gnu-g++",), "12.2.0", (), ())
    text = cmake_toolchain.render(gcc, Path("/sr"), ["q"], "/usr/bin/ccache")
    assert "COMPILER_TARGET" not in text and "aarch64-linux-gnu-gcc" in text
    assert 'set(CMAKE_C_COMPILER_LAUNCHER "/usr/bin/ccache")' in text
    path = tmp_path / "t.cmake"
    cmake_toolchain.write(path, text)
    mtime = path.stat().st_mtime_ns
    cmake_toolchain.write(path, text)
    assert path.stat().st_mtime_ns == mtime
