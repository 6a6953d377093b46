"""The generated toolchain file cross-assembles: a CMake project with an aarch64 assembly source (as XNNPACK's
kernels are) built with clang for arm64 against the real sysroot. Without CMAKE_ASM_COMPILER_TARGET clang
assembled for the host and failed on the first aarch64 directive (measured on XNNPACK)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.context import Context
from crosslane.gates import elf
from crosslane.host import buildtools
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake_toolchain

pytestmark = pytest.mark.cross

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(asm_probe C ASM)
add_library(kernel SHARED kernel.S caller.c)
"""
KERNEL = """        .text
        .globl  probe_kernel
        .type   probe_kernel, %function
probe_kernel:
        fmla    v0.8h, v1.8h, v2.8h
        ret
"""


def test_clang_assembles_for_the_target(cfg: Config, sysroots: dict[Arch, Path], tmp_path: Path) -> None:
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    tools = buildtools.ensure(ctx.runner, cfg.tools)
    compiler = ctx.compiler("executorch-xnnpack", Arch.ARM64)
    assert compiler.family == "clang"
    source = tmp_path / "src"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(PROJECT)
    (source / "kernel.S").write_text(KERNEL)
    (source / "caller.c").write_text("void probe_kernel(void);\nvoid call(void) { probe_kernel(); }\n")
    toolchain = cmake_toolchain.write(tmp_path / "clang.cmake",
                                      cmake_toolchain.render(compiler, sysroots[Arch.ARM64], ["/bin/false"]))
    build = tmp_path / "build"
    ctx.runner.run([tools.cmake, "-S", source, "-B", build, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tools.ninja}",
                    f"-DCMAKE_TOOLCHAIN_FILE={toolchain}", "-DCMAKE_ASM_FLAGS=-march=armv8.2-a+fp16"], quiet=True)
    ctx.runner.run([tools.cmake, "--build", build], quiet=True)
    found = elf.read(build / "libkernel.so")
    assert isinstance(found, elf.ElfInfo) and found.machine_name == "AArch64", found
