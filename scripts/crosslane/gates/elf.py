"""ELF facts read once with pyelftools: every file opened once, everything read inside one `with`.

Every gate takes its facts from here (the loader's, the exported symbols, the code digest, the RVV instruction
count, the functions of .symtab), through a `Reader` a gate run shares: a file read is not read again while its
stat is unchanged. Files are recognized by their magic, not their name. A file that claims to be ELF (magic, or
a `.so` name) but cannot be parsed becomes an `ElfDefect` naming the file: never a crash.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from crosslane.archs import ArchInfo, by_elf_machine

if TYPE_CHECKING:  # pyelftools is imported where an ELF file is read: a no-op build reads none
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

MAGIC = b"\x7fELF"
EM_RISCV = 243
EF_RISCV_RVC = 0x1
EF_RISCV_FLOAT_ABI = 0x6
RISCV_FLOAT_ABIS = {0x0: "soft", 0x2: "single", 0x4: "double", 0x6: "quad"}
ATOMIC_STR = "__atomic_"
PYINIT_PREFIX = b"PyInit_"
LIBATOMIC = "libatomic.so.1"
SHARED_OBJECT_NAME = re.compile(r"\.so(\.\d+)*$")
STB_WEAK = 2
NT_GNU_PROPERTY_TYPE_0 = 5
GNU_PROPERTY_X86_ISA_1_NEEDED = 0xC0008002
EM_X86_64 = 62
STT_FUNC = 2
# What a repair leaves alone: the program's code and data. patchelf rewrites .dynamic, .dynstr, the version
# tables and may move sections; these keep their bytes.
CODE_SECTIONS = (".text", ".rodata", ".data.rel.ro", ".data", ".init_array", ".fini_array")
# RVV's major opcodes: OP-V, and LOAD-FP / STORE-FP with a vector width (0, 5, 6, 7; the scalar ones are 1-4).
OP_V = 0x57
LOAD_FP, STORE_FP = 0x07, 0x27
VECTOR_WIDTHS = frozenset({0, 5, 6, 7})
SHF_EXECINSTR = 0x4


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
    # The same per library it names them for: (("libc.so.6", ("GLIBC_2.17", …)), …), as .gnu.version_r lists them.
    version_needs_by_library: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Names of the symbols it takes from other objects (.dynsym, undefined, not weak).
    undefined: frozenset[str] = frozenset()
    # x86-64 only: the GNU_PROPERTY_X86_ISA_1_NEEDED bits of .note.gnu.property (x86-64-v2 = 2, v3 = 4, v4 = 8).
    x86_isa_needed: int = 0
    # Names of the symbols it defines in .dynsym: what it exports (gates/compiled.py).
    exported: frozenset[str] = frozenset()
    # sha256 over CODE_SECTIONS, None when it has none or one runs past the file (gates/provenance.py).
    code_digest: str | None = None
    # RISC-V only: the RVV instructions of its executable sections (gates/vector_code.py); None for other machines.
    vector_instructions: int | None = None
    # (start, size, name) of every function .symtab names: a program counter named (baremetal/run.py).
    functions: tuple[tuple[int, int, str], ...] = field(default=(), repr=False)

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


@dataclass(frozen=True, kw_only=True)
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


Symbol = tuple[str, int, int, int, int]  # name, st_info, st_shndx, st_value, st_size


def _symbols(elf: ELFFile, table_name: str, strings: bytes) -> list[Symbol]:
    """Every named symbol of *table_name* (.dynsym, .symtab), unpacked with struct directly: pyelftools'
    per-symbol parsing is slow, and libstdc++ has thousands (docs/findings.md, "What tools cost")."""
    from elftools.elf.sections import SymbolTableSection

    table = elf.get_section_by_name(table_name)
    if not isinstance(table, SymbolTableSection):
        return []
    order = "<" if elf.little_endian else ">"
    # (format, index of st_name, st_info, st_shndx, st_value, st_size): Elf64_Sym and Elf32_Sym order their fields
    # differently.
    fmt, name_at, info_at, shndx_at, value_at, size_at = (f"{order}IBBHQQ", 0, 1, 3, 4, 5) if elf.elfclass == 64 \
        else (f"{order}IIIBBH", 0, 3, 5, 1, 2)
    data = bytes(table.data())
    usable = len(data) - len(data) % struct.calcsize(fmt)
    found = []
    for fields in struct.iter_unpack(fmt, data[:usable]):
        offset = fields[name_at]
        if offset:
            end = strings.find(b"\0", offset)
            found.append((strings[offset:end if end >= 0 else None].decode("ascii", "replace"), fields[info_at],
                          fields[shndx_at], fields[value_at], fields[size_at]))
    return found


def _undefined_symbols(symbols: list[Symbol]) -> list[tuple[str, bool]]:
    """(name, weak) of every symbol .dynsym takes from other objects."""
    return [(name, info >> 4 == STB_WEAK) for name, info, shndx, _, _ in symbols if shndx == 0]


def _functions(elf: ELFFile) -> tuple[tuple[int, int, str], ...]:
    strtab = elf.get_section_by_name(".strtab")
    strings = bytes(strtab.data()) if strtab is not None else b""
    return tuple((value, size, name) for name, info, _, value, size in _symbols(elf, ".symtab", strings)
                 if info & 0xF == STT_FUNC)


def _code_digest(elf: ELFFile, size: int) -> str | None:
    digest = hashlib.sha256()
    found = 0
    for name in CODE_SECTIONS:
        section = elf.get_section_by_name(name)
        if section is None:
            continue
        # a section header is a claim (the loader reads program headers): one past the file is no code
        if section["sh_type"] != "SHT_NOBITS" and section["sh_offset"] + section["sh_size"] > size:
            return None
        digest.update(name.encode() + b"\0" + section.data() + b"\0")
        found += 1
    return digest.hexdigest() if found else None


def count_vector_instructions(code: bytes) -> int:
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


def _vector_instructions(elf: ELFFile) -> int:
    return sum(count_vector_instructions(section.data()) for section in elf.iter_sections()
               if section["sh_flags"] & SHF_EXECINSTR and section["sh_type"] == "SHT_PROGBITS")


def _x86_isa_needed(elf: ELFFile) -> int:
    """GNU_PROPERTY_X86_ISA_1_NEEDED of .note.gnu.property (0: none), as auditwheel reads it for x86-64."""
    section = elf.get_section_by_name(".note.gnu.property")
    if section is None:
        return 0
    data = bytes(section.data())
    order = "<" if elf.little_endian else ">"
    align = 8 if elf.elfclass == 64 else 4
    at = 0
    while at + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from(f"{order}III", data, at)
        name = data[at + 12:at + 12 + namesz].rstrip(b"\0")
        start = at + 12 + ((namesz + 3) & ~3)
        desc = data[start:start + descsz]
        at = start + ((descsz + align - 1) & ~(align - 1))
        if kind != NT_GNU_PROPERTY_TYPE_0 or name != b"GNU":
            continue
        inner = 0
        while inner + 8 <= len(desc):
            pr_type, size = struct.unpack_from(f"{order}II", desc, inner)
            if pr_type == GNU_PROPERTY_X86_ISA_1_NEEDED and size == 4 and inner + 12 <= len(desc):
                value: int = struct.unpack_from(f"{order}I", desc, inner + 8)[0]
                return value
            inner += 8 + ((size + align - 1) & ~(align - 1))
    return 0


def corrupt_elf_errors() -> tuple[type[Exception], ...]:
    """What pyelftools raises on a corrupt or truncated file (every reader here turns these into a defect)."""
    from elftools.common.exceptions import ELFError, ELFParseError, ELFRelocationError
    return (ELFError, ELFParseError, ELFRelocationError, struct.error, ValueError, KeyError, UnicodeDecodeError,
            EOFError, OverflowError)


def read(path: Path) -> ElfInfo | ElfDefect:
    """The ELF facts of *path*, or a defect saying why it is not a readable ELF file."""
    try:
        with path.open("rb") as handle:
            return _read_stream(path, handle, os.fstat(handle.fileno()).st_size)
    except OSError as exc:
        return ElfDefect(path=path, reason=f"unreadable ({exc.strerror or exc})")


def read_data(path: Path, data: bytes) -> ElfInfo | ElfDefect:
    """read() of a file's bytes already in memory (a wheel's member, read from the zip): *path* names it."""
    return _read_stream(path, io.BytesIO(data), len(data))


def _read_stream(path: Path, handle: BinaryIO, size: int) -> ElfInfo | ElfDefect:
    from elftools.elf.elffile import ELFFile

    try:
        if handle.read(4) != MAGIC:
            return ElfDefect(path=path, reason="not an ELF file (no \\x7fELF magic)")
        handle.seek(0)
        elf = ELFFile(handle)
        bounds = _header_bounds(elf.header, size)
        if bounds:
            return ElfDefect(path=path, reason=f"corrupt ELF: {bounds}")
        return _facts(path, elf, size)
    except corrupt_elf_errors() as exc:
        return ElfDefect(path=path, reason=f"corrupt or truncated ELF ({type(exc).__name__}: {exc})")


def _loader_strings(elf: ELFFile) -> tuple[str | None, dict[str, list[str]]]:
    """The interpreter and the .dynamic strings: DT_NEEDED, DT_SONAME, DT_RUNPATH, DT_RPATH."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.segments import InterpSegment

    interpreter = None
    for segment in elf.iter_segments("PT_INTERP"):
        if isinstance(segment, InterpSegment):
            interpreter = segment.get_interp_name()
    dynamic = elf.get_section_by_name(".dynamic")
    tags = {tag: _strings(dynamic, tag) if isinstance(dynamic, DynamicSection) else [] for tag in TAG_ATTRIBUTES}
    return interpreter, tags


