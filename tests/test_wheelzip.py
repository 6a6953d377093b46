"""wheelzip: the unpack begun in a forked child gives what the unpack in process gives, or is not used."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from crosslane import wheelzip
from crosslane_helpers import REPO

NAME = "demo-1.0-cp314-cp314-linux_riscv64.whl"


def make_wheel(path: Path, members: dict[str, bytes], record: str = "") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr("demo-1.0.dist-info/RECORD", record)
    return path


def record_line(name: str, data: bytes) -> str:
    return f"{name},sha256={wheelzip.record_hash(hashlib.sha256(data).digest())},{len(data)}\n"


# Several chunks (CHUNK is 1 MiB): the writer thread's pipeline is crossed, and incompressible, so no bomb.
BIG = os.urandom(3 * wheelzip.CHUNK + 12345)


def test_the_child_unpacks_what_the_process_would(tmp_path: Path) -> None:
    members = {"demo/__init__.py": b"x = 1\n", "demo/big.so": BIG}
    wheel = make_wheel(tmp_path / NAME, members, record_line("demo/__init__.py", b"x = 2\n"))
    wheelzip.start([wheel])
    early = wheelzip._EARLY[wheel.absolute()]
    got = wheelzip.take(wheel, wheelzip.Limits())
    with pytest.raises(ChildProcessError):
        os.waitpid(early.pid, os.WNOHANG)  # reaped by take()
    direct = wheelzip.unpack_checked(wheel, wheelzip.Limits())
    with got.folder as ours, direct.folder:
        assert Path(ours).resolve() == Path(early.folder.name).resolve()  # the child's folder, not a new one
        assert (Path(ours) / "demo/big.so").read_bytes() == BIG
        assert got.hashes == direct.hashes
        assert got.hashes["demo/big.so"] == wheelzip.record_hash(hashlib.sha256(BIG).digest())
        assert got.problems == direct.problems
        assert any("demo/__init__.py: RECORD says sha256=" in p for p in got.problems)
    assert not Path(early.folder.name).exists()


def test_a_wheel_changed_after_the_start_is_unpacked_again(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/a.py": b"old\n"})
    wheelzip.start([wheel])
    stale = wheelzip._EARLY[wheel.absolute()].folder.name
    make_wheel(tmp_path / NAME, {"demo/a.py": b"new, and longer\n"})
    got = wheelzip.take(wheel, wheelzip.Limits())
    with got.folder as folder:
        assert (Path(folder) / "demo/a.py").read_bytes() == b"new, and longer\n"
    assert not Path(stale).exists()


def test_other_limits_than_the_childs_are_applied_in_process(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/big.so": BIG})
    wheelzip.start([wheel])
    with pytest.raises(wheelzip.UnsafeWheel, match="bomb: unpacks to more than 1000 bytes"):
        wheelzip.take(wheel, wheelzip.Limits(max_total_bytes=1000))
    assert not wheelzip._EARLY


@pytest.mark.parametrize(("data", "error"), [
    (b"PK\x03\x04 not a zip at all", zipfile.BadZipFile),
    (None, wheelzip.UnsafeWheel),
])
def test_the_childs_defect_is_raised_as_the_same_error(tmp_path: Path, data: bytes | None,
                                                       error: type[Exception]) -> None:
    wheel = tmp_path / NAME
    if data is None:
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr("../escape.py", b"")
    else:
        wheel.write_bytes(data)
    with pytest.raises(error) as direct:
        wheelzip.unpack_checked(wheel, wheelzip.Limits())
    wheelzip.start([wheel])
    with pytest.raises(error) as early:
        wheelzip.take(wheel, wheelzip.Limits())
    assert str(early.value) == str(direct.value)


# struct.error shares its short name with zlib.error, a defect the parent would report as a corrupt zip.
@pytest.mark.parametrize("failure", [KeyError("a defect of crosslane's, not of the zip"), struct.error("short")])
def test_anything_else_the_child_meets_is_met_again_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              failure: Exception) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/a.py": b"a\n"})
    parent, real = os.getpid(), wheelzip._unpack_into

    def only_the_child_fails(*args: object) -> object:
        if os.getpid() != parent:
            raise failure
        return real(*args)  # type: ignore[arg-type]
    monkeypatch.setattr(wheelzip, "_unpack_into", only_the_child_fails)
    wheelzip.start([wheel])
    stale = wheelzip._EARLY[wheel.absolute()].folder.name
    got = wheelzip.take(wheel, wheelzip.Limits())
    with got.folder as folder:
        assert (Path(folder) / "demo/a.py").read_bytes() == b"a\n"
        assert Path(folder).resolve() != Path(stale).resolve()
    assert not Path(stale).exists()


def test_one_child_for_the_first_wheel_only(tmp_path: Path) -> None:
    first, second = (make_wheel(tmp_path / f"demo{i}-1.0-cp314-cp314-linux_riscv64.whl", {}) for i in (1, 2))
    wheelzip.start([tmp_path / "notes.txt", first, second])
    assert list(wheelzip._EARLY) == [first.absolute()]
    for wheel in (first, second):
        with wheelzip.take(wheel, wheelzip.Limits()).folder:
            pass
    assert not wheelzip._EARLY


def test_only_regular_wheel_files_start(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.whl")
    (tmp_path / "folder.whl").mkdir()
    wheelzip.start([tmp_path / "pipe.whl", tmp_path / "folder.whl", tmp_path / "absent.whl",
                    make_wheel(tmp_path / "demo-1.0-py3-none-any.zip", {})])
    assert not wheelzip._EARLY


@pytest.mark.spawns
def test_a_command_that_stops_before_take_leaves_no_folder_and_no_child(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/big.so": BIG})
    temp = tmp_path / "tmp"
    temp.mkdir()
    program = ("import sys; from pathlib import Path; from crosslane import wheelzip; wheelzip.start([sys.argv[1]]); "
               "print(wheelzip._EARLY[Path(sys.argv[1]).absolute()].pid)")
    done = subprocess.run([sys.executable, "-c", program, str(wheel)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(REPO / "scripts")}, check=True)
    pid = int(done.stdout)
    assert not list(temp.iterdir())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


# The inflaters a deflated member may be read with: ISA-L (the default where installed) and zlib, the same code.
INFLATERS = [pytest.param(wheelzip.fast_inflater(), id="isal"), pytest.param(zlib, id="zlib")]


def zipfile_reading(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes | type[BaseException]:
    """What zipfile's own reader gives for *member*: its bytes, or the kind of error it raises."""
    try:
        return archive.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        return type(exc)


