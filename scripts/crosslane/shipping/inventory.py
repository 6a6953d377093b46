"""What an artifact is made of, as the build knows it: the pinned sources compiled in (the project, its FetchContent
dependencies and submodules, with the patches applied), the files Debian packages provided (by the record of the
sysroot's .deb file lists), and the Rust crates, each with where its licence texts are.

Nothing here is guessed from the artifact afterwards: a grafted library is matched to the sysroot file auditwheel
copied by the content hash auditwheel put in its name, and that file to its package by the sysroot's record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from crosslane.config import ArchiveSource, Component, DebianSource, GitSource, PatchSpec, SourceSpec, TreeSource
from crosslane.errors import StepFailed
from crosslane.files import stamps
from crosslane.guest.sysroot import Owner, Sysroot
from crosslane.host import toolroot
from crosslane.shipping import licences


@dataclass(frozen=True)
class Source:
    """A pinned source compiled into the artifact."""

    name: str  # the component, or component+dependency / component:submodule
    role: str  # "project", "fetchcontent", "submodule"
    url: str
    commit: str  # a git commit, an archive's sha256, a Debian version, or a tree's content digest
    tag: str | None
    patches: tuple[tuple[str, str], ...]  # (path in this repository, sha256) applied for the arch
    licence_files: tuple[Path, ...]
    archive: bool = False  # url is a download (commit its sha256), not a repository


@dataclass(frozen=True)
class Library:
    """A file inside the artifact that a Debian package of the sysroot provided."""

    member: str  # its path inside the artifact
    sha256: str  # of the member as shipped (auditwheel sets its soname: not the .deb's bytes)
    origin: str  # the file in the sysroot it came from, relative to the sysroot
    owner: Owner


@dataclass(frozen=True)
class Linked:
    """An archive or object a package of a tool root installed, linked statically into a file of the artifact (a
    bare-metal image: picolibc, libgcc, the start file), as the linker's map names it."""

    into: str  # the artifact's file it is linked into
    origin: str  # the file in the root, as the package installed it
    sha256: str  # of that file in the root
    owner: Owner
    copyright: Path  # the package's copyright file in the root


@dataclass(frozen=True)
class Crate:
    """A Rust crate compiled in, from the tool root's registry."""

    name: str
    version: str
    tree_digest: str  # versions.toml's pin of its folder (stamps.tree_digest)
    package_sha256: str | None  # the .crate's sha256 where the registry records it (.cargo-checksum.json)
    expression: str | None
    licence_files: tuple[Path, ...]


@dataclass(frozen=True)
class Inventory:
    """Everything the papers of one artifact state."""

    name: str  # the distribution (wheels) or the component
    version: str
    arch: str  # an Arch, or a bare-metal target's name
    suite: str  # the Debian suite of the sysroot (of the tool root, for a bare-metal image)
    sources: tuple[Source, ...]
    libraries: tuple[Library, ...] = ()
    linked: tuple[Linked, ...] = ()
    crates: tuple[Crate, ...] = ()
    built_files: tuple[str, ...] = ()  # "<member> sha256=<hex>" of every ELF file the build itself made
    properties: Mapping[str, str] = field(default_factory=dict)


def source_of(name: str, role: str, spec: SourceSpec, tree: Path, patches: Iterable[PatchSpec] = (),
              repository: Path | None = None) -> Source:
    """*spec* (pinned, or a tree of this repository) staged at *tree*, with the patches applied to it."""
    applied = tuple((p.path.relative_to(repository).as_posix() if repository and p.path.is_relative_to(repository)
                     else p.path.name, p.sha256) for p in patches)
    match spec:
        case GitSource():
            return Source(name, role, spec.url, spec.commit, spec.tag, applied, licences.licence_files(tree))
        case TreeSource():
            where = spec.path.relative_to(repository).as_posix() if repository and spec.path.is_relative_to(
                repository) else spec.path.name
            # A folder of this repository is under the repository's licence unless it carries its own.
            texts = licences.licence_files(tree) or (licences.licence_files(repository) if repository else ())
            return Source(name, role, f"tree:{where}", stamps.tree_digest(spec.path), None, applied, texts)
        case ArchiveSource():
            return Source(name, role, spec.url, spec.sha256, None, applied, licences.licence_files(tree),
                          archive=True)
        case DebianSource():
            return Source(name, role, f"debian:{spec.package}", spec.version, None, applied,
                          licences.licence_files(tree))
        case _:
            raise StepFailed(f"{name}: a {spec.kind} source is compiled into nothing", fix="report this defect")


def component_sources(component: Component, arch: str, tree: Path, fetchcontent: Mapping[str, Path],
                      repository: Path, submodules: Mapping[str, tuple[str, str]] | None = None) -> tuple[Source, ...]:
    """The project (with its submodules: path -> (url, commit) as staged) and each FetchContent dependency, as
    staged for this build."""
    first = component.sources[0]
    own = [p for p in component.patches if arch in p.arches]
    found = [source_of(component.name, "project", first, tree, own, repository)]
    if isinstance(first, GitSource):
        substitutes = {path: (first.url, commit) for path, commit, _ in first.substitutes}
        staged = submodules or {}
        for path in first.submodules:
            # Where the staging exported it (its own URL, the gitlink's or the substitute's commit); a cache entry
            # staged before that was recorded names the superproject and no commit.
            url, commit = staged.get(path) or substitutes.get(path) or (first.url, "")
            found.append(Source(f"{component.name}:{path}", "submodule", url, commit, None, (),
                                licences.licence_files(tree / path)))
    for dep, specs in component.fetchcontent.items():
        folder = fetchcontent.get(dep.lower())
        if folder is None:
            continue
        patched = [p for p in component.fetchcontent_patches.get(dep, ()) if arch in p.arches]
        found.append(source_of(f"{component.name}+{dep}", "fetchcontent", specs[0], Path(folder), patched, repository))
    return tuple(found)