def _version_needs(elf: ELFFile) -> list[tuple[str, tuple[str, ...]]]:
    from elftools.elf.gnuversions import GNUVerNeedSection

    verneed = elf.get_section_by_name(".gnu.version_r")
    if not isinstance(verneed, GNUVerNeedSection):
        return []
    return [(str(entry.name), tuple(aux.name for aux in auxiliaries)) for entry, auxiliaries in verneed.iter_versions()]


def _facts(path: Path, elf: ELFFile, size: int) -> ElfInfo:
    header = elf.header
    interpreter, tags = _loader_strings(elf)
    dynstr = _dynstr(elf)
    machine = _raw_machine(elf)
    dynamic_symbols = _symbols(elf, ".dynsym", dynstr)
    undefined = _undefined_symbols(dynamic_symbols)
    by_library = _version_needs(elf)
    return ElfInfo(
        path=path,
        machine=machine,
        machine_name=machine_name(machine, str(header["e_machine"])),
        elf_class=elf.elfclass,
        little_endian=elf.little_endian,
        elf_type=str(header["e_type"]),
        e_flags=int(header["e_flags"]),
        interpreter=interpreter,
        needed=tuple(tags["DT_NEEDED"]),
        soname=tags["DT_SONAME"][0] if tags["DT_SONAME"] else None,
        runpath=tuple(tags["DT_RUNPATH"]),
        rpath=tuple(tags["DT_RPATH"]),
        undefined_atomics=tuple(sorted({n for n, _ in undefined if n.startswith(ATOMIC_STR)})),
        py_inits=_py_inits(dynstr),
        version_needs=tuple(sorted({v for _, versions in by_library for v in versions})),
        version_needs_by_library=tuple(by_library),
        undefined=frozenset(n for n, weak in undefined if not weak),
        x86_isa_needed=_x86_isa_needed(elf) if machine == EM_X86_64 else 0,
        exported=frozenset(name for name, _, shndx, _, _ in dynamic_symbols if shndx != 0),
        code_digest=_code_digest(elf, size),
        vector_instructions=_vector_instructions(elf) if machine == EM_RISCV else None,
        functions=_functions(elf),
    )


