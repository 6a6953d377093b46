"""What `invoke index --input` serves: only regular files that are wheels (a zip holding the WHEEL file of the
name and version its file name states), each through a real invoke process. A link named *.whl (to a host file or
to a real wheel), a text file, a zip of another project, a folder or a FIFO with a wheel's name, a wheel whose name
leaves no room for its provenance statement, a statement that is a link: each is bad input, exit 2, one line naming
it, and nothing is published."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from crosslane.files import stamps
from crosslane.shipping import provenance
from gatekit import make_wheel
from hostilekit import Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("4-5 wheels an index serves")]

NAME = "demo-1.0-py3-none-any.whl"


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def index(box: Sandbox) -> tuple[str, ...]:
    return "index", "--input", str(box.inputs), "--output", str(box.root / "published")


def host_file_link(box: Sandbox) -> Path:
    (box.inputs / NAME).symlink_to(box.outside / "sentinel.txt")  # /etc/passwd, in the issue
    return box.inputs / NAME


def wheel_link(box: Sandbox) -> Path:
    real = make_wheel(box.outside, NAME, {"demo/__init__.py": b""})
    (box.inputs / NAME).symlink_to(real)
    return box.inputs / NAME


def text_file(box: Sandbox) -> Path:
    (box.inputs / NAME).write_text("root:x:0:0:root:/root:/bin/bash\n")
    return box.inputs / NAME


def zip_of_nothing(box: Sandbox) -> Path:
    with zipfile.ZipFile(box.inputs / NAME, "w") as archive:
        archive.writestr("demo/__init__.py", "")
    return box.inputs / NAME


def another_projects_wheel(box: Sandbox) -> Path:
    return make_wheel(box.inputs, NAME, {"evil/__init__.py": b""}, dist_info="evil-1.0.dist-info")


def another_version(box: Sandbox) -> Path:
    return make_wheel(box.inputs, NAME, {"demo/__init__.py": b""}, dist_info="demo-2.0.dist-info")


def folder(box: Sandbox) -> Path:
    (box.inputs / NAME).mkdir()
    return box.inputs / NAME


def fifo(box: Sandbox) -> Path:
    os.mkfifo(box.inputs / NAME)
    return box.inputs / NAME


def statement_link(box: Sandbox) -> Path:
    wheel = make_wheel(box.inputs, NAME, {"demo/__init__.py": b""})
    statement = box.outside / "statement.json"
    statement.write_text(json.dumps({"_type": provenance.STATEMENT_TYPE, "subject": [
        {"name": NAME, "digest": {"sha256": stamps.file_sha256(wheel)}}]}))
    (box.inputs / (NAME + provenance.SUFFIX)).symlink_to(statement)
    return box.inputs / (NAME + provenance.SUFFIX)


def long_name(box: Sandbox) -> Path:
    """A valid wheel of a 250-character name: its statement's name would be 262 characters, past NAME_MAX."""
    project = "d" * (250 - len("-1.0-py3-none-any.whl"))
    return make_wheel(box.inputs, f"{project}-1.0-py3-none-any.whl", {f"{project}/__init__.py": b""},
                      dist_info=f"{project}-1.0.dist-info")


CASES: dict[str, tuple[Callable[[Sandbox], Path], str]] = {
    "link-to-a-host-file": (host_file_link, "a link, not a regular file"),
    "link-to-a-real-wheel": (wheel_link, "a link, not a regular file"),
    "text-file": (text_file, "not a wheel (not a zip"),
    "zip-without-WHEEL": (zip_of_nothing, "not a wheel (no demo-1.0.dist-info/WHEEL in it)"),
    "another-projects-zip": (another_projects_wheel, "not a wheel (no demo-1.0.dist-info/WHEEL in it)"),
    "another-version": (another_version, "not a wheel (no demo-1.0.dist-info/WHEEL in it)"),
    "folder": (folder, "a folder, not a regular file"),
    "fifo": (fifo, "a FIFO, not a regular file"),
    "statement-link": (statement_link, "a link or special file, not a provenance statement"),
    "name-too-long": (long_name, "a name of 250 characters, too long to have its provenance statement"),
}


@pytest.mark.parametrize("case", CASES)
def test_only_regular_files_that_are_wheels_are_served(box: Sandbox, case: str) -> None:
    make, words = CASES[case]
    named = make(box)
    box.refused(2, f"{named}: {words}", *index(box))
    assert not (box.root / "published").exists()


def test_a_wheel_and_its_statement_are_served(box: Sandbox) -> None:
    wheel = make_wheel(box.inputs, NAME, {"demo/__init__.py": b""})
    digest = stamps.file_sha256(wheel)
    (box.inputs / (NAME + provenance.SUFFIX)).write_text(json.dumps({"_type": provenance.STATEMENT_TYPE, "subject": [
        {"name": NAME, "digest": {"sha256": digest}}]}))
    done = box.invoke(*index(box))
    assert done.rc == 0, done.out
    files = box.root / "published" / "files"
    assert sorted(p.name for p in files.iterdir()) == [NAME, NAME + provenance.SUFFIX]
    assert f"{NAME}#sha256={digest}" in (box.root / "published/simple/demo/index.html").read_text()
