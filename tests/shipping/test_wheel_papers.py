"""A wheel's papers on a small wheel and a small sysroot: the grafted library attributed by its content to the
package whose .deb listed it, that package's copyright and the sources' licences inside, a CycloneDX 1.6 SBOM,
the same bytes twice; the papers gate passes it and fails a swapped library or a removed licence by name."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from packageurl import PackageURL

from crosslane.archs import Arch
from crosslane.errors import UsageError
from crosslane.files import wheelzip
from crosslane.gates import papers as papers_gate
from crosslane.gates.wheel import verify_wheel
from crosslane.guest.sysroot import OWNERS, Sysroot
from crosslane.report import Verdict
from crosslane.shipping import index, sbom
from crosslane.shipping import wheel as wheel_papers
from crosslane.shipping.inventory import Inventory, Source
from gatekit import make_wheel

ELF = b"\x7fELF" + bytes(60)
COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: foo

Files: *
Copyright: 2020 Foo
License: BSD-3-clause

License: BSD-3-clause
 The text.
"""
NAME = "demo-1.0-cp314-cp314-manylinux_2_39_riscv64.whl"


@pytest.fixture
def sysroot(tmp_path: Path) -> Sysroot:
    root = tmp_path / "sysroot"
    library = root / "usr/lib/riscv64-linux-gnu/libfoo.so.1.2"
    library.parent.mkdir(parents=True)
    library.write_bytes(ELF + b"foo library")
    (library.parent / "libfoo.so.1").symlink_to("libfoo.so.1.2")
    (library.parent / "libfooextra.so.2").write_bytes(ELF + b"foo's second library")  # the same package's
    (root / "usr/share/doc/libfoo1").mkdir(parents=True)
    (root / "usr/share/doc/libfoo1/copyright").write_text(COPYRIGHT)
    (root / OWNERS).write_text(json.dumps({"packages": [{
        "package": "libfoo1", "version": "1.2-3", "architecture": "riscv64", "source": "foo", "sha256": "d" * 64,
        "files": ["usr/lib/riscv64-linux-gnu/libfoo.so.1.2", "usr/lib/riscv64-linux-gnu/libfoo.so.1",
                  "usr/lib/riscv64-linux-gnu/libfooextra.so.2", "usr/share/doc/libfoo1/copyright"]}]}))
    return Sysroot(Arch.RISCV64, root, "key")


def built_wheel(tmp_path: Path, sysroot: Sysroot) -> Path:
    """What auditwheel leaves: the project's module and grafted copies of two libraries of libfoo1, each named by
    its source's hash."""
    origin = sysroot.path / "usr/lib/riscv64-linux-gnu/libfoo.so.1"
    grafted = f"demo.libs/libfoo-{hashlib.sha256(origin.read_bytes()).hexdigest()[:8]}.so.1"
    extra = sysroot.path / "usr/lib/riscv64-linux-gnu/libfooextra.so.2"
    grafted_extra = f"demo.libs/libfooextra-{hashlib.sha256(extra.read_bytes()).hexdigest()[:8]}.so.2"
    metadata = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\nThe description.\n"
    (tmp_path / "dist").mkdir(parents=True, exist_ok=True)
    return make_wheel(tmp_path / "dist", NAME, {"demo/_demo.cpython-314-riscv64-linux-gnu.so": ELF + b"module",
                                                grafted: ELF + b"foo library, soname set",
                                                grafted_extra: ELF + b"foo's second library, soname set",
                                                "demo/__init__.py": b"",
                                                "demo-1.0.dist-info/METADATA": metadata})


def inventory(tmp_path: Path) -> Inventory:
    tree = tmp_path / "helper-src"
    tree.mkdir(exist_ok=True)
    (tree / "LICENSE").write_text("MIT License\n")
    helper = Source("demo+helper", "fetchcontent", "https://github.com/acme/helper", "a" * 40, "v1", (),
                    (tree / "LICENSE",))
    mirror = Source("demo+mirror", "fetchcontent", "https://git.example/acme/mirror.git", "b" * 40, None, (),
                    (tree / "LICENSE",))
    tarball = Source("demo+tarball", "fetchcontent", "https://example.org/tarball-1.0.tar.xz", "c" * 64, None, (),
                     (tree / "LICENSE",), archive=True)
    return Inventory("demo", "1.0", Arch.RISCV64, "forky", (helper, mirror, tarball), properties={"kind": "wheel"})


def finished(tmp_path: Path, sysroot: Sysroot) -> Path:
    wheel = built_wheel(tmp_path, sysroot)
    wheel_papers.finish(wheel, inventory(tmp_path), sysroot=sysroot,
                        search=[sysroot.path / "usr/lib/riscv64-linux-gnu"], epoch=1700000000)
    return wheel


