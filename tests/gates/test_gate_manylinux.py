"""The manylinux gate on real shared objects (gcc) in wheels, analyzed by the real auditwheel: a name that claims an
older glibc than a symbol needs, or a policy a non-whitelisted library breaks, fails naming the symbol or library."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.gates import manylinux, verify
from crosslane.report import Verdict
from gatekit import PLAIN_C, THREADS_C, USES_DEP_C, compiled, make_wheel

pytestmark = pytest.mark.spawns

def wheel_with(tmp_path: Path, platform: str, library: bytes) -> Path:
    return make_wheel(tmp_path, f"demo-1.0-cp311-cp311-{platform}.whl", {"demo/libdemo.so": library})


def test_a_glibc_symbol_newer_than_the_claim_is_named(tmp_path: Path) -> None:
    library = compiled(tmp_path, "threads", THREADS_C)  # pthread_create@GLIBC_2.34 (libpthread merged into libc)
    found = manylinux.tag_row(wheel_with(tmp_path, "manylinux_2_17_x86_64", library), Arch.AMD64)
    assert found is not None and found.verdict is Verdict.FAIL
    assert "GLIBC_2.34 of libc.so.6" in found.reason and "newer than the policy allows" in found.reason


def test_an_honest_claim_passes(tmp_path: Path) -> None:
    library = compiled(tmp_path, "threads", THREADS_C)
    found = manylinux.tag_row(wheel_with(tmp_path, "manylinux_2_34_x86_64", library), Arch.AMD64)
    assert found is not None and found.verdict is Verdict.PASS, found
    assert "allow manylinux_2_34_x86_64" in found.reason


def test_a_library_outside_the_policy_is_named(tmp_path: Path) -> None:
    dep = tmp_path / "deps" / "lib"
    dep.mkdir(parents=True)
    (dep / "libcrosslanedep.so").write_bytes(compiled(tmp_path, "dep", "int dep(void) { return 2; }\n",
                                                      "-Wl,-soname,libcrosslanedep.so"))
    library = compiled(tmp_path, "uses", USES_DEP_C, "-L", str(dep), "-lcrosslanedep")
    wheel = wheel_with(tmp_path, "manylinux_2_17_x86_64", library)
    found = manylinux.tag_row(wheel, Arch.AMD64)
    assert found is not None and found.verdict is Verdict.FAIL
    assert "needs libcrosslanedep.so (outside the policy's libraries" in found.reason


def test_a_linux_tag_claims_nothing(tmp_path: Path) -> None:
    assert manylinux.tag_row(wheel_with(tmp_path, "linux_x86_64", compiled(tmp_path, "p", PLAIN_C)),
                             Arch.AMD64) is None


def test_a_policy_auditwheel_does_not_have_for_the_arch_is_a_failure(tmp_path: Path) -> None:
    library = compiled(tmp_path, "p", PLAIN_C, cc="riscv64-linux-gnu-gcc")
    found = manylinux.tag_row(wheel_with(tmp_path, "manylinux_2_17_riscv64", library), Arch.RISCV64)
    assert found is not None and found.verdict is Verdict.FAIL
    assert "manylinux_2_17_riscv64 is no policy auditwheel knows" in found.reason


def test_a_riscv64_wheel_is_analyzed_on_an_x86_host(tmp_path: Path) -> None:
    library = compiled(tmp_path, "p", PLAIN_C, cc="riscv64-linux-gnu-gcc")
    found = manylinux.tag_row(wheel_with(tmp_path, "manylinux_2_31_riscv64", library), Arch.RISCV64)
    assert found is not None and found.verdict is Verdict.PASS, found


def test_verify_reports_the_tag_row_beside_the_wheel_gates(tmp_path: Path) -> None:
    library = compiled(tmp_path, "threads", THREADS_C)
    wheel = wheel_with(tmp_path, "manylinux_2_17_x86_64", library)
    rows = verify.verify(Arch.AMD64, [wheel], sysroot_path=None, python_version=None)
    tagged = [r for r in rows if r.subject == "manylinux"]
    assert len(tagged) == 1 and tagged[0].verdict is Verdict.FAIL


def test_the_search_path_is_the_sysroots_never_the_hosts(tmp_path: Path) -> None:
    root = tmp_path / "sysroot"
    (root / "usr/lib/riscv64-linux-gnu").mkdir(parents=True)
    prefix = tmp_path / "dep"
    (prefix / "lib").mkdir(parents=True)
    search = manylinux.ldpaths(root, Arch.RISCV64, [prefix, tmp_path / "missing"])
    assert search.split(":") == [str(prefix / "lib"), str(root / "usr/lib/riscv64-linux-gnu"), str(root / "usr/lib")]


def test_a_manylinux_name_on_a_wheel_without_elf_files_fails(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", {"demo/__init__.py": b""})
    found = manylinux.tag_row(wheel, Arch.AMD64)
    assert found is not None and found.verdict is Verdict.FAIL and "holds no ELF file" in found.reason
