"""ELF facts read once with pyelftools: every file opened once, everything read inside one `with`.

Files are recognized by their magic, not their name. A file that claims to be ELF (magic, or a `.so`
name) but cannot be parsed becomes an `ElfDefect` naming the file: never a crash.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crosslane.archs import ArchInfo, by_elf_machine

if TYPE_CHECKING:  # pyelftools is imported where an ELF file is read: a no-op build reads none
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

MAGIC = b"\x7fELF"
EM_RISCV = 243
EF_RISCV_RVC = 0x1
EF_RISCV_FLOAT_ABI = 0x6
RISCV_FLOAT_ABIS = {0x0: "soft", 0x2: "single", 0x4: "double", 0x6: "quad"}
ATOMIC_PREFIX = b"__atomic_"
PYINIT_PREFIX = b"PyInit_"
LIBATOMIC = "libatomic.so.1"
SHARED_OBJECT_NAME = re.compile(r"\.so(\.\d+)*$")


@dataclass(frozen=True)
class ElfInfo:
    path: Path
    machine: int
    machine_name: str
    elf_class: int
    little_endian: bool
    elf_type: str
    e_flags: int
    interpreter: str | None
    needed: tuple[str, ...]
    soname: str | None
    runpath: tuple[str, ...]
    rpath: tuple[str, ...]
    undefined_atomics: tuple[str, ...]
    # Every PyInit_<name> in the dynamic string table (an extension module exports its own).
    py_inits: tuple[str, ...]
    # Symbol versions it needs from other objects (.gnu.version_r): GLIBC_2.34, GLIBCXX_3.4.30, …
    version_needs: tuple[str, ...] = ()

    @property
    def arch(self) -> ArchInfo | None:
        found = by_elf_machine(self.machine)
        if found and found.elf_class == self.elf_class and found.little_endian == self.little_endian:
            return found
        return None

    @property
    def float_abi(self) -> str | None:
        """RISC-V only: soft / single / double / quad."""
        return RISCV_FLOAT_ABIS[self.e_flags & EF_RISCV_FLOAT_ABI] if self.machine == EM_RISCV else None

    @property
    def rvc(self) -> bool | None:
        return bool(self.e_flags & EF_RISCV_RVC) if self.machine == EM_RISCV else None

    @property
    def is_extension_module(self) -> bool:
        """A CPython extension: a shared object exporting PyInit_<the file name up to its first dot>."""
        return self.interpreter is None and f"PyInit_{self.path.name.split('.')[0]}" in self.py_inits

    @property
    def needs_libatomic(self) -> bool:
        return bool(self.undefined_atomics) and LIBATOMIC not in self.needed

    def describe(self) -> str:
        """"AArch64 64-bit little-endian", the way the gates name what they found."""
        endian = "little-endian" if self.little_endian else "big-endian"
        extra = f" {self.float_abi}-float{' RVC' if self.rvc else ''}" if self.machine == EM_RISCV else ""
        return f"{self.machine_name} {self.elf_class}-bit {endian}{extra}"


@dataclass(frozen=True)
class ElfDefect:
    path: Path
    reason: str


def has_elf_magic(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == MAGIC
    except OSError:
        return False


def looks_like_shared_object(path: Path) -> bool:
    """A name that promises an ELF shared object: libx.so, x.cpython-313-….so, libx.so.1.2."""
    return SHARED_OBJECT_NAME.search(path.name) is not None


def machine_name(machine: int, pyelftools_name: str) -> str:
    known = by_elf_machine(machine)
    return known.elf_machine_name if known else pyelftools_name.removeprefix("EM_")


# pyelftools sets the decoded string on the tag as an attribute named after it.
TAG_ATTRIBUTES = {"DT_NEEDED": "needed", "DT_SONAME": "soname", "DT_RUNPATH": "runpath", "DT_RPATH": "rpath"}


def _strings(dynamic: DynamicSection, tag: str) -> list[str]:
    values: list[str] = []
    for entry in dynamic.iter_tags(tag):
        text = str(vars(entry)[TAG_ATTRIBUTES[tag]])
        values += [p for p in text.split(":") if p] if tag in ("DT_RUNPATH", "DT_RPATH") else [text]
    return values


def _dynstr(elf: ELFFile) -> bytes:
    section = elf.get_section_by_name(".dynstr")
    return bytes(section.data()) if section is not None else b""


def _py_inits(dynstr: bytes) -> tuple[str, ...]:
    names = []
    at = dynstr.find(PYINIT_PREFIX)
    while at >= 0:
        end = dynstr.find(b"\0", at)
        names.append(dynstr[at:end if end >= 0 else None].decode("ascii", "replace"))
        at = dynstr.find(PYINIT_PREFIX, end) if end >= 0 else -1
    return tuple(names)


def _undefined_atomics(elf: ELFFile, dynstr: bytes) -> tuple[str, ...]:
    # Cheap first: most libraries never mention __atomic_. Then .dynsym is unpacked with struct directly:
    # pyelftools' per-symbol parsing costs ~70 µs a symbol, and libstdc++ has thousands.
    if ATOMIC_PREFIX not in dynstr:
        return ()
    from elftools.elf.sections import SymbolTableSection

    dynsym = elf.get_section_by_name(".dynsym")
    if not isinstance(dynsym, SymbolTableSection):
        return ()
    order = "<" if elf.little_endian else ">"
    # (format, index of st_name, index of st_shndx): Elf64_Sym and Elf32_Sym order their fields differently.
    fmt, name_at, shndx_at = (f"{order}IBBHQQ", 0, 3) if elf.elfclass == 64 else (f"{order}IIIBBH", 0, 5)
    data = bytes(dynsym.data())
    usable = len(data) - len(data) % struct.calcsize(fmt)
    found = set()
    for fields in struct.iter_unpack(fmt, data[:usable]):
        offset = fields[name_at]
        if fields[shndx_at] == 0 and dynstr.startswith(ATOMIC_PREFIX, offset):
            end = dynstr.find(b"\0", offset)
            found.add(dynstr[offset:end if end >= 0 else None].decode("ascii", "replace"))
    return tuple(sorted(found))


def read(path: Path) -> ElfInfo | ElfDefect:
    """The ELF facts of *path*, or a defect saying why it is not a readable ELF file."""
    from elftools.common.exceptions import ELFError, ELFParseError, ELFRelocationError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerNeedSection
    from elftools.elf.segments import InterpSegment

    try:
        with path.open("rb") as handle:
            if handle.read(4) != MAGIC:
                return ElfDefect(path, "not an ELF file (no \\x7fELF magic)")
            handle.seek(0)
            elf = ELFFile(handle)
            header = elf.header
            bounds = _header_bounds(header, path.stat().st_size)
            if bounds:
                return ElfDefect(path, f"corrupt ELF: {bounds}")
            needed: list[str] = []
            soname: list[str] = []
            runpath: list[str] = []
            rpath: list[str] = []
            interpreter = None
            for segment in elf.iter_segments("PT_INTERP"):
                if isinstance(segment, InterpSegment):
                    interpreter = segment.get_interp_name()
            dynamic = elf.get_section_by_name(".dynamic")
            if isinstance(dynamic, DynamicSection):
                needed = _strings(dynamic, "DT_NEEDED")
                soname = _strings(dynamic, "DT_SONAME")
                runpath = _strings(dynamic, "DT_RUNPATH")
                rpath = _strings(dynamic, "DT_RPATH")
            dynstr = _dynstr(elf)
            machine = _raw_machine(elf)
            needs: list[str] = []
            verneed = elf.get_section_by_name(".gnu.version_r")
            if isinstance(verneed, GNUVerNeedSection):
                for _, auxiliaries in verneed.iter_versions():
                    needs += [aux.name for aux in auxiliaries]
            return ElfInfo(
                path=path,
                machine=machine,
                machine_name=machine_name(machine, str(header["e_machine"])),
                elf_class=elf.elfclass,
                little_endian=elf.little_endian,
                elf_type=str(header["e_type"]),
                e_flags=int(header["e_flags"]),
                interpreter=interpreter,
                needed=tuple(needed),
                soname=soname[0] if soname else None,
                runpath=tuple(runpath),
                rpath=tuple(rpath),
                undefined_atomics=_undefined_atomics(elf, dynstr),
                py_inits=_py_inits(dynstr),
                version_needs=tuple(sorted(set(needs))),
            )
    except (ELFError, ELFParseError, ELFRelocationError, struct.error, ValueError, KeyError, UnicodeDecodeError,
            EOFError) as exc:
        return ElfDefect(path, f"corrupt or truncated ELF ({type(exc).__name__}: {exc})")
    except OSError as exc:
        return ElfDefect(path, f"unreadable ({exc.strerror or exc})")


def _header_bounds(header: Any, size: int) -> str:
    """Why the program or section header table lies outside the file ("" when both fit)."""
    for table, offset, count, entry in (("program", "e_phoff", "e_phnum", "e_phentsize"),
                                        ("section", "e_shoff", "e_shnum", "e_shentsize")):
        start, end = int(header[offset]), int(header[offset]) + int(header[count]) * int(header[entry])
        if int(header[count]) and end > size:
            return f"its {table} headers ({start}…{end}) end past the file's {size} bytes"
    return ""


def _raw_machine(elf: ELFFile) -> int:
    """e_machine as a number (pyelftools gives a name like 'EM_AARCH64' for known machines)."""
    elf.stream.seek(18)
    fmt = "<H" if elf.little_endian else ">H"
    value: int = struct.unpack(fmt, elf.stream.read(2))[0]
    return value
