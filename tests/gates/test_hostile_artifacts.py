"""Hostile artifacts and arguments: each a FAIL row or a one-line error, never a traceback, hang or bomb."""

from __future__ import annotations

import io
import os
import shutil
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane.gates import elf, verify
from crosslane.gates import wheel as wheel_gate
from crosslane.recipes import cmake
from crosslane.report import Verdict

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