GRAFTED = re.compile(r"(?P<base>[^/]+?)-(?P<hash>[0-9a-f]{8})\.(?P<ext>so(?:\.[^/]*)?)")


def grafted_origin(member: str, search: Sequence[Path]) -> Path | None:
    """The library auditwheel copied into *member* (`<name>-<8 hex>.so…`: the hex are the first eight of the copied
    file's sha256): the first file of that name in *search* whose content has that hash."""
    found = GRAFTED.fullmatch(PurePosixPath(member).name)
    if found is None:
        return None
    name = f"{found['base']}.{found['ext']}"
    for folder in search:
        candidate = folder / name
        if candidate.is_file() and stamps.file_sha256(candidate).startswith(found["hash"]):
            return candidate
    return None


def debian_library(member: str, member_sha256: str, origin: Path, sysroot: Sysroot) -> Library:
    owner = sysroot.owner(origin)
    if owner is None:
        raise StepFailed(f"{member}: came from {origin}, which no package of the {sysroot.arch} sysroot installed",
                         fix="bundle only libraries of the sysroot's packages, or of components crosslane builds")
    relative = origin.resolve().relative_to(sysroot.path.resolve()).as_posix()
    return Library(member, member_sha256, relative, owner)


def crates(component: Component, registry: Path) -> tuple[Crate, ...]:
    """The component's pinned crates as the tool root's registry holds them."""
    index = toolroot.registry_index(registry) if component.crates else {}
    found = []
    for key, digest in sorted(component.crates.items()):
        name, _, version = key.rpartition("-")
        folder = index.get(key)
        if folder is None:
            raise StepFailed(f"{key}: not in the tool root's registry {registry}", fix="invoke sources makes the root")
        checksum = None
        try:
            recorded = json.loads((folder / ".cargo-checksum.json").read_text()).get("package")
            checksum = recorded if isinstance(recorded, str) and len(recorded) == 64 else None
        except (OSError, ValueError, AttributeError, RecursionError):  # no checksum recorded that can be read
            pass
        texts = licences.licence_files(folder) or debian_crate_copyright(registry, name, version)
        if not texts:
            raise StepFailed(f"{key}: no licence file in {folder} and no Debian copyright of its package",
                             fix="a crate without a licence text cannot be shipped: check the tool root's registry")
        found.append(Crate(name, version, digest, checksum, licences.crate_expression(folder), texts))
    return tuple(found)


def debian_crate_copyright(registry: Path, name: str, version: str) -> tuple[Path, ...]:
    """The copyright file of the Debian package that installed a crate (librust-<name>[-<major.minor>]-dev), in the
    root the registry is part of (<root>/usr/share/cargo/registry)."""
    docs = registry.parents[1] / "doc" if len(registry.parents) > 1 else registry
    base = name.replace("_", "-").lower()
    release = version.split("+")[0].split(".")
    for package in (f"librust-{base}-dev", f"librust-{base}-{'.'.join(release[:2])}-dev",
                    f"librust-{base}-{release[0]}-dev"):
        candidate = docs / package / "copyright"
        if candidate.is_file():
            return (candidate,)
    return ()


SAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(name: str) -> str:
    """*name* as one folder name of a licences folder."""
    return SAFE.sub("_", name).strip("._") or "_"


def source_licences(source: Source) -> dict[str, Path]:
    """Where a source's licence texts go in a licences folder (`sources/<name>/<file>`) -> the text's file."""
    return {f"sources/{safe_name(source.name)}/{path.name}": path for path in source.licence_files}


def debian_licence(owner: Owner) -> str:
    """Where a Debian package's copyright goes in a licences folder."""
    return f"debian/{safe_name(owner.package)}/copyright"


def library_licence(library: Library) -> str:
    return debian_licence(library.owner)


def packages_of(libraries: Iterable[Library]) -> dict[str, Owner]:
    """package -> Owner, each package once: one copyright and one licence expression serve all its libraries (genai's
    36 libabsl_* come from one package)."""
    return {library.owner.package: library.owner for library in libraries}


def crate_licences(crate: Crate) -> dict[str, Path]:
    return {f"crates/{safe_name(crate.name)}-{safe_name(crate.version)}/{path.name}": path
            for path in crate.licence_files}


def purl_path(url: str) -> tuple[str, str] | None:
    """(owner, name) of a github.com URL, for a pkg:github purl."""
    parts = urlsplit(url)
    if parts.hostname != "github.com":
        return None
    owner, _, name = parts.path.strip("/").removesuffix(".git").partition("/")
    return (owner, name) if owner and name and "/" not in name else None

