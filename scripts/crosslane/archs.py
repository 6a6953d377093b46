"""The one table of per-architecture facts. No arch if-chains anywhere else."""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


class Arch(enum.StrEnum):
    AMD64 = "amd64"
    ARM64 = "arm64"
    RISCV64 = "riscv64"


@dataclass(frozen=True)
class ArchInfo:
    """One arch's names in each tool's vocabulary: Debian, the GNU triplet, CMake, Rust, wheel tags."""

    arch: Arch
    debian_arch: str
    triplet: str
    cmake_processor: str
    rust_target: str
    wheel_platform: str
    elf_machine: int
    elf_machine_name: str
    elf_class: int
    little_endian: bool
    dynamic_loader: str
    multiarch: str
    qemu_binary: str
    # qemu -cpu property that turns on the vector unit the canary probes for; None: no such probe.
    vector_cpu_property: str | None
    # Flags that make a compiler emit the vector intrinsics (the RVV probe compiles with these).
    vector_compile_flags: tuple[str, ...]
    # One /proc/cpuinfo processor entry describing the guest ({n} is the processor number), shown to programs
    # run under qemu-user instead of the host's (qemu 7.2 passes the x86 host's through for this arch, and
    # pytorch-cpuinfo in PyPI's onnxruntime >= 1.31 then dies of SIGSEGV at import). "": leave the host's.
    guest_cpuinfo: str = ""
    # qemu's -cpu takes each ISA extension as a boolean property named as the ISA string writes it (zfh=true), so a
    # component may state the extensions its code needs (components.<c>.cpu_extensions) for every profile.
    isa_extension_properties: bool = False


ARCHS: Mapping[Arch, ArchInfo] = MappingProxyType({
    Arch.AMD64: ArchInfo(
        arch=Arch.AMD64,
        debian_arch="amd64",
        triplet="x86_64-linux-gnu",
        cmake_processor="x86_64",
        rust_target="x86_64-unknown-linux-gnu",
        wheel_platform="linux_x86_64",
        elf_machine=62,
        elf_machine_name="x86-64",
        elf_class=64,
        little_endian=True,
        dynamic_loader="/lib64/ld-linux-x86-64.so.2",
        multiarch="x86_64-linux-gnu",
        qemu_binary="qemu-x86_64-static",
        vector_cpu_property=None,
        vector_compile_flags=(),
    ),
    Arch.ARM64: ArchInfo(
        arch=Arch.ARM64,
        debian_arch="arm64",
        triplet="aarch64-linux-gnu",
        cmake_processor="aarch64",
        rust_target="aarch64-unknown-linux-gnu",
        wheel_platform="linux_aarch64",
        elf_machine=183,
        elf_machine_name="AArch64",
        elf_class=64,
        little_endian=True,
        dynamic_loader="/lib/ld-linux-aarch64.so.1",
        multiarch="aarch64-linux-gnu",
        qemu_binary="qemu-aarch64-static",
        vector_cpu_property=None,
        vector_compile_flags=(),
        guest_cpuinfo=("processor\t: {n}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 "
                       "atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\n"
                       "CPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n"),
    ),
    Arch.RISCV64: ArchInfo(
        arch=Arch.RISCV64,
        debian_arch="riscv64",
        triplet="riscv64-linux-gnu",
        cmake_processor="riscv64",
        rust_target="riscv64gc-unknown-linux-gnu",
        wheel_platform="linux_riscv64",
        elf_machine=243,
        elf_machine_name="RISC-V",
        elf_class=64,
        little_endian=True,
        dynamic_loader="/lib/ld-linux-riscv64-lp64d.so.1",
        multiarch="riscv64-linux-gnu",
        qemu_binary="qemu-riscv64-static",
        vector_cpu_property="v",
        vector_compile_flags=("-march=rv64gcv",),
        isa_extension_properties=True,
    ),
})

KNOWN_ARCHS: tuple[str, ...] = tuple(a.value for a in Arch)

# The arch whose results every other arch is compared against.
CONTROL_ARCH = Arch.AMD64


def info(arch: Arch | str) -> ArchInfo:
    return ARCHS[Arch(arch)]


def by_elf_machine(machine: int) -> ArchInfo | None:
    for record in ARCHS.values():
        if record.elf_machine == machine:
            return record
    return None


def ext_suffix(arch: Arch | str, python_version: str) -> str:
    """The CPython EXT_SUFFIX for *python_version* ("3.13") on *arch*."""
    nodot = python_version.replace(".", "")
    return f".cpython-{nodot}-{info(arch).multiarch}.so"


def host_arch(machine: str | None = None) -> Arch | None:
    """The build machine's arch: uname's machine (what platform.machine() returns) matched against the table's
    cmake_processor (None: a machine crosslane has no arch for)."""
    name = machine if machine is not None else os.uname().machine
    for arch, record in ARCHS.items():
        if record.cmake_processor == name:
            return arch
    return None
