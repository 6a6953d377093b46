"""treecheck: a tree's entries checked whole, links resolved as the kernel will resolve them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crosslane.errors import ConfigError
from crosslane.files import treecheck
from crosslane.files.treecheck import Entry, Refused


def check(*entries: Entry) -> dict[tuple[str, ...], Entry]:
    return treecheck.check(entries)


@pytest.mark.parametrize(("entries", "words"), [
    ((Entry("/etc/passwd", "file"),), "is absolute"),
    ((Entry("a/../b", "file"),), "'..' component"),
    ((Entry("a/./b", "file"),), "'.' component"),
    ((Entry("a//b", "file"),), "'//' component"),
    ((Entry("", "file"),), "empty"),
    ((Entry("a\0b", "file"),), "NUL"),
    ((Entry("n" * 256, "file"),), "longer than 255"),
    ((Entry("/".join(["d" * 200] * 21), "file"),), "longer than 4096"),
    ((Entry("x", "file"), Entry("x", "file")), "appears twice"),
    ((Entry("l", "link", "d"), Entry("l/x", "file")), "below the link 'l'"),
    ((Entry("f", "file"), Entry("f/x", "file")), "below the file 'f'"),
    ((Entry("l", "link", "../out"),), "leads outside"),
    ((Entry("l", "link", "/etc"),), "leads outside"),
    ((Entry("l", "link", ""),), "leads outside"),
    ((Entry("a", "link", "."), Entry("b", "link", "a/../x")), "leads outside"),
    ((Entry("d/a", "link", ".."), Entry("d/b", "link", "a/../x")), "leads outside"),
    ((*(Entry(f"l{i}", "link", f"l{i + 1}") for i in range(45)), Entry("l45", "file")), "deeper than 40"),
    ((Entry("a", "link", "b"), Entry("b", "link", "a")), "deeper than 40"),
], ids=["absolute", "dotdot", "dot", "double-slash", "empty", "nul", "long-name", "long-path", "twice",
        "below-link", "below-file", "link-out", "link-absolute", "link-empty", "chain-out", "nested-chain-out",
        "chain-45", "loop"])
def test_a_hostile_tree_is_refused(entries: tuple[Entry, ...], words: str) -> None:
    with pytest.raises(Refused, match=words):
        treecheck.check(entries)


def test_links_that_stay_inside_pass() -> None:
    tree = check(Entry("lib", "dir"), Entry("lib/libx.so.1", "file"), Entry("lib/libx.so", "link", "libx.so.1"),
                 Entry("a", "link", "."), Entry("b", "link", "a/lib/../lib/libx.so"), Entry("up", "link", "lib/.."),
                 Entry("dangling", "link", "nowhere/inside"))
    assert set(tree) >= {("lib",), ("lib", "libx.so")}


def test_written_without_following_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    tree = check(Entry("d/f", "file"), Entry("d/l", "link", "f"))
    for parts, entry in tree.items():
        if entry.kind == "file":
            os.close(treecheck.create_file(root, parts, 0o4755))
    treecheck.make_links(root, tree)
    assert (root / "d/l").readlink() == Path("f") and (root / "d/f").stat().st_mode & 0o7777 == 0o755
    (root / "e").symlink_to(outside)
    with pytest.raises(Refused, match="became a link"):
        treecheck.create_file(root, ("e", "x"), 0o644)
    with pytest.raises(FileExistsError):
        treecheck.create_file(root, ("d", "f"), 0o644)
    assert list(outside.iterdir()) == []


def test_refuse_names_where_and_the_fix() -> None:
    error = treecheck.refuse(ConfigError, "pack.tar.gz", "download it again", Refused("'x' appears twice"))
    assert error.one_line() == "pack.tar.gz: 'x' appears twice; refusing it; download it again"
