"""Compilers per (toolchain, arch): where they are, their version, and what they can build.

Whether a compiler can build RVV intrinsics is decided by compiling a probe, never by reading a
version string.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.config import Toolchain
from crosslane.errors import MissingPrerequisite
from crosslane.host import probecache
from crosslane.runner import Runner

RVV_PROBE = """\
#include <riscv_vector.h>
float probe(const float *a, const float *b, unsigned long n) {
    size_t vl = __riscv_vsetvl_e32m1(n);
    vfloat32m1_t va = __riscv_vle32_v_f32m1(a, vl);
    vfloat32m1_t vb = __riscv_vle32_v_f32m1(b, vl);
    vfloat32m1_t acc = __riscv_vfmul_vv_f32m1(va, vb, vl);
    vfloat32m1_t zero = __riscv_vfmv_v_f_f32m1(0.0f, vl);
    return __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredosum_vs_f32m1_f32m1(acc, zero, vl));
}
"""


@dataclass(frozen=True)
class Compiler:
    """A cross compiler found on the host: its toolchain, family, arch, argv and version."""

    toolchain: str
    family: str
    arch: Arch
    cc: tuple[str, ...]
    cxx: tuple[str, ...]
    version: str
    # Flags every compile and link for this arch needs (e.g. clang's --target).
    target_flags: tuple[str, ...]
    linker_flags: tuple[str, ...]

    @property
    def identity(self) -> str:
        return f"{self.family} {self.version} {' '.join(self.cc)}"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


def _setup_fix(arch: Arch) -> str:
    return f"invoke setup --arch {arch}"


def _version(runner: Runner, cc: str, flag: str) -> str:
    output = probecache.version_output(runner, [cc, flag])
    if output is None:
        raise MissingPrerequisite(f"{cc} {flag} failed: the compiler does not run",
                                  fix="reinstall it (invoke setup)")
    return output.strip()


def detect(runner: Runner, toolchain: Toolchain, arch: Arch) -> Compiler:
    triplet = info(arch).triplet
    match toolchain.family:
        case "gcc":
            cc = runner.which(f"{triplet}-gcc", fix=_setup_fix(arch))
            cxx = runner.which(f"{triplet}-g++", fix=_setup_fix(arch))
            version = _version(runner, cc, "-dumpfullversion")
            return Compiler(toolchain.name, "gcc", arch, (cc,), (cxx,), version, (), ())
        case "clang":
            suffix = f"-{toolchain.version}" if toolchain.version else ""
            cc = runner.which(f"clang{suffix}", fix=_setup_fix(arch))
            cxx = runner.which(f"clang++{suffix}", fix=_setup_fix(arch))
            lld = runner.which(f"ld.lld{suffix}", fix=_setup_fix(arch))
            version = _version(runner, cc, "-dumpversion")
            return Compiler(toolchain.name, "clang", arch, (cc,), (cxx,), version, (f"--target={triplet}",),
                            (f"-fuse-ld={lld}",))
        case "zig":
            result = runner.run([sys.executable, "-m", "ziglang", "version"], probe=True, quiet=True, check=False)
            if not result.ok:
                raise MissingPrerequisite("zig (PyPI ziglang) not importable", fix="pip install ziglang")
            zig_target = f"{info(arch).cmake_processor}-linux-gnu"
            base = (sys.executable, "-m", "ziglang")
            return Compiler(toolchain.name, "zig", arch, (*base, "cc"), (*base, "c++"), result.output.strip(),
                            ("-target", zig_target), ())
        case _:
            raise AssertionError(toolchain.family)


def can_compile_rvv(runner: Runner, compiler: Compiler) -> bool:
    """Compile the RVV probe; True only when the compiler produced an object."""
    flags = info(compiler.arch).vector_compile_flags
    if not flags:
        return False
    with tempfile.TemporaryDirectory(prefix="crosslane-rvv-") as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text(RVV_PROBE)
        obj = Path(tmp) / "probe.o"
        result = runner.run([*compiler.cc, *compiler.target_flags, *flags, "-ffreestanding", "-O2", "-c",
                             str(source), "-o", str(obj)], probe=True, quiet=True, check=False, timeout=60)
        return result.ok and obj.is_file()
