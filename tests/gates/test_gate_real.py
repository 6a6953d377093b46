"""Gates on real artifacts: compiler-built ELF files, the real sysroots, a PyPI wheel, the invoke CLI."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from crosslane.archs import Arch, info
from crosslane.cli import commands, gate_tasks
from crosslane.gates import dtneeded, elf
from crosslane.gates import wheel as wheel_gate
from crosslane.gates.verify import verify
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Row, Verdict
from gatekit import make_wheel


def by_step(rows: list[Row], step: str) -> list[Row]:
    return [r for r in rows if r.subject == step]


@pytest.mark.cross
def test_compiled_elf_facts(cross_elfs: dict[str, Path]) -> None:
    rv = elf.read(cross_elfs["rv-atomic-nolibatomic"])
    assert isinstance(rv, elf.ElfInfo)
    assert (rv.machine_name, rv.float_abi, rv.rvc) == ("RISC-V", "double", True)
    assert rv.undefined_atomics == ("__atomic_fetch_add_1",) and rv.needs_libatomic
    ok = elf.read(cross_elfs["rv-atomic-libatomic"])
    assert isinstance(ok, elf.ElfInfo) and "libatomic.so.1" in ok.needed and not ok.needs_libatomic
    aa = elf.read(cross_elfs["aa-lib"])
    assert isinstance(aa, elf.ElfInfo) and aa.arch == info(Arch.ARM64)
    ext = elf.read(cross_elfs["rv-ext"])
    assert isinstance(ext, elf.ElfInfo) and ext.is_extension_module
    libb = elf.read(cross_elfs["rv-libb-runpath"])
    assert isinstance(libb, elf.ElfInfo) and libb.runpath == ("$ORIGIN/../dep",) and libb.needed[0] == "liba.so"


@pytest.mark.cross
def test_latomic_hint_and_clean_libatomic(cross_elfs: dict[str, Path], sysroots: dict[Arch, Path]) -> None:
    files = [cross_elfs["rv-atomic-nolibatomic"], cross_elfs["rv-atomic-libatomic"]]
    rows = by_step(verify(Arch.RISCV64, files, sysroot_path=sysroots[Arch.RISCV64], python_version="3.13"),
                   "dt-needed")
    assert [r.verdict for r in rows] == [Verdict.FAIL, Verdict.PASS]
    assert "__atomic_fetch_add_1" in rows[0].reason and "-latomic" in rows[0].reason


@pytest.mark.cross
def test_runpath_origin_resolves_and_missing_dep_is_named(cross_elfs: dict[str, Path], sysroots: dict[Arch, Path],
                                                           tmp_path: Path) -> None:
    libb = cross_elfs["rv-libb-runpath"]
    rows = verify(Arch.RISCV64, [libb], sysroot_path=sysroots[Arch.RISCV64], python_version=None)
    assert [r.verdict for r in by_step(rows, "dt-needed")] == [Verdict.PASS]
    copy = tmp_path / "lib" / "libb.so"
    copy.parent.mkdir()
    shutil.copy(libb, copy)
    rows = verify(Arch.RISCV64, [copy], sysroot_path=sysroots[Arch.RISCV64], python_version=None)
    [row] = by_step(rows, "dt-needed")
    assert row.verdict is Verdict.FAIL and "unresolved liba.so" in row.reason


@pytest.mark.cross
def test_extension_suffix_gates_on_real_modules(cross_elfs: dict[str, Path], tmp_path: Path) -> None:
    files = {
        "demo/demo.cpython-313-riscv64-linux-gnu.so": cross_elfs["rv-ext"].read_bytes(),
        "demo/demo.so": cross_elfs["rv-ext-nosuffix"].read_bytes(),
        "demo/demo.cpython-313-x86_64-linux-gnu.so": cross_elfs["host-ext"].read_bytes(),
    }
    wheel = make_wheel(tmp_path, "demo-1.0-cp313-cp313-linux_riscv64.whl", files)
    rows = wheel_gate.verify_wheel(wheel, Arch.RISCV64)
    failed = {(r.component, r.subject): r.reason for r in rows if r.verdict is Verdict.FAIL}
    assert set(failed) == {("demo/demo.so", "ext-suffix"), ("demo/demo.cpython-313-x86_64-linux-gnu.so", "elf-arch"),
                           ("demo/demo.cpython-313-x86_64-linux-gnu.so", "ext-suffix")}
    assert "without an EXT_SUFFIX" in failed[("demo/demo.so", "ext-suffix")]
    assert "x86-64, expected RISC-V" in failed[("demo/demo.cpython-313-x86_64-linux-gnu.so", "elf-arch")]
    assert "an amd64 suffix leaked" in failed[("demo/demo.cpython-313-x86_64-linux-gnu.so", "ext-suffix")]


def overlay_without(sysroot: Path, triplet: str, tmp_path: Path, missing: str) -> Path:
    """A copy of the sysroot's library folders made of symlinks, leaving out files named *missing*."""
    root = tmp_path / "sysroot"
    libdir = root / "usr" / "lib" / triplet
    libdir.mkdir(parents=True)
    for entry in (sysroot / "usr" / "lib").iterdir():
        if entry.is_file():
            (root / "usr" / "lib" / entry.name).symlink_to(entry)
    for entry in (sysroot / "usr" / "lib" / triplet).iterdir():
        if not entry.name.startswith(missing):
            (libdir / entry.name).symlink_to(entry)
    (root / "lib").symlink_to("usr/lib")
    shutil.copytree(sysroot / "etc" / "ld.so.conf.d", root / "etc" / "ld.so.conf.d")
    return root


