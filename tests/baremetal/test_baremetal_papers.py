"""A bare-metal image's papers from its real link: a small program linked with picolibc by the forky tool root's
riscv64-unknown-elf-gcc (seconds), its map read, the packages dpkg recorded as installing each input, and the
published folder checked by the papers gate like any install folder. Swapped bytes, a removed licence and an input
nothing accounts for each fail, naming the file."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.baremetal import papers
from crosslane.config import Config
from crosslane.config.cases import Case
from crosslane.context import Context
from crosslane.errors import StepFailed
from crosslane.gates import papers as papers_gate
from crosslane.host import toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.smokes import executorch

pytestmark = [pytest.mark.cross, pytest.mark.spawns]

PROGRAM = ('#include <stdio.h>\n#include <string.h>\n'
           'int main(void) { char b[8]; memcpy(b, "hi", 3); puts(b); return 0; }\n')


@pytest.fixture
def root(cfg: Config) -> toolroot.ToolRoot:
    found = toolroot.find(cfg.toolroots[cfg.baremetal["rv64-elf"].toolroot])
    if found is None:
        pytest.skip("the forky tool root is not made here (invoke baremetal --target rv64-elf makes it)")
    if toolroot.entry_mode(Runner(Log(io.StringIO()))) is None:
        pytest.skip("this host lets no process enter a tool root: " + toolroot.ENTRY_FIX)
    return found


def link(root: toolroot.ToolRoot, folder: Path) -> Path:
    """The program linked as the runner is (picolibc, semihosting, hosted crt0), with its map beside it."""
    folder.mkdir(parents=True)
    (folder / "main.c").write_text(PROGRAM)
    gcc = ["riscv64-unknown-elf-gcc", "-march=rv64imafdc", "-mabi=lp64d", "--specs=picolibc.specs"]
    for step in (["-O2", "-c", "main.c", "-o", "main.o"],  # compiled, then linked: as CMake does
                 ["--oslib=semihost", "--crt0=hosted", "-Wl,--defsym=__flash=0x80000000,--defsym=__flash_size="
                  "0x02000000", "-Wl,--defsym=__ram=0x82000000,--defsym=__ram_size=0x0d000000", "main.o", "-o",
                  papers.IMAGE, f"-Wl,-Map={folder / papers.MAP_NAME}"]):
        argv = toolroot.command(root, [*gcc, *step], binds=[folder], cwd=folder, mode="root")
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    return folder / papers.IMAGE


def test_the_link_names_the_packages_that_installed_its_inputs(root: toolroot.ToolRoot, tmp_path: Path) -> None:
    elf = link(root, tmp_path / "image")
    inputs = papers.linked_inputs((elf.parent / papers.MAP_NAME).read_text(), elf.parent)
    assert all(".." not in p.parts for p in inputs)
    parts = papers.linked_parts(root.path, inputs, [elf.parent], papers.IMAGE)
    packages = {p.owner.package for p in parts}
    assert {"picolibc-riscv64-unknown-elf", "gcc-riscv64-unknown-elf"} <= packages  # libc.a and crt0; libgcc.a
    libc = next(p for p in parts if p.origin.endswith("/libc.a"))
    assert libc.owner.version and libc.copyright.is_file() and libc.copyright.is_relative_to(root.path)
    assert len(libc.sha256) == 64 and not any(p.origin.startswith(str(tmp_path)) for p in parts)  # ours skipped


def test_an_input_nothing_accounts_for_is_refused(root: toolroot.ToolRoot, tmp_path: Path) -> None:
    elf = link(root, tmp_path / "image")
    text = (elf.parent / papers.MAP_NAME).read_text()
    # a short archive path: ld puts the referencing file on the same line
    evil = text.replace(papers.MEMBERS, f"{papers.MEMBERS}\n\n/srv/else where/libevil.a(x.o)     main.o (memcpy)", 1)
    with pytest.raises(StepFailed, match=r"the link took /srv/else where/libevil\.a\b"):
        papers.linked_parts(root.path, papers.linked_inputs(evil, elf.parent), [elf.parent], papers.IMAGE)
    # the link's own object, named relative to where it ran ("LOAD main.o"), when that folder is not declared ours
    with pytest.raises(StepFailed, match=r"the link took .*/image/main\.o"):
        papers.linked_parts(root.path, papers.linked_inputs(text, elf.parent), [tmp_path / "other"], papers.IMAGE)


@pytest.mark.parametrize("text", ["", "LOAD /usr/lib/x.o\n", "Archive member included to satisfy reference by "
                                  "file (symbol)\n\n/usr/lib/libc.a(x.o)\n"])
def test_a_map_without_its_parts_is_refused(text: str) -> None:
    with pytest.raises(StepFailed, match="not a GNU ld map"):
        papers.linked_inputs(text, Path("/"))


def test_a_published_image_carries_its_licences_sbom_and_provenance(root: toolroot.ToolRoot, cfg: Config,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    elf = link(root, tmp_path / "image")
    source = tmp_path / "src" / "executorch"
    source.mkdir(parents=True)
    (source / "LICENSE").write_text("BSD License\n")
    bpte = tmp_path / "add.bpte"
    bpte.write_bytes(b"program")
    program = executorch.Program(Case("add", "portable", False, ("novector",)), bpte, 0.01, 0.01, 1.0, 0)
    build = cfg.baremetal["rv64-elf"].builds[0]
    where = papers.publish(ctx, "rv64-elf", build, root, program, elf, tmp_path / "runtime", source,
                           {"march": build.march})
    assert where == tmp_path / "build" / "rv64-elf" / "dist" / build.name / "add-portable"
    assert (where / papers.IMAGE).read_bytes() == elf.read_bytes()
    assert (where / "LICENSES/debian/picolibc-riscv64-unknown-elf/copyright").is_file()
    assert (where / "LICENSES/sources/executorch-portable/LICENSE").is_file()
    document = json.loads((where / "crosslane.cdx.json").read_text())
    purls = [c.get("purl", "") for c in document["components"]]
    assert any(p.startswith("pkg:deb/debian/picolibc-riscv64-unknown-elf@") and "distro=debian-forky" in p
               for p in purls)
    statement = json.loads((where / "crosslane.intoto.json").read_text())
    assert statement["subject"][0]["name"] == papers.IMAGE
    rows = papers_gate.check_folder(where, Arch.RISCV64, [papers.IMAGE], required=True)
    assert [r.verdict for r in rows] == [Verdict.PASS], rows

    (where / "LICENSES/debian/picolibc-riscv64-unknown-elf/copyright").unlink()
    rows = papers_gate.check_folder(where, Arch.RISCV64, [papers.IMAGE], required=True)
    assert rows[0].verdict is Verdict.FAIL and "debian/picolibc-riscv64-unknown-elf/copyright" in rows[0].reason
    (where / papers.IMAGE).write_bytes(elf.read_bytes() + b"\0")
    rows = papers_gate.check_folder(where, Arch.RISCV64, [papers.IMAGE], required=True)
    assert rows[0].verdict is Verdict.FAIL and f"{papers.IMAGE}: sha256" in rows[0].reason
