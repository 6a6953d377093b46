"""What decides "up to date" and what a killed run leaves behind, fed what a damaged disk or another tool can leave:
a link to a folder in a source tree, a leftover folder named by a number no process can have, a lock file that is
not text."""

from __future__ import annotations

import fcntl
import io
import os
from pathlib import Path

import pytest

from crosslane.errors import MissingPrerequisite
from crosslane.files import atomic, locks, stamps
from crosslane.log import Log


def test_a_link_to_a_folder_is_part_of_a_trees_digest(tmp_path: Path) -> None:
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "api.h").write_text(version)
    (tmp_path / "include").symlink_to("v1")
    first = stamps.tree_digest(tmp_path)
    (tmp_path / "include").unlink()
    (tmp_path / "include").symlink_to("v2")
    retargeted = stamps.tree_digest(tmp_path)
    (tmp_path / "include").unlink()
    removed = stamps.tree_digest(tmp_path)
    assert len({first, retargeted, removed}) == 3  # a stale "up to date" for a changed source otherwise


def test_a_tree_without_folder_links_keeps_its_digest(tmp_path: Path) -> None:
    """The pins of versions.toml (crates' digests) were taken before links to folders were hashed."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("int a;\n")
    (tmp_path / "link").symlink_to("src/a.c")
    before = "5bf84080a661dee1eb90dd33c55aee78d0323aec4c570d9ce1f10f6d2dd43d92"  # dd883ac's tree_digest of this tree
    assert stamps.tree_digest(tmp_path) == before


def test_a_leftover_named_by_no_possible_process_is_swept_not_a_traceback(tmp_path: Path) -> None:
    final = tmp_path / "out"
    huge = tmp_path / f".out.{10 ** 20}.partial"
    huge.mkdir()
    zero = tmp_path / ".out.0.partial"
    zero.mkdir()
    assert atomic.sweep_stale(final) == [huge]
    assert zero.is_dir()  # pid 0 names no process of ours: left for whoever made it
    with atomic.replace_dir(final) as staging:
        (staging / "x").write_text("x")
    assert (final / "x").read_text() == "x"


def test_a_held_lock_whose_file_is_not_text_is_still_one_line(tmp_path: Path) -> None:
    lock = tmp_path / ".lock"
    lock.write_bytes(b"pid \xff\xfe\n")
    with lock.open("rb") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(MissingPrerequisite, match=r"the build tree is in use by pid \ufffd\ufffd") as caught, \
                locks.hold(lock, "the build tree", Log(io.StringIO()), wait=False):
            pass
    assert caught.value.exit_code == 3 and os.linesep not in caught.value.one_line()


def test_stamps_roundtrip(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.c").write_text("int a;")
    (tree / "sub" / "b.c").write_text("int b;")
    (tree / "link").symlink_to("a.c")
    first = stamps.tree_digest(tree)
    (tree / "sub" / "b.c").write_text("int b2;")
    assert stamps.tree_digest(tree) != first
    key = stamps.key({"x": 1})
    assert not stamps.is_current(tmp_path, key)
    stamps.write(tmp_path, key, {"x": 1})
    assert stamps.is_current(tmp_path, key)
    assert not stamps.is_current(tmp_path, stamps.key({"x": 2}))
    stamps.clear(tmp_path)
    assert stamps.read(tmp_path) is None
