"""Whether a RISC-V ELF file holds vector (RVV) instructions: evidence for what a VLEN sweep exercises.

A smoke run on rvv128, rvv256 and rvv512 proves something about vector code only when the objects it loads hold
some: code with no vector instruction runs the same scalar path on every profile. The scan decodes each executable
section linearly (RVC: an instruction whose low two bits are not 0b11 is 16 bits long) and counts
- OP-V (major opcode 0x57): vector arithmetic and vsetvli/vsetivli/vsetvl;
- LOAD-FP / STORE-FP (0x07 / 0x27) with a vector width (funct3 0, 5, 6 or 7): vector loads and stores.
A linear sweep can misread data placed in a code section; RISC-V toolchains keep constants out of .text, and a
count is reported, not a verdict taken on one instruction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crosslane.gates.elf import EM_RISCV, corrupt_elf_errors

OP_V = 0x57
LOAD_FP, STORE_FP = 0x07, 0x27
VECTOR_WIDTHS = frozenset({0, 5, 6, 7})
SHF_EXECINSTR = 0x4


@dataclass(frozen=True)
class VectorCode:
    """An ELF file's vector instruction count, or why it was not scanned."""

    path: Path
    instructions: int = 0
    scanned: bool = True
    why: str = ""


def count(code: bytes) -> int:
    """RVV instructions in a stream of RISC-V instructions (little-endian, RVC allowed)."""
    found, offset, end = 0, 0, len(code) - 1
    while offset < end:
        low = code[offset]
        if low & 0b11 != 0b11:
            offset += 2
            continue
        if offset + 4 > len(code):
            break
        word = int.from_bytes(code[offset:offset + 4], "little")
        opcode, width = word & 0x7F, (word >> 12) & 0x7
        if opcode == OP_V or (opcode in (LOAD_FP, STORE_FP) and width in VECTOR_WIDTHS):
            found += 1
        offset += 4
    return found


def scan(path: Path) -> VectorCode:
    """The vector instructions of *path*'s executable sections; a file that is no RISC-V ELF is not scanned."""
    from elftools.elf.elffile import ELFFile  # pyelftools: imported where an ELF file is read

    try:
        with path.open("rb") as handle:
            elf = ELFFile(handle)
            if elf["e_machine"] not in ("EM_RISCV", EM_RISCV):
                return VectorCode(path, scanned=False, why="not RISC-V")
            total = sum(count(section.data()) for section in elf.iter_sections()
                        if section["sh_flags"] & SHF_EXECINSTR and section["sh_type"] == "SHT_PROGBITS")
    except OSError as exc:
        return VectorCode(path, scanned=False, why=f"unreadable ({exc.strerror or exc})")
    except corrupt_elf_errors() as exc:  # an install folder may come from a pack that crossed a job
        return VectorCode(path, scanned=False, why=f"corrupt ELF ({type(exc).__name__})")
    return VectorCode(path, total)


def summary(results: list[VectorCode]) -> str:
    """One clause for a smoke row: which scanned files hold vector code."""
    scanned = [r for r in results if r.scanned]
    if not scanned:
        return "no RISC-V ELF file among the loaded code to scan for vector code"
    holding = [r for r in scanned if r.instructions]
    if not holding:
        return (f"no RVV instruction in its {len(scanned)} ELF files: every profile runs the same scalar code, so "
                "the VLEN sweep shows only that it runs")
    return f"RVV instructions in {len(holding)} of {len(scanned)} ELF files ({sum(r.instructions for r in holding)})"