@pytest.mark.cross
@pytest.mark.parametrize(("library", "dependency"), [
    ("libpython3.14.so.1.0", "libz.so.1"),
    ("libonnxruntime.so.1.23", "libprotobuf.so.32"),
], ids=["libpython", "libonnxruntime"])
def test_sysroot_library_resolves_and_removed_dependency_is_named(sysroots: dict[Arch, Path], tmp_path: Path,
                                                                  library: str, dependency: str) -> None:
    arch = Arch.RISCV64
    triplet = info(arch).multiarch
    real = sysroots[arch]
    found = elf.read(real / "usr" / "lib" / triplet / library)
    assert isinstance(found, elf.ElfInfo)
    [clean] = dtneeded.scan(dtneeded.Resolver(arch, real), [(found, library)])
    assert clean.verdict is Verdict.PASS, clean.reason
    broken_root = overlay_without(real, triplet, tmp_path, dependency)
    copy = elf.read(broken_root / "usr" / "lib" / triplet / library)
    assert isinstance(copy, elf.ElfInfo)
    [broken] = dtneeded.scan(dtneeded.Resolver(arch, broken_root), [(copy, library)])
    assert broken.verdict is Verdict.FAIL
    assert dependency in broken.reason


@pytest.mark.network
def test_pypi_aarch64_wheel_passes_arm64_and_fails_riscv64(pypi_aarch64_wheel: Path, repo: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    config = str(repo / "versions.toml")
    assert commands.run(gate_tasks.verify("arm64", [str(pypi_aarch64_wheel)]), config_path=config) == 0
    arm_out = capsys.readouterr().out
    assert "FAIL" not in arm_out and "elf-arch" in arm_out
    assert commands.run(gate_tasks.verify("riscv64", [str(pypi_aarch64_wheel)]), config_path=config) == 1
    out = capsys.readouterr().out
    for member in ("onnxruntime/capi/libonnxruntime_providers_shared.so",
                   "onnxruntime/capi/onnxruntime_pybind11_state.cpython-313-aarch64-linux-gnu.so"):
        assert f"{member}: AArch64, expected RISC-V" in out
    assert "platform tag manylinux_2_28_aarch64" in out


@pytest.mark.spawns
def test_invoke_verify_cli_exit_code_and_no_traceback(repo: Path, tmp_path: Path) -> None:
    from gatekit import plain_member
    wheel = make_wheel(tmp_path, "demo-1.0-cp313-cp313-linux_riscv64.whl", {}, raw=[plain_member("../evil")])
    invoke = str(Path(sys.executable).parent / "invoke")
    temp = tmp_path / "tmp"
    temp.mkdir()
    result = Runner(Log()).run([invoke, "verify", "--arch", "riscv64", "--path", wheel], cwd=repo, check=False,
                               timeout=120, env={"TMPDIR": str(temp)})
    assert result.returncode == 1
    assert re.search(r"unpack +FAIL +demo-1\.0-cp313-cp313-linux_riscv64\.whl: zip-slip", result.output)
    assert "Traceback" not in result.output
    assert not (tmp_path.parent / "evil").exists()
    assert not list(temp.iterdir())  # the unpack folder is removed


@pytest.mark.cross
def test_other_machine_candidate_is_skipped_and_staging_resolves(cross_elfs: dict[str, Path],
                                                                  sysroots: dict[Arch, Path], tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "dep").mkdir()
    libb = tmp_path / "lib" / "libb.so"
    shutil.copy(cross_elfs["rv-libb-runpath"], libb)
    shutil.copy(cross_elfs["aa-lib"], tmp_path / "dep" / "liba.so")  # found via $ORIGIN/../dep, but AArch64
    rows = by_step(verify(Arch.RISCV64, [libb], sysroot_path=sysroots[Arch.RISCV64], python_version=None),
                   "dt-needed")
    assert [r.verdict for r in rows] == [Verdict.FAIL] and "unresolved liba.so" in rows[0].reason
    stage = tmp_path / "stage"
    (stage / "lib").mkdir(parents=True)
    shutil.copy(cross_elfs["rv-liba"], stage / "lib" / "liba.so")
    rows = by_step(verify(Arch.RISCV64, [libb], sysroot_path=sysroots[Arch.RISCV64], python_version=None,
                          staging=[stage]), "dt-needed")
    assert [r.verdict for r in rows] == [Verdict.PASS]


@pytest.mark.cross
def test_target_python_version_from_the_real_sysroot(sysroots: dict[Arch, Path]) -> None:
    from crosslane.gates.verify import target_python_version
    assert target_python_version(sysroots[Arch.RISCV64], Arch.RISCV64) == "3.14"
