"""elf.read: facts from headers; anything unreadable becomes a defect naming the file, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch, info
from crosslane.gates import check_elf_arch, elf
from gatekit import elf_header


@pytest.mark.parametrize("arch", list(Arch), ids=[a.value for a in Arch])
def test_header_only_elf_is_read(tmp_path: Path, arch: Arch) -> None:
    path = tmp_path / "libx.so"
    path.write_bytes(elf_header(info(arch).elf_machine))
    found = elf.read(path)
    assert isinstance(found, elf.ElfInfo)
    assert found.arch == info(arch)
    assert found.machine_name == info(arch).elf_machine_name
    assert found.needed == () and found.soname is None and found.interpreter is None


@pytest.mark.parametrize(("flags", "abi", "rvc"), [(0x5, "double", True), (0x0, "soft", False), (0x2, "single", False),
                                                    (0x7, "quad", True)], ids=["lp64d-rvc", "lp64", "lp64f", "lp64q"])
def test_riscv_float_abi_and_rvc_from_e_flags(tmp_path: Path, flags: int, abi: str, rvc: bool) -> None:
    path = tmp_path / "x"
    path.write_bytes(elf_header(243, e_flags=flags))
    found = elf.read(path)
    assert isinstance(found, elf.ElfInfo)
    assert (found.float_abi, found.rvc) == (abi, rvc)
    assert abi in found.describe()


def test_non_riscv_has_no_float_abi(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(elf_header(183, e_flags=0x5))
    found = elf.read(path)
    assert isinstance(found, elf.ElfInfo)
    assert found.float_abi is None and found.rvc is None


@pytest.mark.parametrize(("content", "why"), [
    (b"not an elf at all, just text", "not an ELF file"),
    (b"", "not an ELF file"),
    (elf_header(243)[:20], "corrupt or truncated"),
    (b"\x7fELF" + b"\xff" * 60, "corrupt or truncated"),
], ids=["text", "empty", "truncated-header", "garbage-after-magic"])
def test_defects_name_the_file(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "libbroken.so"
    path.write_bytes(content)
    found = elf.read(path)
    assert isinstance(found, elf.ElfDefect)
    assert found.path == path
    assert why in found.reason


def test_unreadable_path_is_a_defect(tmp_path: Path) -> None:
    found = elf.read(tmp_path)
    assert isinstance(found, elf.ElfDefect)
    assert "unreadable" in found.reason


def test_magic_not_suffix_decides(tmp_path: Path) -> None:
    plain = tmp_path / "tool"
    plain.write_bytes(elf_header(62))
    named = tmp_path / "notes.so.txt"
    named.write_bytes(b"hello")
    assert elf.has_elf_magic(plain) and not elf.has_elf_magic(named)
    assert elf.looks_like_shared_object(tmp_path / "libz.so.1.3") and not elf.looks_like_shared_object(named)


def test_arch_gate_names_file_machine_and_expectation(tmp_path: Path) -> None:
    path = tmp_path / "libonnxruntime-genai.so"
    path.write_bytes(elf_header(183))
    found = elf.read(path)
    assert isinstance(found, elf.ElfInfo)
    verdict = check_elf_arch(found, "onnxruntime_genai/libonnxruntime-genai.so", Arch.RISCV64)
    assert verdict.verdict == "FAIL"
    assert verdict.reason == "onnxruntime_genai/libonnxruntime-genai.so: AArch64, expected RISC-V"


@pytest.mark.parametrize(("header", "expected"), [
    (elf_header(243, elf_class=32), "ELF32, expected ELF64"),
    (elf_header(243, little=False), "big-endian, expected little-endian"),
], ids=["class", "endianness"])
def test_arch_gate_checks_class_and_byte_order(tmp_path: Path, header: bytes, expected: str) -> None:
    path = tmp_path / "x.so"
    path.write_bytes(header)
    found = elf.read(path)
    assert isinstance(found, elf.ElfInfo)
    assert expected in check_elf_arch(found, "x.so", Arch.RISCV64).reason
