"""A bare-metal image's papers: what it is made of, read from its link, published beside it.

The linker's map (`-Wl,-Map`, components/baremetal/CMakeLists.txt) names every archive member and object the link
took. Those of the tool root (picolibc, libgcc, libstdc++, the start file) belong to the packages dpkg recorded as
installing them in the root; those of the ExecuTorch build tree come from ExecuTorch's pinned source and submodules;
the image's own objects from the runner (this repository) and the bundled program. An input that is none of these
fails the image: nothing is shipped that its papers cannot account for.

`build/<target>/dist/<build>/<case>/` gets the image, `LICENSES/`, the SBOM and the provenance (shipping/folder.py),
the folder the bare-metal job publishes.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from crosslane.config import BareMetalBuild, GitSource
from crosslane.context import Context
from crosslane.errors import StepFailed
from crosslane.files import atomic, stamps
from crosslane.guest.sysroot import Owner
from crosslane.host import toolroot
from crosslane.recipes import papers as build_papers
from crosslane.recipes import reproducible
from crosslane.shipping import folder, inventory, licences, provenance
from crosslane.smokes import executorch
from crosslane.sources import pinned

MAP_NAME = "executorch_runner.map"
IMAGE = "executorch_runner"
RUNNER = "components/baremetal"
MEMBERS = "Archive member included to satisfy reference by file (symbol)"
# An archive line of that section: "/path/libc.a(member.o)", the referencing file after it on the same line when the
# path is short; paths may hold spaces (a build folder's), and are relative to the link's folder unless absolute.
ARCHIVE = re.compile(r"(\S.*?\.a)\(")
LOADED = re.compile(r"^LOAD (\S.*)$", re.M)
SECTION = re.compile(r"^[A-Z][A-Za-z ]+$", re.M)  # the map's next heading ("Memory Configuration", ...)


def linked_inputs(map_text: str, folder: Path) -> list[PurePosixPath]:
    """The archives a member was taken from and the objects loaded, as the linker named them, absolute (against
    *folder*, where the link ran) and normalised, each once, in the map's order. A loaded archive none of whose
    members was taken is not an input. A map without those two parts is refused, never read as "nothing linked"."""
    loaded = LOADED.findall(map_text)
    start = map_text.find(MEMBERS)
    if start < 0 or not loaded:
        raise StepFailed("the link map names no archive members or loaded files: not a GNU ld map",
                         fix="link with -Wl,-Map (components/baremetal/CMakeLists.txt)")
    body = map_text[start + len(MEMBERS):]
    heading = SECTION.search(body)
    section = body[:heading.start()] if heading else body
    found = []
    for line in section.splitlines():
        if not line.strip() or line[0].isspace():  # blank, or the referencing file of the line before
            continue
        taken = ARCHIVE.match(line)
        if taken is None:  # a thin archive's member, or a form this reader does not know: never skipped unread
            raise StepFailed(f"the link map has an archive line crosslane cannot read: {line.strip()[:200]!r}",
                             fix="link with regular archives (ar rcs, not ar --thin)")
        found.append(taken[1])
    found += [path for path in loaded if not path.endswith(".a")]
    base = PurePosixPath(folder)
    return list(dict.fromkeys(PurePosixPath(posixpath.normpath(base / path)) for path in found))


def dpkg_files(root: Path) -> dict[str, str]:
    """path -> the dpkg list (`<package>[:<arch>]`) that installed it in *root* (var/lib/dpkg/info/*.list)."""
    owners: dict[str, str] = {}
    for listed in sorted((root / "var/lib/dpkg/info").glob("*.list")):
        for line in listed.read_text(errors="replace").splitlines():
            owners.setdefault(line, listed.stem)
    return owners


def dpkg_packages(root: Path) -> dict[str, Owner]:
    """`<package>` and `<package>:<arch>` -> what var/lib/dpkg/status records of each installed package (a tool
    root keeps no .deb: the package's sha256 is not known there)."""
    found: dict[str, Owner] = {}
    status = root / "var/lib/dpkg/status"
    for stanza in status.read_text(errors="replace").split("\n\n") if status.is_file() else ():
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line[0].isspace())
        # Status: "<wanted> <flag> <state>" ("install ok installed", "hold ok installed"): the state is what counts
        if "Package" not in fields or fields.get("Status", "").split()[2:3] != ["installed"]:
            continue
        package, arch = fields["Package"], fields.get("Architecture", "")
        owner = Owner(package, fields.get("Version", ""), arch, fields.get("Source", package).split(" ")[0], "")
        found[f"{package}:{arch}"] = owner
        found.setdefault(package, owner)
    return found


def inside(root: Path, path: PurePosixPath) -> Path:
    """*path* of the root as a file of the host, its links followed as inside the root (an absolute target is the
    root's own); refused when it cannot be followed or a link climbs out of the root."""
    parts = list(path.relative_to("/").parts)
    at = root
    for _ in range(256):  # each step takes a component; a loop of links is refused, not followed for ever
        if not parts:
            return at
        name = parts.pop(0)
        if name == "..":
            if at == root:
                break
            at = at.parent
            continue
        candidate = at / name
        if candidate.is_symlink():
            target = PurePosixPath(os.readlink(candidate))
            parts = [*target.parts[1:], *parts] if target.is_absolute() else [*target.parts, *parts]
            at = root if target.is_absolute() else at
            continue
        at = candidate
    raise StepFailed(f"{path} in the tool root {root.name} leads out of it or loops",
                     fix=f"delete {root} and make it again (invoke baremetal makes it)")


def linked_parts(root: Path, inputs: Iterable[PurePosixPath], ours: Iterable[Path], image: str) -> list[
        inventory.Linked]:
    """The root's files among *inputs* with the package that installed each; inputs under *ours* (the ExecuTorch
    build tree, the image's own build folder) are the sources' and are skipped; anything else is refused."""
    mine = [PurePosixPath(p) for folder_path in ours for p in {folder_path, folder_path.resolve()}]
    files, packages = dpkg_files(root), dpkg_packages(root)
    parts = []
    for path in inputs:
        if any(path.is_relative_to(place) for place in mine):
            continue
        listed = files.get(str(path))
        owner = packages.get(listed) if listed else None
        if owner is None:
            raise StepFailed(f"{image}: the link took {path}, which no package of the tool root {root.name} "
                             "installed and no source of the image provides", fix="link only the root's packages and "
                             "the ExecuTorch build (components/baremetal/CMakeLists.txt)")
        copyright_file = inside(root, PurePosixPath("/usr/share/doc") / owner.package / "copyright")
        if not copyright_file.is_file():
            raise StepFailed(f"{owner.package}: no /usr/share/doc/{owner.package}/copyright in the tool root "
                             f"{root.name}", fix="the package must ship its copyright file; check the root")
        parts.append(inventory.Linked(image, str(path), stamps.file_sha256(inside(root, path)), owner,
                                      copyright_file))
    return parts


def dist_folder(ctx: Context, target_name: str) -> Path:
    """Where a target's images are published (dist/<build>/<case>/): what this run linked, nothing older."""
    return ctx.build_root / target_name / "dist"


def withdraw(folder: Path) -> None:
    """Remove published images (a target's before it builds them again, a case whose run failed): an image that no
    longer links, whose runtime fails, whose case is exempt now or that failed its runs must not stay in the folder
    the job uploads."""
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StepFailed(f"{folder}: cannot remove the images published before ({exc.strerror})",
                         fix=f"remove {folder} by hand (check its owner and permissions)") from None


def publish(ctx: Context, target_name: str, build: BareMetalBuild, root: toolroot.ToolRoot,
            program: executorch.Program, elf: Path, runtime: Path, source: Path,
            request: Mapping[str, str]) -> Path:
    """The image copied into `dist/<build>/<case>/` of the target's folder with its papers; that folder."""
    target = ctx.config.baremetal[target_name]
    component = ctx.config.components[target.source]
    case = program.case.name
    where = dist_folder(ctx, target_name) / build.name / case
    map_file = elf.parent / MAP_NAME
    if not map_file.is_file():
        raise StepFailed(f"{case} ({target_name} {build.name}): the link wrote no {MAP_NAME}",
                         fix=f"{RUNNER}/CMakeLists.txt links with -Wl,-Map")
    inputs = linked_inputs(map_file.read_text(errors="replace"), elf.parent)
    linked = linked_parts(root.path, inputs, (runtime, elf.parent), IMAGE)
    first = component.sources[0]
    staged = pinned.submodule_pins(component.source_of or component.name, first) \
        if isinstance(first, GitSource) and first.submodules else {}
    sources = inventory.component_sources(component, target_name, source, {}, ctx.config.root, staged)
    repository = ctx.config.root
    runner = inventory.Source("baremetal-runner", "runner", f"tree:{RUNNER}", stamps.tree_digest(repository / RUNNER),
                              None, (), licences.licence_files(repository))
    bundled = inventory.Source(f"program:{case}", "program", "generated:executorch-export",
                               stamps.file_sha256(program.path), None, (), ())
    version = (first.tag if isinstance(first, GitSource) else None) or "0"
    inv = inventory.Inventory(name=f"executorch-{target_name}-{build.name}-{case}", version=version,
                              arch=target_name, suite=root.spec.suite, sources=(*sources, runner, bundled),
                              linked=tuple(linked), properties={"kind": "baremetal-image", "target": target_name,
                                                                "march": build.march})
    manifests = {f"toolroot:{root.spec.name}": root.path / toolroot.MANIFEST}

    def statement(found: inventory.Inventory, files: Sequence[tuple[str, str]]) -> dict[str, object]:
        return provenance.statement(
            files, found, builder=build_papers.builder(ctx.runner, repository),
            config_digest=hashlib.sha256(ctx.config.path.read_bytes()).hexdigest(),
            request={"target": target_name, "build": build.name, "case": case, **request}, manifests=manifests,
            toolchain=f"riscv64-unknown-elf-gcc of the tool root {root.path.name}")

    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        with atomic.replace_dir(where) as staging:  # whole or not at all: a failed statement leaves no image behind
            shutil.copyfile(elf, staging / IMAGE)
            folder.finish(staging, inv, epoch=reproducible.source_date_epoch(ctx.runner, component, repository),
                          statement=statement)
    except OSError as exc:
        raise StepFailed(f"{where}: cannot publish the image ({exc.strerror}: {exc.filename})",
                         fix="check the build folder's free space and permissions") from None
    return where
