"""The CMake toolchain file of a bare-metal build: the tool root's riscv64-unknown-elf tools (through wrapper
scripts), one -march/-mabi, picolibc's specs; no OS, so CMake's checks build static libraries."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from crosslane.config import BareMetalBuild, BareMetalTarget

TOOLS = ("gcc", "g++", "ar", "ranlib", "nm", "objcopy", "objdump", "strip", "size")


def _cmake_path(path: Path) -> str:
    return str(path).replace("\\", "/").replace('"', '\\"')


def render_toolchain(target: BareMetalTarget, build: BareMetalBuild, tools: Mapping[str, Path]) -> str:
    flags = f"-march={build.march} -mabi={target.abi} -mcmodel=medany -ffunction-sections -fdata-sections"
    xlen = build.march[2:4]
    lines = [
        f"# {target.name} {build.name}: written by crosslane (baremetal/toolchain.py) from versions.toml",
        "set(CMAKE_SYSTEM_NAME Generic)",
        f"set(CMAKE_SYSTEM_PROCESSOR riscv{xlen})",
        f'set(CMAKE_C_COMPILER "{_cmake_path(tools["gcc"])}")',
        f'set(CMAKE_CXX_COMPILER "{_cmake_path(tools["g++"])}")',
        f'set(CMAKE_ASM_COMPILER "{_cmake_path(tools["gcc"])}")',
        *(f'set(CMAKE_{name.upper()} "{_cmake_path(tools[name])}" CACHE FILEPATH "")'
          for name in ("ar", "ranlib", "nm", "objcopy", "objdump", "strip")),
        f'set(CMAKE_C_FLAGS_INIT "{flags} --specs=picolibc.specs")',
        f'set(CMAKE_CXX_FLAGS_INIT "{flags} --specs=picolibcpp.specs")',
        f'set(CMAKE_ASM_FLAGS_INIT "{flags}")',
        # CMake's own compiler checks link no program: there is no OS to link one against.
        "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)",
        "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)",
    ]
    return "\n".join(lines) + "\n"