def test_the_wheel_carries_its_licences_and_an_sbom_naming_each_part(tmp_path: Path, sysroot: Sysroot) -> None:
    wheel = finished(tmp_path, sysroot)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read("demo-1.0.dist-info/METADATA").decode()
        document = archive.read("demo-1.0.dist-info/sboms/crosslane.cdx.json").decode()
        assert archive.read("demo-1.0.dist-info/licenses/debian/libfoo1/copyright").decode() == COPYRIGHT
        assert archive.read("demo-1.0.dist-info/licenses/sources/demo+helper/LICENSE") == b"MIT License\n"
        times = {info.date_time for info in archive.infolist()}
    assert names[-1] == "demo-1.0.dist-info/RECORD" and times == {(2023, 11, 14, 22, 13, 20)}
    assert names.index("demo/__init__.py") < names.index("demo-1.0.dist-info/METADATA")
    assert "Metadata-Version: 2.4" in metadata and "The description." in metadata
    assert "License-File: debian/libfoo1/copyright" in metadata
    assert "License-File: sources/demo+helper/LICENSE" in metadata
    assert sbom.validate(document) is None
    parts = {c["bom-ref"]: c for c in sbom.components(document)}
    [library] = [c for ref, c in parts.items() if ref.startswith("file:demo.libs/libfoo-")]
    # two libraries of one package: each listed with it and its licence, its copyright once
    [extra] = [c for ref, c in parts.items() if ref.startswith("file:demo.libs/libfooextra-")]
    assert extra["purl"] == library["purl"] and extra["licenses"] == [{"expression": "BSD-3-Clause"}]
    assert [n for n in names if n.endswith("/copyright")] == ["demo-1.0.dist-info/licenses/debian/libfoo1/copyright"]
    assert metadata.count("License-File: debian/libfoo1/copyright") == 1
    assert library["purl"] == "pkg:deb/debian/libfoo1@1.2-3?arch=riscv64&distro=debian-forky"
    assert library["licenses"] == [{"expression": "BSD-3-Clause"}]
    properties = {p["name"]: p["value"] for p in library["properties"]}
    assert properties["crosslane:origin"] == "usr/lib/riscv64-linux-gnu/libfoo.so.1.2"
    assert properties["crosslane:deb-sha256"] == "d" * 64
    assert parts["source:demo+helper"]["purl"] == "pkg:github/acme/helper@" + "a" * 40
    # off GitHub, the purl says where: the repository at the commit, or the download and its sha256
    mirror = PackageURL.from_string(parts["source:demo+mirror"]["purl"])
    assert mirror.qualifiers == {"vcs_url": "git+https://git.example/acme/mirror.git@" + "b" * 40}
    tarball = PackageURL.from_string(parts["source:demo+tarball"]["purl"])
    assert tarball.qualifiers == {"download_url": "https://example.org/tarball-1.0.tar.xz",
                                  "checksum": "sha256:" + "c" * 64}
    with zipfile.ZipFile(wheel) as archive:
        unpacked = wheelzip.unpack_checked(wheel, wheelzip.Limits())
        with unpacked.folder:
            assert unpacked.problems == []  # RECORD written anew, in order


def test_the_same_inputs_give_the_same_bytes(tmp_path: Path, sysroot: Sysroot) -> None:
    first = finished(tmp_path / "one", sysroot).read_bytes()
    second = finished(tmp_path / "two", sysroot).read_bytes()
    assert first == second


def test_a_grafted_library_no_package_installed_is_refused(tmp_path: Path, sysroot: Sysroot) -> None:
    from crosslane.errors import StepFailed

    wheel = built_wheel(tmp_path, sysroot)
    (sysroot.path / OWNERS).write_text(json.dumps({"packages": []}))
    with pytest.raises(StepFailed, match="no package of the riscv64 sysroot installed"):
        wheel_papers.finish(wheel, inventory(tmp_path), sysroot=sysroot,
                            search=[sysroot.path / "usr/lib/riscv64-linux-gnu"], epoch=1700000000)


def test_metadata_that_is_not_utf8_is_one_line_and_the_wheel_is_left_as_built(tmp_path: Path) -> None:
    from crosslane.errors import StepFailed

    wheel = make_wheel(tmp_path, "demo-1.0-py3-none-any.whl",
                       {"demo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"
                                                       b"Author: Jos\xe9\n"})
    built = wheel.read_bytes()
    with pytest.raises(StepFailed, match="METADATA is not UTF-8 \\(byte 57\\)"):
        wheel_papers.finish(wheel, inventory(tmp_path), sysroot=None, epoch=1700000000)
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".whl") == [wheel.name]
    assert wheel.read_bytes() == built


