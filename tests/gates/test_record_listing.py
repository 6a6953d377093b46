"""A RECORD is a listing: each file once. A second row for a path (the first with a wrong hash, the second with the
right one, or the other way round) would let one row be checked while the other says what it likes; the wheel gate
fails naming the path, through `invoke verify` as a user runs it."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from gatekit import record_line
from hostilekit import Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("3 a RECORD that lists a file twice")]

MODULE = "demo/__init__.py"
GOOD = b"print('the file shipped')\n"
WHEEL_FILE = b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n"


def wheel_listing(folder: Path, rows: list[str]) -> Path:
    path = folder / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(MODULE, GOOD)
        archive.writestr("demo-1.0.dist-info/WHEEL", WHEEL_FILE)
        archive.writestr("demo-1.0.dist-info/RECORD", "\n".join(
            [*rows, record_line("demo-1.0.dist-info/WHEEL", WHEEL_FILE), "demo-1.0.dist-info/RECORD,,"]) + "\n")
    return path


@pytest.mark.parametrize("rows", [
    [record_line(MODULE, b"what a reviewer was shown\n"), record_line(MODULE, GOOD)],
    [record_line(MODULE, GOOD), record_line(MODULE, b"what a reviewer was shown\n")],
    [record_line(MODULE, GOOD), record_line(MODULE, GOOD)],
], ids=["wrong-then-right", "right-then-wrong", "right-twice"])
def test_a_path_listed_twice_fails_naming_it(tmp_path: Path, rows: list[str]) -> None:
    box = Sandbox(tmp_path)
    done = box.invoke("verify", "--arch", "riscv64", "--path", str(wheel_listing(box.inputs, rows)))
    assert done.rc == 1 and "Traceback" not in done.out, done.out
    assert f"{MODULE}: listed twice in RECORD (lines 1 and 2)" in done.out, done.out


def test_each_path_once_passes(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    done = box.invoke("verify", "--arch", "riscv64", "--path",
                      str(wheel_listing(box.inputs, [record_line(MODULE, GOOD)])))
    assert done.rc == 0 and "3 sha256 hashes match" in done.out, done.out
