"""wheelzip: the unpack writes what zipfile reads, hashed as RECORD states it; a defect of the zip is zipfile's own
error, and the unpack folder does not outlive it."""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from crosslane.files import wheelzip

NAME = "demo-1.0-cp314-cp314-linux_riscv64.whl"
LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # PKWARE APPNOTE 4.3.7, as zipfile reads it


def make_wheel(path: Path, members: dict[str, bytes], record: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr("demo-1.0.dist-info/RECORD", record)
    return path


def record_line(name: str, data: bytes) -> str:
    return f"{name},sha256={wheelzip.record_hash(hashlib.sha256(data).digest())},{len(data)}\n"


BIG = os.urandom(3 * wheelzip.CHUNK + 12345)  # several chunks, incompressible (no bomb)


def test_the_unpack_writes_and_hashes_what_zipfile_reads(tmp_path: Path) -> None:
    text = b"".join(b"line %d of a compressible member\n" % i for i in range(200_000))
    members = {"demo/big.so": BIG, "demo/text.py": text, "demo/empty.py": b""}
    wheel = make_wheel(tmp_path / NAME, members, "".join(record_line(n, d) for n, d in members.items()))
    unpacked = wheelzip.unpack_checked(wheel, wheelzip.Limits())
    with unpacked.folder as folder:
        for name, data in members.items():
            assert (Path(folder) / name).read_bytes() == data
            assert unpacked.hashes[name] == wheelzip.record_hash(hashlib.sha256(data).digest())
        assert unpacked.problems == []


def flip(wheel: Path, offset: int) -> None:
    data = bytearray(wheel.read_bytes())
    data[offset] ^= 0xFF
    wheel.write_bytes(bytes(data))


def data_offset(wheel: Path, name: str) -> int:
    with zipfile.ZipFile(wheel) as archive:
        member = archive.getinfo(name)
    with wheel.open("rb") as raw:
        raw.seek(member.header_offset)
        header = LOCAL_HEADER.unpack(raw.read(LOCAL_HEADER.size))
    return member.header_offset + LOCAL_HEADER.size + int(header[-2]) + int(header[-1])


TEXT = b"".join(b"%d: the member whose defects are judged\n" % i for i in range(50_000))


def wrong_crc_in_directory(wheel: Path) -> None:
    right, wrong = struct.pack("<I", zlib.crc32(TEXT)), struct.pack("<I", zlib.crc32(TEXT) ^ 1)
    wheel.write_bytes(wheel.read_bytes().replace(right, wrong))


DEFECTS: dict[str, Callable[[Path], None]] = {
    "stream-corrupt": lambda w: flip(w, data_offset(w, "demo/text.py") + 40),
    "stream-head-corrupt": lambda w: flip(w, data_offset(w, "demo/text.py")),
    "crc-in-directory": wrong_crc_in_directory,
    "local-name": lambda w: flip(w, data_offset(w, "demo/text.py") - len("demo/text.py")),
    "local-magic": lambda w: flip(w, data_offset(w, "demo/text.py") - len("demo/text.py") - 30),
}


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_a_defect_is_zipfiles_error_and_no_folder_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          defect: str) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/text.py": TEXT})
    original = wheel.read_bytes()
    DEFECTS[defect](wheel)
    assert wheel.read_bytes() != original
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with pytest.raises((zipfile.BadZipFile, zlib.error, EOFError)):
        wheelzip.unpack_checked(wheel, wheelzip.Limits())
    assert not list(temp.iterdir())