def rewritten(wheel: Path, out: Path, change: dict[str, bytes | None]) -> Path:
    """*wheel* with members replaced (None: removed) and RECORD made consistent again (a careful forger)."""
    members = [m for m in wheel_papers.read_members(wheel) if change.get(m.name, b"") is not None]
    members = [wheel_papers.Member(m.name, change.get(m.name) or m.data, m.executable) for m in members]
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(wheel, out)
    wheel_papers.write_wheel(out, members, "demo-1.0.dist-info", 1700000000)
    return out


def papers_rows(wheel: Path) -> list[str]:
    return [f"{r.verdict.value} {r.reason}" for r in verify_wheel(wheel, Arch.RISCV64, require_papers=True)
            if r.subject in (papers_gate.GATE, "licence-files")]


def test_the_papers_gate_passes_the_wheel_and_names_a_swapped_library(tmp_path: Path, sysroot: Sysroot) -> None:
    wheel = finished(tmp_path, sysroot)
    assert [r.split()[0] for r in papers_rows(wheel)] == ["PASS", "PASS"], papers_rows(wheel)
    [grafted] = [m.name for m in wheel_papers.read_members(wheel) if m.name.startswith("demo.libs/libfoo-")]
    swapped = rewritten(wheel, tmp_path / "swapped" / NAME, {grafted: ELF + b"another library"})
    rows = papers_rows(swapped)
    assert any(r.startswith("FAIL") and grafted in r and "not the file built" in r for r in rows), rows


def test_a_removed_licence_fails_naming_it(tmp_path: Path, sysroot: Sysroot) -> None:
    wheel = finished(tmp_path, sysroot)
    gone = rewritten(wheel, tmp_path / "gone" / NAME, {"demo-1.0.dist-info/licenses/debian/libfoo1/copyright": None})
    rows = papers_rows(gone)
    assert any(r.startswith("FAIL") and "debian/libfoo1/copyright" in r for r in rows), rows


def test_a_wheel_without_an_sbom_is_skipped_unless_required(tmp_path: Path, sysroot: Sysroot) -> None:
    plain = built_wheel(tmp_path, sysroot)
    found = [r for r in verify_wheel(plain, Arch.RISCV64) if r.subject == papers_gate.GATE]
    assert [r.verdict for r in found] == [Verdict.SKIP]
    required = [r for r in verify_wheel(plain, Arch.RISCV64, require_papers=True) if r.subject == papers_gate.GATE]
    assert [r.verdict for r in required] == [Verdict.FAIL]


def test_the_index_links_each_wheel_with_its_sha256(tmp_path: Path, sysroot: Sysroot) -> None:
    wheel = finished(tmp_path, sysroot)
    simple = index.write([wheel], tmp_path / "index")
    page = (simple / "demo" / "index.html").read_text()
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert f'href="../../files/{wheel.name}#sha256={digest}"' in page
    assert (tmp_path / "index/files" / wheel.name).read_bytes() == wheel.read_bytes()
    assert 'href="demo/"' in (simple / "index.html").read_text()
    assert index.write([wheel], tmp_path / "again").joinpath("demo/index.html").read_text() == page


def test_packs_holding_one_wheel_index_it_once_and_two_different_wheels_of_one_name_are_refused(
        tmp_path: Path) -> None:
    name = "demo-1.0-cp311-cp311-linux_aarch64.whl"
    for pack, data in (("pack-a", b"one"), ("pack-b", b"one"), ("pack-c", b"two")):
        (tmp_path / pack).mkdir()
        make_wheel(tmp_path / pack, name, {"demo/__init__.py": data})
    same = [tmp_path / "pack-a" / name, tmp_path / "pack-b" / name]
    page = (index.write(same, tmp_path / "index") / "demo" / "index.html").read_text()
    assert page.count("<a href=") == 1, page
    with pytest.raises(UsageError, match=f"pack-a/{name} and .*pack-c/{name}: two different wheels named {name}"):
        index.write([*same, tmp_path / "pack-c" / name], tmp_path / "index")
    assert (tmp_path / "index" / "simple" / "demo" / "index.html").read_text() == page  # the old index is kept


def test_a_wheel_name_with_url_characters_is_linked_quoted(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "demo-1.0-py3-none-any#x.whl", {"demo/__init__.py": b""})
    page = (index.write([wheel], tmp_path / "index") / "demo" / "index.html").read_text()
    assert 'href="../../files/demo-1.0-py3-none-any%23x.whl#sha256=' in page, page


def test_a_licence_name_a_path_cannot_hold_is_no_licence(tmp_path: Path) -> None:
    """A name from a wheel's METADATA or SBOM (hostile) with a NUL byte is reported missing, never a traceback."""
    from crosslane.gates import papers
    (tmp_path / "LICENSE").write_text("x")
    assert papers._inside(tmp_path, "LICENSE") and not papers._inside(tmp_path, "LICEN\x00SE")
    assert not papers._inside(tmp_path, "../" + tmp_path.name + "/../x")