def chunked_reading(archive: zipfile.ZipFile, member: zipfile.ZipInfo,
                    inflater: ModuleType) -> bytes | type[BaseException]:
    try:
        chunks = list(wheelzip.member_chunks(archive, member, inflater))
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        return type(exc)
    assert all(len(chunk) <= wheelzip.CHUNK for chunk in chunks)
    return b"".join(chunks)


def test_isal_is_what_the_default_reads_with() -> None:
    found = wheelzip.fast_inflater()  # a dependency on x86_64: the default must not fall back silently
    assert found is not None and found.__name__ == "isal.isal_zlib"


@pytest.mark.parametrize("inflater", INFLATERS)
def test_a_deflated_member_reads_as_zipfile_reads_it(tmp_path: Path, inflater: ModuleType) -> None:
    text = b"".join(b"line %d of a compressible member\n" % i for i in range(200_000))  # ~6 MB, many chunks out
    wheel = make_wheel(tmp_path / NAME, {"demo/big.so": BIG, "demo/text.py": text, "demo/empty.py": b""})
    with zipfile.ZipFile(wheel, "a", zipfile.ZIP_STORED) as archive:
        archive.writestr("demo/stored.txt", b"kept as it is\n")  # read through zipfile: not deflated
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            assert chunked_reading(archive, member, inflater) == archive.read(member), member.filename


def flip(wheel: Path, offset: int) -> None:
    data = bytearray(wheel.read_bytes())
    data[offset] ^= 0xFF
    wheel.write_bytes(bytes(data))


def data_offset(wheel: Path, name: str) -> int:
    with zipfile.ZipFile(wheel) as archive:
        member = archive.getinfo(name)
    with wheel.open("rb") as raw:
        raw.seek(member.header_offset)
        header = wheelzip.LOCAL_HEADER.unpack(raw.read(wheelzip.LOCAL_HEADER.size))
    return member.header_offset + wheelzip.LOCAL_HEADER.size + int(header[-2]) + int(header[-1])


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


@pytest.mark.parametrize("inflater", INFLATERS)
@pytest.mark.parametrize("defect", [*DEFECTS, "file-cut-while-open"])
def test_a_defect_is_the_error_zipfile_raises(tmp_path: Path, defect: str, inflater: ModuleType) -> None:
    wheel = make_wheel(tmp_path / NAME, {"demo/text.py": TEXT})
    original = wheel.read_bytes()
    cut = defect == "file-cut-while-open"
    if not cut:
        DEFECTS[defect](wheel)
        assert wheel.read_bytes() != original
    with zipfile.ZipFile(wheel) as archive:
        member = archive.getinfo("demo/text.py")
        if cut:  # the file shrinks under an open archive: the member's stream ends inside it
            os.truncate(wheel, data_offset(wheel, "demo/text.py") + 100)
        theirs = zipfile_reading(archive, member)
        ours = chunked_reading(archive, member, inflater)
    assert isinstance(theirs, type), f"{defect}: zipfile read it whole"
    assert ours is theirs
