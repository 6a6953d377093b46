"""Sysroots: alternatives and links as units; a real forky sysroot per arch as integration."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from crosslane.archs import Arch, info
from crosslane.config import Config
from crosslane.errors import MissingPrerequisite
from crosslane.guest import cpython, sysroot

POSTINST = """#!/bin/sh
set -e
update-alternatives --install /usr/lib/riscv64-linux-gnu/libblas.so.3 \\
                    libblas.so.3-riscv64-linux-gnu /usr/lib/riscv64-linux-gnu/blas/libblas.so.3 10
update-alternatives --install /usr/sbin/rmt rmt /usr/sbin/rmt-tar 50 \\
    --slave /usr/share/man/man8/rmt.8.gz rmt.8.gz /usr/share/man/man8/rmt-tar.8.gz
update-alternatives --install "$DPKG_ROOT/x" x /y 5
"""


def test_parse_alternatives() -> None:
    assert sysroot.parse_alternatives(POSTINST) == [
        ("/usr/lib/riscv64-linux-gnu/libblas.so.3", "libblas.so.3-riscv64-linux-gnu",
         "/usr/lib/riscv64-linux-gnu/blas/libblas.so.3", 10),
        ("/usr/sbin/rmt", "rmt", "/usr/sbin/rmt-tar", 50),
        ("/usr/share/man/man8/rmt.8.gz", "rmt.8.gz", "/usr/share/man/man8/rmt-tar.8.gz", 50),
    ]


def test_apply_alternatives_highest_priority_wins(tmp_path: Path) -> None:
    libdir = tmp_path / "usr/lib/riscv64-linux-gnu"
    for impl in ("blas", "openblas"):
        (libdir / impl).mkdir(parents=True)
        (libdir / impl / "libblas.so.3").write_text(impl)
    control = tmp_path / "var/lib/crosslane-control"
    for name, impl, prio in (("libblas3", "blas", 10), ("libopenblas0", "openblas", 100)):
        (control / name).mkdir(parents=True)
        (control / name / "postinst").write_text(
            f"update-alternatives --install /usr/lib/riscv64-linux-gnu/libblas.so.3 libblas.so.3 "
            f"/usr/lib/riscv64-linux-gnu/{impl}/libblas.so.3 {prio}\n")
    sysroot.apply_alternatives(tmp_path)
    link = libdir / "libblas.so.3"
    assert os.readlink(link) == "openblas/libblas.so.3"
    assert link.read_text() == "openblas"


def test_relativize_links(tmp_path: Path) -> None:
    (tmp_path / "usr/lib").mkdir(parents=True)
    (tmp_path / "usr/lib/real.so").write_text("x")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/abs").symlink_to("/usr/lib/real.so")
    sysroot.relativize_links(tmp_path)
    assert os.readlink(tmp_path / "etc/abs") == "../usr/lib/real.so"
    assert (tmp_path / "etc/abs").read_text() == "x"


def test_alternatives_that_name_no_link_or_climb_out_are_skipped(tmp_path: Path) -> None:
    script = ('update-alternatives --install "$@"\n'
              "update-alternatives --install /../../../escaped x /usr/bin/real 10\n"
              "update-alternatives --install /usr/bin/x x /usr/bin/../../../real 10\n"
              "update-alternatives --install /usr/bin/y y /usr/bin/real 1" + "0" * 5000 + "\n"
              "update-alternatives --install /usr/bin/z z /usr/bin/real 10 --slave /../out o /usr/bin/real\n")
    assert sysroot.parse_alternatives(script) == [("/usr/bin/z", "z", "/usr/bin/real", 10)]
    control = tmp_path / "root/var/lib/crosslane-control/evil"
    control.mkdir(parents=True)
    (control / "postinst").write_text(script)
    (tmp_path / "root/usr/bin").mkdir(parents=True)
    (tmp_path / "root/usr/bin/real").write_text("x")
    sysroot.apply_alternatives(tmp_path / "root")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]  # nothing made beside the root


def test_an_absolute_link_that_climbs_stays_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/passwd").write_text("the root's")
    (root / "etc/evil").symlink_to("/../../../../etc/passwd")
    sysroot.relativize_links(root)
    assert (root / "etc/evil").resolve() == (root / "etc/passwd").resolve()


def test_key_depends_on_inputs(cfg: Config) -> None:
    spec = cfg.sysroot
    assert sysroot.sysroot_key(spec, Arch.RISCV64) != sysroot.sysroot_key(spec, Arch.ARM64)
    assert sysroot.sysroot_path(spec, Arch.RISCV64).name.startswith(f"riscv64-{spec.suite}-")


def test_missing_python_headers_is_a_prerequisite_error(tmp_path: Path) -> None:
    with pytest.raises(MissingPrerequisite, match="no target Python headers"):
        cpython.locate(tmp_path, Arch.RISCV64)


@pytest.mark.cross
@pytest.mark.network
@pytest.mark.parametrize("arch", list(Arch), ids=[a.value for a in Arch])
def test_real_sysroot(sysroots: dict[Arch, Path], cfg: Config, arch: Arch) -> None:
    root = sysroots[arch]
    triplet = info(arch).triplet
    assert (root / "lib").is_symlink() and os.readlink(root / "lib") == "usr/lib"
    assert (root / info(arch).dynamic_loader.lstrip("/")).exists()
    manifest = json.loads((root / sysroot.MANIFEST).read_text())
    names = {p["package"] for p in manifest["packages"]}
    assert set(cfg.sysroot.packages_for(arch)) <= names
    assert all(len(p["sha256"]) == 64 for p in manifest["packages"])
    blas = root / f"usr/lib/{triplet}/libblas.so.3"
    assert blas.is_symlink() and blas.exists(), "the libblas.so.3 alternative was not made"
    assert not os.readlink(blas).startswith("/")
    absolute = [p for p in root.rglob("*") if p.is_symlink() and os.readlink(p).startswith("/")]
    assert absolute == []
    python = cpython.locate(root, arch)
    assert python.version == "3.14"
    assert python.ext_suffix == f".cpython-314-{triplet}.so"
    assert python.pyconfig.is_file()


@pytest.mark.cross
@pytest.mark.network
def test_second_call_does_nothing(sysroots: dict[Arch, Path], cfg: Config) -> None:
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    runner = Runner(Log())
    again = sysroot.ensure(runner, cfg.sysroot, Arch.RISCV64)
    assert again.path == sysroots[Arch.RISCV64]
    assert runner.commands == []


def test_manifest_records_versions_hashes_and_which_package_installed_each_file(tmp_path: Path) -> None:
    deb = tmp_path / "libfoo1_1%3a2.0-1_riscv64.deb"
    deb.write_bytes(b"not really a deb")
    control = tmp_path / sysroot.CONTROL / deb.stem
    control.mkdir(parents=True)
    (control / "control").write_text("Package: libfoo1\nSource: foo (2.0-1)\nVersion: 1:2.0-1\n"
                                      "Architecture: riscv64\nDescription: x\n more\n")
    listing = ["drwxr-xr-x root/root         0 2025-01-01 00:00 ./usr/",
               "-rw-r--r-- root/root      1234 2025-01-01 00:00 ./usr/lib/libfoo.so.1.0",
               "lrwxrwxrwx root/root         0 2025-01-01 00:00 ./usr/lib/libfoo.so.1 -> libfoo.so.1.0",
               "-rw-r--r-- root/root        10 2025-01-01 00:00 ./usr/share/doc/libfoo1/a name with spaces"]
    (control / "files").write_text("\n".join(sysroot.listed_paths(listing)) + "\n")
    sysroot.write_manifest(tmp_path, [deb], {"k": 1})
    data = json.loads((tmp_path / sysroot.MANIFEST).read_text())
    assert data["packages"] == [{"package": "libfoo1", "version": "1:2.0-1",
                                 "sha256": hashlib.sha256(b"not really a deb").hexdigest()}]
    owners = sysroot.read_owners(tmp_path)
    assert sorted(owners) == ["usr/lib/libfoo.so.1", "usr/lib/libfoo.so.1.0",
                              "usr/share/doc/libfoo1/a name with spaces"]
    assert owners["usr/lib/libfoo.so.1"] == sysroot.Owner("libfoo1", "1:2.0-1", "riscv64", "foo",
                                                           hashlib.sha256(b"not really a deb").hexdigest())


@pytest.mark.parametrize("text", ["{", "[]", '{"packages": 5}', '{"packages": [{"package": 1}]}', '{"packages": [1]}'])
def test_a_manifest_crosslane_did_not_write_is_an_integrity_error(tmp_path: Path, text: str) -> None:
    from crosslane.archs import Arch
    from crosslane.errors import IntegrityError

    (tmp_path / sysroot.MANIFEST).write_text(text)
    (tmp_path / sysroot.OWNERS).write_text(text)
    with pytest.raises(IntegrityError, match=sysroot.MANIFEST) as manifest:
        sysroot.Sysroot(Arch.RISCV64, tmp_path, "k").packages()
    with pytest.raises(IntegrityError, match=sysroot.OWNERS) as owners:
        sysroot.read_owners(tmp_path)
    assert "invoke sysroot" in manifest.value.one_line() and "invoke sysroot" in owners.value.one_line()


def test_a_sysconfig_variable_is_read_from_its_line_or_from_the_parsed_file(tmp_path: Path) -> None:
    """The one line CPython writes for a string value, else the file parsed (a value split over lines, or two
    candidate lines); never by running the file."""
    from crosslane.guest import cpython

    data = tmp_path / "_sysconfigdata__linux_riscv64-linux-gnu.py"
    data.write_text("build_time_vars = {'ABIFLAGS': '',\n 'EXT_SUFFIX': '.cpython-314-riscv64-linux-gnu.so',\n"
                    " 'CC': 'riscv64-linux-gnu-gcc'\n        ' -pthread'}\nraise SystemExit('never run')\n")
    assert cpython.read_sysconfig_var(data, "EXT_SUFFIX") == ".cpython-314-riscv64-linux-gnu.so"
    assert cpython.read_sysconfig_var(data, "CC") == "riscv64-linux-gnu-gcc -pthread"  # two literals: parsed
    assert cpython.read_sysconfig_var(data, "MISSING") is None
    data.write_text("build_time_vars = {\n 'X': 'a',\n 'X': 'b'}\n")
    assert cpython.read_sysconfig_var(data, "X") == "a"  # as the parse reads it, not a guess between lines
