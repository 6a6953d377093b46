"""Hostile artifacts and arguments: each a FAIL row or a one-line error, never a traceback, hang or bomb."""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import gatekit
from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane.gates import elf, verify
from crosslane.gates import wheel as wheel_gate
from crosslane.recipes import cmake
from crosslane.report import Verdict
from crosslane.reports import summary

pytestmark = [pytest.mark.hostile("wheels and ELF files")]

NAME = "demo-1.0-cp314-cp314-linux_riscv64.whl"
# The fuzz budget: a fixed one in the default tier; `nox -s reliability` multiplies it.
ROUNDS = int(os.environ.get("CROSSLANE_FUZZ_FACTOR", "1"))


def make_wheel(path: Path, members: dict[str, bytes], record: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr("demo-1.0.dist-info/RECORD", record if record is not None else "")
    return path


def rows_of(wheel: Path) -> dict[str, tuple[Verdict, str]]:
    return {r.subject: (r.verdict, r.reason) for r in wheel_gate.verify_wheel(wheel, Arch.RISCV64)}


def test_many_small_zero_members_are_a_bomb_in_all(tmp_path: Path) -> None:
    """1,500 members of 1 MiB of zeros: each under the per-member rule, 1.5 GiB together."""
    path = tmp_path / NAME
    zeros = bytes(1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for index in range(1500):
            archive.writestr(f"demo/z{index}.bin", zeros)
    assert path.stat().st_size < 8 << 20
    verdict, reason = rows_of(path)["unpack"]
    assert verdict is Verdict.FAIL and "bomb" in reason and "in all" in reason


def overlapping_zip(path: Path, count: int, size: int) -> Path:
    """*count* members of *size* zeros, each claiming compressed data up to the end of the archive's data: the
    directory's sizes sum to ~count× the file, so per-member and whole-archive ratios look small."""
    data = bytes(size)
    crc = zlib.crc32(data)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(data) + packer.flush()
    body, offsets = bytearray(), []
    for index in range(count):
        name = f"demo/z{index}.bin".encode()
        offsets.append((len(body), name))
        body += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(packed), size, len(name),
                            0) + name + packed
    body += bytes(size // 100)  # padding the claimed sizes run over: each member's claim "compresses" 100:1
    end = len(body)
    directory = bytearray()
    for offset, name in offsets:
        directory += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21, crc,
                                 end - offset - 30 - len(name), size, len(name), 0, 0, 0, 0, 0o100644 << 16,
                                 offset) + name
    tail = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, len(directory), end, 0)
    path.write_bytes(bytes(body + directory + tail))
    return path


def test_members_whose_claimed_data_overlap_are_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    path = overlapping_zip(tmp_path / NAME, 8, 8 << 20)
    with zipfile.ZipFile(path) as archive:  # the ratio checks alone would pass it: 8 × 80 kB claimed for 64 MiB
        assert sum(m.file_size for m in archive.infolist()) < 100 * sum(m.compress_size for m in archive.infolist())
    verdict, reason = rows_of(path)["unpack"]
    assert verdict is Verdict.FAIL and "overlap" in reason and "demo/z0.bin" in reason, reason


@pytest.mark.parametrize(("record", "words"), [
    ("demo/a.py,shake_128=AAAA,1\n", "algorithm 'shake_128' is not one of"),
    ("demo/a.py,sha256=" + "A" * (200 << 10) + ",1\n", "RECORD is not valid CSV"),
], ids=["shake_128", "huge-field"])
def test_record_oddities_are_fail_rows(tmp_path: Path, record: str, words: str) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/a.py": b"x"}, record)
    verdict, reason = rows_of(wheel)["record"]
    assert verdict is Verdict.FAIL and words in reason


def test_a_wheel_name_with_an_empty_python_tag(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "demo-1.0--cp314-linux_riscv64.whl", {"demo/a.py": b"x"})
    verdict, reason = rows_of(wheel)["platform-tag"]
    assert verdict is Verdict.FAIL and "invalid wheel name" in reason


def test_program_headers_past_the_end_of_the_file(tmp_path: Path) -> None:
    real = Path("/bin/true").resolve()
    data = bytearray(real.read_bytes())
    struct.pack_into("<Q", data, 32, len(data) + 4096)  # e_phoff of an ELF64 little-endian header
    bad = tmp_path / "libbad.so"
    bad.write_bytes(bytes(data))
    found = elf.read(bad)
    assert isinstance(found, elf.ElfDefect) and "program headers" in found.reason and "past the file" in found.reason
    assert isinstance(elf.read(real), elf.ElfInfo)


def test_verify_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.so"
    os.mkfifo(fifo)
    [row] = verify.verify(Arch.RISCV64, [fifo], sysroot_path=None, python_version=None)
    assert row.verdict is Verdict.FAIL and "not a regular file or folder" in row.reason


@pytest.mark.parametrize("arg", ["-DX={sysroot.__class__}", "-DX={deps.__init__}", "-DX={nope}", "-DX={deps[none]}",
                                 "-DX={sysroot", "-DX={}", "-DX={deps}"])
