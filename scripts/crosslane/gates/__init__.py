"""Artifact gates: each returns one typed verdict (report.Row) per file and check.

Row fields for gates: component = the file (relative to what was verified), step = the gate's name,
verdict, and a reason that names what was found and what was expected.
"""

from __future__ import annotations

import re
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.gates import elf
from crosslane.report import Check, Row, Verdict

# .cpython-313-x86_64-linux-gnu.so / .cpython-313t-…; group 1: version digits, 2: "t" or "", 3: multiarch.
EXT_SUFFIX_RE = re.compile(r"\.cpython-(\d)(\d+)(t?)-([A-Za-z0-9_]+-linux-[A-Za-z0-9_]+)\.so$")
ABI3_SUFFIX = ".abi3.so"


def row(subject: str, arch: Arch, gate: str, verdict: Verdict, reason: str) -> Row:
    return Row(component=subject, arch=arch, check=Check.GATE, verdict=verdict, reason=reason, subject=gate)


def check_elf_arch(found: elf.ElfInfo, subject: str, arch: Arch) -> Row:
    """machine, class and byte order must be the target's: "x.so: AArch64, expected RISC-V"."""
    want = info(arch)
    problems = []
    if found.machine != want.elf_machine:
        problems.append(f"{found.machine_name}, expected {want.elf_machine_name}")
    if found.elf_class != want.elf_class:
        problems.append(f"ELF{found.elf_class}, expected ELF{want.elf_class}")
    if found.little_endian != want.little_endian:
        problems.append(f"{'little' if found.little_endian else 'big'}-endian, expected "
                        f"{'little' if want.little_endian else 'big'}-endian")
    if problems:
        return row(subject, arch, "elf-arch", Verdict.FAIL, f"{subject}: {'; '.join(problems)}")
    return row(subject, arch, "elf-arch", Verdict.PASS, found.describe())


def defect_row(defect: elf.ElfDefect, subject: str, arch: Arch) -> Row:
    return row(subject, arch, "elf-arch", Verdict.FAIL, f"DEFECT {subject}: {defect.reason}")


def check_ext_suffix(found: elf.ElfInfo, subject: str, arch: Arch, python_version: str | None) -> Row | None:
    """An extension module must carry the target EXT_SUFFIX (or .abi3.so). None: not an extension module."""
    name = Path(subject).name
    match = EXT_SUFFIX_RE.search(name)
    if not found.is_extension_module and match is None and not name.endswith(ABI3_SUFFIX):
        return None
    want_multiarch = info(arch).multiarch
    if name.endswith(ABI3_SUFFIX):
        return row(subject, arch, "ext-suffix", Verdict.PASS, "stable ABI (.abi3.so)")
    if match is None:
        expected = f".cpython-{(python_version or '3.X').replace('.', '')}-{want_multiarch}.so"
        return row(subject, arch, "ext-suffix", Verdict.FAIL,
                   f"{subject}: extension module without an EXT_SUFFIX, expected {expected} or {ABI3_SUFFIX}")
    version = f"{match.group(1)}.{match.group(2)}"
    multiarch = match.group(4)
    expected = f".cpython-{(python_version or version).replace('.', '')}{match.group(3)}-{want_multiarch}.so"
    if multiarch != want_multiarch:
        other = _other_arch(multiarch, arch)
        leaked = f" (an {other} suffix leaked into a {arch} build)" if other else ""
        return row(subject, arch, "ext-suffix", Verdict.FAIL,
                   f"{subject}: suffix for {multiarch}, expected {expected}{leaked}")
    if python_version and version != python_version:
        return row(subject, arch, "ext-suffix", Verdict.FAIL,
                   f"{subject}: built for CPython {version}, expected {expected}")
    return row(subject, arch, "ext-suffix", Verdict.PASS, name[len(name) - len(match.group(0)):])


def _other_arch(multiarch: str, arch: Arch) -> Arch | None:
    return next((other for other in Arch if other is not arch and info(other).multiarch == multiarch), None)
