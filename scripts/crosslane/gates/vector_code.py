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

from crosslane.gates import elf
from crosslane.gates.elf import count_vector_instructions as count

__all__ = ["VectorCode", "count", "scan", "summary"]


@dataclass(frozen=True)
class VectorCode:
    """An ELF file's vector instruction count, or why it was not scanned."""

    path: Path
    instructions: int = 0
    scanned: bool = True
    why: str = ""


def scan(path: Path, reader: elf.Reader | None = None) -> VectorCode:
    """The vector instructions of *path*'s executable sections (gates/elf.py counts them as it reads the file); a
    file that is no RISC-V ELF is not scanned."""
    found = (reader or elf.Reader()).read(path)
    if isinstance(found, elf.ElfDefect):  # an install folder may come from a pack that crossed a job
        return VectorCode(path, scanned=False, why=found.reason)
    if found.vector_instructions is None:
        return VectorCode(path, scanned=False, why="not RISC-V")
    return VectorCode(path, found.vector_instructions)


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