def test_placeholders_are_names_only(arg: str) -> None:
    values: dict[str, object] = {"sysroot": "/s", "deps": {"onnxruntime": "/d"}}
    with pytest.raises(KeyError):
        cmake.substitute(arg, values)
    assert cmake.substitute("-DA={sysroot} -DB={deps[onnxruntime]}", values) == "-DA=/s -DB=/d"


def test_a_bad_placeholder_is_a_config_error(cfg: object) -> None:
    from dataclasses import replace

    from crosslane.config import Config
    assert isinstance(cfg, Config)
    component = replace(cfg.components["canary"], cmake_args=("-DX={sysroot.__class__.__mro__}",))
    with pytest.raises(ConfigError, match=r"cmake_args: '-DX=\{sysroot.__class__.__mro__\}' uses an unknown "
                                          r"placeholder \{sysroot.__class__.__mro__\}"):
        cmake.expand(component, Arch.RISCV64, {"sysroot": "/s"})


def mutated_wheels(tmp_path: Path, seed: int, count: int) -> Iterator[Path]:
    """Byte mutations of a real wheel (fixed seed, fixed budget), each in its own folder, removed after its turn."""
    import random

    good = make_wheel(tmp_path / "good.whl", {"demo/__init__.py": b"print('hi')\n" * 50, "demo/x.so": b"\x7fELF" * 40})
    data = good.read_bytes()
    rng = random.Random(seed)
    for index in range(count):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        path = tmp_path / f"m{index}" / NAME
        path.parent.mkdir()
        path.write_bytes(bytes(mutated))
        yield path
        shutil.rmtree(path.parent)


def test_corrupt_wheels_never_raise(tmp_path: Path) -> None:
    """Every outcome of a mutated wheel is rows."""
    for path in mutated_wheels(tmp_path, 20261130, 150 * ROUNDS):
        assert wheel_gate.verify_wheel(path, Arch.RISCV64)


def test_corrupt_elf_files_never_raise(tmp_path: Path) -> None:
    import random

    data = Path("/bin/true").resolve().read_bytes()
    rng = random.Random(7)
    path = tmp_path / "libx.so"
    for _ in range(300 * ROUNDS):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            mutated[rng.randrange(min(len(mutated), 4096))] = rng.randrange(256)
        path.write_bytes(bytes(mutated[: rng.choice([len(mutated), rng.randrange(64, len(mutated))])]))
        assert isinstance(elf.read(path), (elf.ElfInfo, elf.ElfDefect))


def test_corrupt_configs_are_config_errors(repo: Path) -> None:
    import random

    from crosslane import config as config_mod

    text = (repo / "versions.toml").read_text()
    rng = random.Random(3)
    alphabet = '[]{}=",#.\n\'\\0xzé'
    kinds = {"ok": 0, "config-error": 0}
    for _ in range(300 * ROUNDS):
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(chars))
            if rng.random() < 0.5:
                del chars[position]
            else:
                chars.insert(position, rng.choice(alphabet))
        try:
            config_mod.parse("".join(chars), repo / "versions.toml")
            kinds["ok"] += 1
        except ConfigError:
            kinds["config-error"] += 1
    assert kinds["config-error"] > 100, kinds
    _ = io


SBOM_MEMBER = "demo-1.0.dist-info/sboms/crosslane.cdx.json"
METADATA = ("demo-1.0.dist-info/METADATA", b"Metadata-Version: 2.4\nName: demo\nVersion: 1.0\n")


def test_an_sbom_nested_too_deeply_is_a_fail_row(tmp_path: Path) -> None:
    wheel = gatekit.make_wheel(tmp_path, "demo-1.0-py3-none-any.whl",
                               dict([METADATA, (SBOM_MEMBER, b"[" * 50_000 + b"]" * 50_000)]))
    papers = [r for r in wheel_gate.verify_wheel(wheel, Arch.ARM64) if "papers" in r.label]
    assert [r.verdict for r in papers] == [Verdict.FAIL], papers
    assert "nested too deeply" in papers[0].reason, papers[0].reason


def test_a_lone_surrogate_an_sbom_names_is_escaped_in_the_row_and_the_table_prints(tmp_path: Path) -> None:
    document = {"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1,
                "metadata": {"component": {"type": "library", "name": "demo", "properties": [
                    {"name": "crosslane:licence-file", "value": "sources/x/LICENSE\ud800"}]}}}
    wheel = gatekit.make_wheel(tmp_path, "demo-1.0-py3-none-any.whl",
                               dict([METADATA, (SBOM_MEMBER, json.dumps(document).encode())]))
    rows = wheel_gate.verify_wheel(wheel, Arch.ARM64)
    papers = [r for r in rows if "papers" in r.label]
    assert [r.verdict for r in papers] == [Verdict.FAIL], papers
    assert "sources/x/LICENSE\\ud800: a licence text the SBOM names" in papers[0].reason, papers[0].reason
    summary.table(rows).encode("utf-8")  # strict: what the summary prints
