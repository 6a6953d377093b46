"""The link map and the root's dpkg records read as the papers read them, on a written map and a made-up root (the
real link and root: test_baremetal_papers.py): every line form GNU ld writes is read or refused, never skipped;
paths are taken against the link's folder; a held package is installed; a root's links are followed inside it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePosixPath

import pytest

from crosslane.baremetal import papers
from crosslane.errors import StepFailed

MAP = f"""{papers.MEMBERS}

/usr/lib/gcc/riscv64-unknown-elf/15/../../../../riscv64-unknown-elf/lib/libc.a(memcpy.c.o)
                              CMakeFiles/r.dir/main.c.obj (memcpy)
/x/libm.a(sin.o)              main.c.obj (sin)
/srv/with space/build/libexecutorch.a(method.cpp.obj)
                              CMakeFiles/r.dir/main.c.obj (x)

Merging object attributes

Memory Configuration

Linker script and memory map

LOAD /usr/riscv64-unknown-elf/lib/crt0-hosted.o
LOAD CMakeFiles/r.dir/main.c.obj
LOAD /usr/lib/gcc/riscv64-unknown-elf/15/libgcc.a
"""


def test_every_line_form_is_read_and_relative_paths_are_the_links_folders() -> None:
    found = papers.linked_inputs(MAP, Path("/b/image"))
    assert found == [PurePosixPath(p) for p in (
        "/usr/riscv64-unknown-elf/lib/libc.a", "/x/libm.a", "/srv/with space/build/libexecutorch.a",
        "/usr/riscv64-unknown-elf/lib/crt0-hosted.o", "/b/image/CMakeFiles/r.dir/main.c.obj")]
    # a loaded archive none of whose members was taken (libgcc.a here) is not an input


def test_an_archive_line_it_cannot_read_is_refused() -> None:
    thin = MAP.replace("/x/libm.a(sin.o)              main.c.obj (sin)", "/x/thin/sin.o     main.c.obj (sin)")
    with pytest.raises(StepFailed, match=r"archive line crosslane cannot read: '/x/thin/sin\.o"):
        papers.linked_inputs(thin, Path("/b"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root as mmdebstrap leaves it: dpkg's lists and status, a package's copyright, a link with an absolute
    target (the root's own, not the host's)."""
    root = tmp_path / "root"
    info = root / "var/lib/dpkg/info"
    info.mkdir(parents=True)
    (info / "picolibc-x.list").write_text("/usr\n/usr/lib\n/usr/lib/libc.a\n/usr/lib/libm.a\n")
    (root / "var/lib/dpkg/status").write_text(
        "Package: picolibc-x\nStatus: hold ok installed\nArchitecture: all\nVersion: 1.8-1\n"
        "Source: picolibc (1.8-1)\nDescription: x\n second line: not a field\n\n"
        "Package: gone-x\nStatus: deinstall ok config-files\nArchitecture: all\nVersion: 1\n")
    (root / "usr/lib/real").mkdir(parents=True)
    (root / "usr/lib/libc.a").write_bytes(b"!<arch>\nlibc")
    (root / "usr/lib/real/libm.a").write_bytes(b"!<arch>\nlibm")
    os.symlink("/usr/lib/real/libm.a", root / "usr/lib/libm.a")  # absolute: inside the root, not the host's
    (root / "usr/share/doc/picolibc-x").mkdir(parents=True)
    (root / "usr/share/doc/picolibc-x/copyright").write_text("Format: x\n")
    return root


def test_a_held_package_owns_its_files_and_links_are_followed_inside_the_root(root: Path) -> None:
    parts = papers.linked_parts(root, [PurePosixPath("/usr/lib/libc.a"), PurePosixPath("/usr/lib/libm.a"),
                                       PurePosixPath("/b/image/main.o")], [Path("/b/image")], "img")
    assert [(p.owner.package, p.owner.version, p.owner.source, p.origin) for p in parts] == [
        ("picolibc-x", "1.8-1", "picolibc", "/usr/lib/libc.a"), ("picolibc-x", "1.8-1", "picolibc", "/usr/lib/libm.a")]
    assert parts[1].sha256 == hashlib.sha256(b"!<arch>\nlibm").hexdigest()
    assert parts[0].copyright == root / "usr/share/doc/picolibc-x/copyright"


def test_a_package_not_installed_owns_nothing_and_a_link_out_of_the_root_is_refused(root: Path) -> None:
    (root / "var/lib/dpkg/info/gone-x.list").write_text("/usr/lib/gone.a\n")
    (root / "usr/lib/gone.a").write_bytes(b"x")
    with pytest.raises(StepFailed, match=r"the link took /usr/lib/gone\.a, which no package"):
        papers.linked_parts(root, [PurePosixPath("/usr/lib/gone.a")], [], "img")
    os.symlink("../../../../../etc/passwd", root / "usr/lib/out.a")
    with pytest.raises(StepFailed, match="leads out of it"):
        papers.inside(root, PurePosixPath("/usr/lib/out.a"))
