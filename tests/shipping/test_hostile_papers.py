"""What the papers read that crossed a job or came from a package: licence expressions the SPDX parser chokes on,
a library whose section headers lie, a provenance statement beside a wheel that names another file, a Debian
version that is no digest, and the outputs two builds are compared by."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from crosslane.errors import IntegrityError
from crosslane.files import stamps
from crosslane.gates import provenance as provenance_gate
from crosslane.run import repro
from crosslane.shipping import index, licences, provenance
from crosslane.shipping.inventory import Source
from gatekit import make_wheel


@pytest.mark.parametrize("expression", ["MIT or or MIT", "()", "(" * 50 + "MIT", "MIT and"])
def test_an_expression_the_parser_cannot_read_is_none(expression: str) -> None:
    assert licences.spdx(expression) is None
    assert licences.spdx("MIT OR Apache-2.0") == "MIT OR Apache-2.0"


def test_a_library_whose_code_section_runs_past_its_end_has_no_code_digest(tmp_path: Path) -> None:
    original = Path("/lib/x86_64-linux-gnu/libz.so.1").resolve()
    lying = tmp_path / "libz.so.1"
    shutil.copyfile(original, lying)
    with original.open("rb") as handle:
        elf = ELFFile(handle)
        index_of = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".text")
        where = elf["e_shoff"] + index_of * elf["e_shentsize"] + 32  # sh_size of an ELF64 section header
    data = bytearray(lying.read_bytes())
    data[where:where + 8] = (1 << 40).to_bytes(8, "little")
    lying.write_bytes(bytes(data))
    assert provenance_gate.code_digest(original) is not None
    assert provenance_gate.code_digest(lying) is None
    assert provenance_gate.same_library(lying, [original]) is None


def test_two_builds_differ_by_a_folder_or_a_special_file_one_of_them_made(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for install in (one, two):
        (install / "lib").mkdir(parents=True)
        (install / "lib" / "x.so").write_bytes(b"same")
    (one / "share" / "empty").mkdir(parents=True)
    os.mkfifo(one / "lib" / "fifo")
    found, other = repro.outputs(one), repro.outputs(two)
    assert found["share/empty"] == "folder" and found["lib/fifo"].startswith("special file")
    assert {k for k in found if found.get(k) != other.get(k)} == {"share", "share/empty", "lib/fifo"}


def test_a_debian_version_is_no_digest_in_a_statement() -> None:
    debian = Source("zlib", "sysroot", "debian:zlib", "1:1.3.dfsg-3.1", None, (), ())
    described = provenance.source_descriptor(debian)
    assert "digest" not in described and described["annotations"] == {"role": "sysroot", "version": "1:1.3.dfsg-3.1"}
    git = Source("x", "source", "https://github.com/o/r", "a" * 40, None, (), ())
    assert provenance.source_descriptor(git)["digest"] == {"gitCommit": "a" * 40}


def statement_beside(wheel: Path, subjects: list[tuple[str, str]]) -> None:
    document = {"_type": provenance.STATEMENT_TYPE,
                "subject": [{"name": name, "digest": {"sha256": digest}} for name, digest in subjects]}
    wheel.with_name(wheel.name + provenance.SUFFIX).write_text(json.dumps(document))


def test_a_statement_beside_a_wheel_is_indexed_only_for_that_wheel(tmp_path: Path) -> None:
    (tmp_path / "packs").mkdir()
    wheel = make_wheel(tmp_path / "packs", "demo-1.0-py3-none-linux_riscv64.whl", {"demo/__init__.py": b""})
    digest = stamps.file_sha256(wheel)
    statement_beside(wheel, [(wheel.name, digest)])
    simple = index.write([wheel], tmp_path / "index")
    assert (simple.parent / "files" / (wheel.name + provenance.SUFFIX)).is_file()
    for subjects in ([("evil-9.9-py3-none-any.whl", "0" * 64)], [(wheel.name, digest), ("other.whl", digest)], []):
        statement_beside(wheel, subjects)
        with pytest.raises(IntegrityError, match=r"\.intoto\.json: its subjects .* are not demo-1\.0"):
            index.write([wheel], tmp_path / "index")
    wheel.with_name(wheel.name + provenance.SUFFIX).write_text("[" * 100_000)
    with pytest.raises(IntegrityError, match="nested too deeply"):
        index.write([wheel], tmp_path / "index")
