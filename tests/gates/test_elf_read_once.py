"""gates/elf.py's promise: an ELF file is read once per gate run, however many gates ask about it.

A real shared library from the host's cc; every read of it is counted (pyelftools parsing it, its bytes read whole,
the struct reader of its loader facts), the 4-byte magic peeks aside.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from elftools.elf.elffile import ELFFile

import cfgkit
from crosslane.archs import Arch
from crosslane.baremetal import run as baremetal_run
from crosslane.context import Context
from crosslane.gates import compiled, elf, provenance, vector_code, verify
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.run import pipeline

DEMO_C = "int demo_feature(int x) { return x + 1; }\nint demo_other(int x) { return x * 2; }\n"
DEMO = """
[components.demo]
source = { kind = "tree", path = "components/canary" }
arches = ["amd64"]
compiled = { feature = "demo_feature", absent = "no_such_symbol" }
"""


def shared_library(folder: Path) -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no host cc")
    (folder / "demo.c").write_text(DEMO_C)
    library = folder / "install" / "lib" / "libdemo.so"
    library.parent.mkdir(parents=True)
    Runner(Log(io.StringIO())).run([cc, "-shared", "-fPIC", "-O1", "-o", library, folder / "demo.c"], quiet=True)
    return library


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of every whole read of an ELF file from here on."""
    seen: list[str] = []
    real_init, real_bytes, real_links = ELFFile.__init__, Path.read_bytes, elf.read_links

    def parsing(self: ELFFile, stream: Any, *args: Any, **kwargs: Any) -> None:
        seen.append(str(getattr(stream, "name", "<memory>")))
        real_init(self, stream, *args, **kwargs)

    def whole(self: Path) -> bytes:
        seen.append(str(self))
        return real_bytes(self)

    def links(path: Path) -> elf.ElfInfo | elf.ElfDefect:
        seen.append(str(path))
        return real_links(path)

    monkeypatch.setattr(ELFFile, "__init__", parsing)
    monkeypatch.setattr(Path, "read_bytes", whole)
    monkeypatch.setattr(elf, "read_links", links)
    return seen


@pytest.mark.spawns
def test_a_gate_run_reads_a_library_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    cfg = cfgkit.make(tmp_path, DEMO)
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    folder = ctx.component_dir(Arch.AMD64, "demo")
    folder.mkdir(parents=True)
    library = shared_library(folder)
    reads.clear()
    rows = pipeline.gate_install(ctx, "demo", Arch.AMD64, [folder / "install"])
    # The papers gate fails (no SBOM: no build made the folder); the ELF, DT_NEEDED and compiled gates ran all the
    # same, and the compiled gate's one failing feature shows it read the library's exports.
    assert {r.subject for r in rows} == {"papers", "compiled:absent"}, rows
    assert reads.count(str(library)) == 1, reads


@pytest.mark.spawns
def test_every_gate_takes_its_facts_from_one_reader(tmp_path: Path, reads: list[str]) -> None:
    """verify, compiled, vector_code and provenance on one file through one reader: one read; the bare-metal
    symbolizer's one call is one read."""
    library = shared_library(tmp_path)
    reads.clear()
    reader = elf.Reader()
    verify.verify(Arch.AMD64, [library], sysroot_path=None, python_version=None, reader=reader)
    assert compiled.found(library.parent, {"feature": "demo_feature"}, reader) == {"feature": "libdemo.so"}
    assert vector_code.scan(library, reader).why == "not RISC-V"
    assert provenance.code_digest(library, reader) is not None
    assert provenance.same_library(library, [tmp_path / "demo.c"], reader) is None
    assert reads.count(str(library)) == 1, reads
    facts = reader.read(library)
    assert isinstance(facts, elf.ElfInfo) and "demo_feature" in facts.exported
    start = next(s for s, _, name in facts.functions if name == "demo_feature")
    reads.clear()
    assert baremetal_run.symbolize(library, start + 1) == "demo_feature+0x1"
    assert reads.count(str(library)) == 1, reads


@pytest.mark.spawns
def test_a_file_changed_is_read_again(tmp_path: Path, reads: list[str]) -> None:
    library = shared_library(tmp_path)
    reader = elf.Reader()
    first = reader.read(library)
    library.write_bytes(b"no longer an ELF file")
    assert isinstance(first, elf.ElfInfo) and isinstance(reader.read(library), elf.ElfDefect)
