"""elf.read_links (struct, program headers) reads what pyelftools' full read does of the loader's facts, on the
real libraries of the riscv64 and arm64 sysroots and on compiled ones with RPATH/RUNPATH; a truncated or empty
file is a defect naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch, info
from crosslane.gates import elf
from gatekit import PLAIN_C, compiled

FIELDS = ("machine", "elf_class", "little_endian", "elf_type", "e_flags", "interpreter", "needed", "soname",
          "runpath", "rpath")


def same(path: Path) -> None:
    full, links = elf.read(path), elf.read_links(path)
    assert isinstance(full, elf.ElfInfo) and isinstance(links, elf.ElfInfo), (full, links)
    assert {f: getattr(links, f) for f in FIELDS} == {f: getattr(full, f) for f in FIELDS}, path


@pytest.mark.spawns
def test_compiled_libraries_with_their_search_paths(tmp_path: Path) -> None:
    for name, flags in (("rpath", ("-Wl,--disable-new-dtags,-rpath,$ORIGIN/a:/opt/b",)),
                        ("runpath", ("-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib", "-Wl,-soname,libx.so.1"))):
        compiled(tmp_path, name, PLAIN_C, *flags)
        same(tmp_path / f"{name}.so")
    runpath = elf.read_links(tmp_path / "runpath.so")
    assert isinstance(runpath, elf.ElfInfo) and runpath.runpath == ("$ORIGIN/../lib",) and runpath.soname == "libx.so.1"


@pytest.mark.parametrize("arch", [Arch.RISCV64, Arch.ARM64])
def test_the_sysroots_libraries(sysroots: dict[Arch, Path], arch: Arch) -> None:
    folder = sysroots[arch] / "usr/lib" / info(arch).multiarch
    libraries = sorted(p for p in folder.glob("lib*.so.*") if p.is_file() and not p.is_symlink())[:40]
    assert libraries
    for library in libraries:
        same(library)


def test_a_truncated_or_empty_file_is_a_defect(tmp_path: Path, sysroots: dict[Arch, Path]) -> None:
    libc = sysroots[Arch.RISCV64] / "usr/lib" / info(Arch.RISCV64).multiarch / "libc.so.6"
    cut = tmp_path / "libcut.so"
    cut.write_bytes(libc.resolve().read_bytes()[:300])
    empty = tmp_path / "libempty.so"
    empty.write_bytes(b"")
    for path in (cut, empty):
        found = elf.read_links(path)
        assert isinstance(found, elf.ElfDefect) and found.path == path, found
