"""verify() dispatch on paths, and the DT_NEEDED search paths (unit: no process, header-only ELF files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import UsageError
from crosslane.gates import dtneeded
from crosslane.gates.verify import verify
from crosslane.report import Verdict
from gatekit import elf_header


def test_no_paths_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no PATH"):
        verify(Arch.RISCV64, [], sysroot_path=None, python_version=None)


def test_each_kind_of_path(tmp_path: Path) -> None:
    (tmp_path / "tree" / "lib").mkdir(parents=True)
    (tmp_path / "tree" / "lib" / "libgood.so.1").write_bytes(elf_header(243, e_flags=5))
    (tmp_path / "tree" / "lib" / "libfake.so").write_text("INPUT(-lfoo)\n")
    (tmp_path / "tree" / "README").write_text("text")
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    rows = verify(Arch.RISCV64, [tmp_path / "tree", tmp_path / "empty", tmp_path / "notes.txt",
                                 tmp_path / "missing.whl"], sysroot_path=None, python_version="3.13")
    got = [(r.component, r.subject, r.verdict) for r in rows]
    assert got == [
        ("lib/libfake.so", "elf-arch", Verdict.FAIL),
        ("lib/libgood.so.1", "elf-arch", Verdict.PASS),
        (str(tmp_path / "empty"), "verify", Verdict.SKIP),
        (str(tmp_path / "notes.txt"), "verify", Verdict.FAIL),
        (str(tmp_path / "missing.whl"), "verify", Verdict.FAIL),
        ("lib/libgood.so.1", "dt-needed", Verdict.SKIP),
        ("(all ELF files)", "glibc-floor", Verdict.SKIP),
    ]
    assert rows[0].reason.startswith("DEFECT lib/libfake.so: not an ELF file")
    assert "invoke sysroot --arch riscv64" in rows[-2].reason
    assert rows[-1].reason.endswith("(no sysroot manifest to compare with)")


def test_ld_so_conf_includes_and_default_dirs(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    (etc / "ld.so.conf.d").mkdir(parents=True)
    (etc / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n/opt/extra/lib # comment\n")
    (etc / "ld.so.conf.d" / "a.conf").write_text("# multiarch\n/usr/local/lib/riscv64-linux-gnu\n")
    (etc / "ld.so.conf.d" / "ignored.txt").write_text("/nope\n")
    dirs = [p.relative_to(tmp_path).as_posix() for p in dtneeded.sysroot_dirs(tmp_path, Arch.RISCV64)]
    assert dirs == ["usr/local/lib/riscv64-linux-gnu", "opt/extra/lib", "lib/riscv64-linux-gnu",
                    "usr/lib/riscv64-linux-gnu", "lib", "usr/lib"]
    assert "lib64" in [p.name for p in dtneeded.sysroot_dirs(tmp_path, Arch.AMD64)]


def test_ld_so_conf_d_without_ld_so_conf(tmp_path: Path) -> None:
    (tmp_path / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (tmp_path / "etc" / "ld.so.conf.d" / "x.conf").write_text("/custom\n")
    assert dtneeded.ld_so_conf_dirs(tmp_path) == [tmp_path / "custom"]


def test_staging_prefix_dirs_come_first(tmp_path: Path) -> None:
    resolver = dtneeded.Resolver(Arch.ARM64, tmp_path / "sysroot", staging=[tmp_path / "stage"])
    dirs = resolver.common_dirs()
    assert dirs[:2] == [tmp_path / "stage" / "lib", tmp_path / "stage" / "lib" / "aarch64-linux-gnu"]
    assert tmp_path / "sysroot" / "usr" / "lib" / "aarch64-linux-gnu" in dirs


def test_target_python_version_without_python_is_none(tmp_path: Path) -> None:
    from crosslane.gates.verify import target_python_version
    assert target_python_version(None, Arch.RISCV64) is None
    assert target_python_version(tmp_path, Arch.RISCV64) is None
