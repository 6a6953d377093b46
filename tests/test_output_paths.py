"""The paths a user names for crosslane to write (`index --output`, `pack --output`, `report --output`, `--json
FILE`), each through a real invoke process: what is not crosslane's to replace — a link, a device, a FIFO, a folder
it did not make that holds something, a file where a folder is wanted or a folder where a file is — is refused with
exit 2 naming it and left as it was, byte for byte; an empty folder and crosslane's own earlier output are replaced.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.files import userpaths
from crosslane.report import Check, Row, Verdict
from crosslane.reports.summary import to_json
from gatekit import make_wheel
from hostilekit import Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("1 user-named output paths")]

WHEEL = "demo-1.0-py3-none-any.whl"


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def wheels(box: Sandbox) -> Path:
    folder = box.inputs / "wheels"
    if not folder.is_dir():
        folder.mkdir()
        make_wheel(folder, WHEEL, {"demo/__init__.py": b""})
    return folder


def reports(box: Sandbox) -> Path:
    folder = box.inputs / "reports"
    if not folder.is_dir():
        folder.mkdir()
        row = Row(component="canary", arch=Arch.RISCV64, check=Check.SMOKE, verdict=Verdict.PASS, reason="ok",
                  profile="rvv128")
        (folder / "smoke.json").write_text(to_json([row]) + "\n")
    return folder


@dataclass(frozen=True)
class Option:
    """A path option of the CLI: what it names (a folder or a file) and the command that writes it."""

    name: str
    wants: str  # "folder" | "file"
    argv: Callable[[Sandbox, Path], list[str]]


OPTIONS = [
    Option("--output", "folder", lambda box, to: ["index", "--input", str(wheels(box)), "--output", str(to)]),
    Option("--json", "file", lambda box, to: ["schema", "--json", str(to)]),
    # the component was never built: a path crosslane may write would be refused as "not built" instead
    Option("--output", "file", lambda box, to: ["pack", "--arch", "riscv64", "--component", "canary",
                                                "--output", str(to)]),
    # the report writes PREFIX.json and PREFIX.md: the case's path is PREFIX.json
    Option("--output", "file", lambda box, to: ["report", "--input", str(reports(box)), "--output",
                                                str(to.with_suffix(""))]),
]
OPTION_IDS = ["index-output", "json", "pack-output", "report-output"]


def regular_file(path: Path, box: Sandbox) -> None:
    path.write_text("the user's own file\n")


def link_to_file(path: Path, box: Sandbox) -> None:
    path.symlink_to(box.outside / "sentinel.txt")


def link_to_folder(path: Path, box: Sandbox) -> None:
    path.symlink_to(box.outside)


def dangling_link(path: Path, box: Sandbox) -> None:
    path.symlink_to(box.outside / "not-yet")  # written through, it would make the file it points to


def device(path: Path, box: Sandbox) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # /dev/full's numbers
    except PermissionError:
        pytest.skip("mknod needs root (CAP_MKNOD)")


def fifo(path: Path, box: Sandbox) -> None:
    os.mkfifo(path)


def foreign_folder(path: Path, box: Sandbox) -> None:
    path.mkdir()
    (path / "thesis.tex").write_text("years of work\n")
    (path / "data").mkdir()
    (path / "data" / "results.csv").write_text("1,2,3\n")


# kind: (how it is made, what the refusal says to a folder option, and to a file option)
HOSTILE: dict[str, tuple[Callable[[Path, Sandbox], None], str, str]] = {
    "regular-file": (regular_file, "a regular file, not a folder", ""),
    "link-to-file": (link_to_file, "a link, not a folder", "a link, not a regular file"),
    "link-to-folder": (link_to_folder, "a link, not a folder", "a link, not a regular file"),
    "dangling-link": (dangling_link, "a link, not a folder", "a link, not a regular file"),
    "device": (device, "a device, not a folder", "a device, not a regular file"),
    "fifo": (fifo, "a FIFO, not a folder", "a FIFO, not a regular file"),
    "foreign-folder": (foreign_folder, "a folder crosslane did not make, and not empty",
                       "names a folder, not the file to write"),
}


def fingerprint(path: Path) -> list[tuple[object, ...]]:
    """Everything at and under *path* without following a link: kind, device numbers, link text, bytes."""
    found: list[tuple[object, ...]] = []
    for each in [path, *(sorted(path.rglob("*")) if path.is_dir() and not path.is_symlink() else [])]:
        st = each.lstat()
        data = each.read_bytes() if stat.S_ISREG(st.st_mode) else b""
        link = os.readlink(each) if stat.S_ISLNK(st.st_mode) else ""
        found.append((str(each), st.st_mode, st.st_rdev, st.st_ino, link, data))
    return found


# A regular file is what a file option writes: replaced (the last test), not refused.
CASES = [pytest.param(option, kind, id=f"{name}-{kind}") for option, name in zip(OPTIONS, OPTION_IDS, strict=True)
         for kind in HOSTILE if not (option.wants == "file" and kind == "regular-file")]


@pytest.mark.parametrize(("option", "kind"), CASES)
def test_what_is_not_crosslanes_to_replace_is_refused_and_left_as_it_was(box: Sandbox, option: Option,
                                                                         kind: str) -> None:
    target = box.outside / ("target.json" if option.wants == "file" else "target")
    make, to_folder, to_file = HOSTILE[kind]
    make(target, box)
    before, outside = fingerprint(target), fingerprint(box.outside / "sentinel.txt")
    said = to_folder if option.wants == "folder" else to_file
    box.refused(2, f"{option.name} {target}: {said}", *option.argv(box, target))
    assert fingerprint(target) == before and fingerprint(box.outside / "sentinel.txt") == outside
    assert not [p.name for p in box.outside.iterdir() if p.name.startswith(".")], "a staging or .old left beside it"


@pytest.mark.parametrize("option", OPTIONS, ids=OPTION_IDS)
def test_a_path_under_a_file_is_bad_input(box: Sandbox, option: Option) -> None:
    target = box.outside / "sentinel.txt" / ("x.json" if option.wants == "file" else "x")
    box.refused(2, f"{box.outside / 'sentinel.txt'} is a regular file, not a folder", *option.argv(box, target))


def test_an_empty_folder_and_crosslanes_own_index_are_replaced(box: Sandbox) -> None:
    target = box.root / "published"
    target.mkdir()
    argv = OPTIONS[0].argv(box, target)
    for _ in range(2):  # into the empty folder, then over its own earlier output
        done = box.invoke(*argv)
        assert done.rc == 0, done.out
        assert (target / userpaths.MARK).is_file() and (target / "files" / WHEEL).is_file()
        assert (target / "simple" / "demo" / "index.html").is_file()
    (target / userpaths.MARK).unlink()  # no longer marked: someone else's folder now
    box.refused(2, "a folder crosslane did not make", *argv)
    assert (target / "files" / WHEEL).is_file()


@pytest.mark.parametrize("option", [OPTIONS[1], OPTIONS[3]], ids=["json", "report-output"])
def test_a_regular_file_named_for_a_file_is_replaced_by_a_rename_never_written_through(box: Sandbox,
                                                                                       option: Option) -> None:
    """A report file the user names is replaced (as pytest's --junitxml and nox's --report are), whoever wrote it:
    by a rename, so a hard link to the old file keeps the old bytes."""
    target = box.root / "target.json"
    target.write_text("an older report\n")
    os.link(target, box.root / "hard-link")
    for _ in range(2):  # over the foreign file, then over its own
        done = box.invoke(*option.argv(box, target))
        assert done.rc == 0, done.out
        assert target.read_text().startswith(("[", "{")) and not target.is_symlink()
    assert (box.root / "hard-link").read_text() == "an older report\n"
