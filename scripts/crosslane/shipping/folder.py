"""An install folder's papers (ExecuTorch runners, tools, bare-metal images): `LICENSES/` with the licence texts of
the sources compiled in (and of the packages linked in statically), `crosslane.cdx.json` (the SBOM, each ELF file the
build made listed with its sha256) and `crosslane.intoto.json` (the provenance of those files): a pack carries them
with what they describe."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from crosslane.files import atomic, stamps
from crosslane.shipping import provenance, sbom
from crosslane.shipping.inventory import Inventory, crate_licences, debian_licence, source_licences

LICENSES = "LICENSES"
SBOM = sbom.SBOM_NAME
PROVENANCE = "crosslane" + provenance.SUFFIX
PAPERS = (LICENSES, SBOM, PROVENANCE)


def elf_files(install: Path) -> list[Path]:
    """Every regular ELF file under *install*, in path order (links are not files of their own)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(install):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


Statement = Callable[[Inventory, Sequence[tuple[str, str]]], Mapping[str, object]]


def finish(install: Path, inventory: Inventory, *, epoch: int, statement: Statement | None = None) -> Inventory:
    """Write the papers into *install* (the old ones replaced): *statement* makes the provenance of the ELF files
    ((path, sha256) each) from the inventory. The inventory the SBOM states."""
    for name in PAPERS:
        stamps.remove(install / name)
    files = [(p.relative_to(install).as_posix(), stamps.file_sha256(p)) for p in elf_files(install)]
    inventory = replace(inventory, built_files=tuple(f"{name} sha256={digest}" for name, digest in files))
    texts = {name: path for source in inventory.sources for name, path in source_licences(source).items()}
    texts |= {name: path for crate in inventory.crates for name, path in crate_licences(crate).items()}
    texts |= {debian_licence(item.owner): item.copyright for item in inventory.linked}
    for name, path in sorted(texts.items()):
        target = install / LICENSES / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    atomic.write_text(install / SBOM, sbom.build(inventory, epoch))
    if statement is not None and files:
        document = statement(inventory, files)
        atomic.write_text(install / PROVENANCE, json.dumps(document, indent=1, sort_keys=True) + "\n")
    return inventory