StatKey = tuple[Path, int, int, int, int]  # path, device, inode, size, mtime: a file changed is read anew


class Reader:
    """read() once per file and stat: the gates of one run share one, so each reads a file's facts from it."""

    def __init__(self) -> None:
        self._read: dict[StatKey, ElfInfo | ElfDefect] = {}

    def read(self, path: Path) -> ElfInfo | ElfDefect:
        try:
            st = path.stat()
        except OSError as exc:
            return ElfDefect(path=path, reason=f"unreadable ({exc.strerror or exc})")
        key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in self._read:
            self._read[key] = read(path)
        return self._read[key]


PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
DT_NEEDED, DT_STRTAB, DT_SONAME, DT_RPATH, DT_RUNPATH = 1, 5, 14, 15, 29


def read_links(path: Path) -> ElfInfo | ElfDefect:
    """Only what a loader follows (machine, class, DT_NEEDED, SONAME, RPATH/RUNPATH, interpreter), from the
    program headers with struct: what dt-needed reads of each library a closure loads from a sysroot, where
    pyelftools' section parsing of every library would cost more than the check."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _links(path, data)
    except (struct.error, IndexError, KeyError, ValueError, UnicodeDecodeError) as exc:
        return ElfDefect(path=path, reason=f"corrupt or truncated ELF ({type(exc).__name__}: {exc})")
    except OSError as exc:
        return ElfDefect(path=path, reason=f"unreadable ({exc.strerror or exc})")


def _links(path: Path, data: mmap.mmap) -> ElfInfo | ElfDefect:
    if data[:4] != MAGIC:
        return ElfDefect(path=path, reason="not an ELF file (no \\x7fELF magic)")
    elf_class, little = {1: 32, 2: 64}[data[4]], data[5] == 1
    order = "<" if little else ">"
    wide = elf_class == 64
    e_type, machine, _, _, phoff, _, e_flags, _, phentsize, phnum = struct.unpack_from(
        f"{order}HHIQQQIHHH" if wide else f"{order}HHIIIIIHHH", data, 16)
    segment = f"{order}IIQQQQQQ" if wide else f"{order}IIIIIIII"
    loads: list[tuple[int, int, int]] = []
    dynamic = interp = None
    for index in range(phnum):
        fields = struct.unpack_from(segment, data, phoff + index * phentsize)
        kind, offset, vaddr, filesz = (fields[0], fields[2], fields[3], fields[5]) if wide else (*fields[:3],
                                                                                                 fields[4])
        if kind == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif kind == PT_DYNAMIC:
            dynamic = (offset, filesz)
        elif kind == PT_INTERP:
            interp = data[offset:offset + filesz].rstrip(b"\0").decode()
    tags: list[tuple[int, int]] = []
    if dynamic is not None:
        entry = f"{order}qQ" if wide else f"{order}iI"
        size = struct.calcsize(entry)
        for at in range(dynamic[0], dynamic[0] + dynamic[1] - size + 1, size):
            tag, value = struct.unpack_from(entry, data, at)
            if tag == 0:
                break
            tags.append((tag, value))
    strtab = next((v for t, v in tags if t == DT_STRTAB), None)
    base = next((off + strtab - va for va, off, size in loads if strtab is not None and va <= strtab < va + size),
                None)

    def string(offset: int) -> str:
        if base is None:
            raise ValueError("DT_STRTAB lies in no PT_LOAD segment")
        end = data.find(b"\0", base + offset)
        if end < 0:
            raise ValueError(f"a string at {base + offset} runs past the file's end")
        return data[base + offset:end].decode()

    def paths(tag: int) -> tuple[str, ...]:
        return tuple(p for t, v in tags if t == tag for p in string(v).split(":") if p)

    names = {1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN", 4: "ET_CORE"}
    soname = [string(v) for t, v in tags if t == DT_SONAME]
    return ElfInfo(path=path, machine=machine, machine_name=machine_name(machine, f"EM_{machine}"),
                   elf_class=elf_class, little_endian=little, elf_type=names.get(e_type, str(e_type)),
                   e_flags=e_flags, interpreter=interp, needed=tuple(string(v) for t, v in tags if t == DT_NEEDED),
                   soname=soname[0] if soname else None, runpath=paths(DT_RUNPATH), rpath=paths(DT_RPATH),
                   undefined_atomics=(), py_inits=())


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
