"""Build outputs as one file per arch × component, for CI's "build once, smoke many" jobs.

`pack` writes a component's install folder and stamp into a tar.gz under a `crosslane-pack/` top folder whose
first member is a manifest listing every other member (kind, size, sha256, link text); links that leave the
component's folder (the `provided` recipe links into the sysroot, which every job makes itself) are left out
and remade after unpacking. The file appears at `--output` whole or not at all.

`unpack` treats a pack as a download from another job, as pip treats a wheel: it is hostile until proven
otherwise. The whole member list is checked before anything is written (treecheck: no absolute or `..`
paths, no member below a link, no link out of the component's folder however it chains), the expanded size
is bounded, every member must be the manifest's (same kind, size and digest) and every ELF file must be for
the manifest's arch. The tree is written into a staging folder inside the component's folder, never through a
link, and swapped in under the arch's build lock; the old stamp goes first and the new one is written last,
with the outputs listing of what now lies on this disk.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import os
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from crosslane.archs import Arch, info
from crosslane.context import Context
from crosslane.errors import ConfigError, IntegrityError, UsageError
from crosslane.files import atomic, bounded, locks, stamps, treecheck, userpaths
from crosslane.report import Check, Row, Verdict
from crosslane.run import pipeline

TOP = "crosslane-pack"
MANIFEST = "manifest.json"
FORMAT = 2
# A real pack expands 2-10× (binaries and headers); a bomb expands by thousands.
MAX_RATIO = 100
MIN_BOUND = 256 << 20
MAX_EXPANDED = 16 << 30
MAX_MEMBERS = 200_000
CHUNK = 1 << 20
FIX = "the pack is damaged or hostile: download it again, or run `invoke pack` again in the job that built it"


@dataclass(frozen=True)
class Member:
    path: str  # relative to the component's folder: the stamp, or install/…
    kind: treecheck.Kind
    size: int = 0
    sha256: str = ""
    target: str = ""
    mode: int = 0o644


@dataclass(frozen=True, kw_only=True)
class Contents:
    """What a pack of a component's folder holds, and how many links into the sysroot it leaves out."""

    members: list[Member]
    left_out: int


def _inside(link: Path, root: Path) -> bool:
    target = Path(os.path.normpath(link.parent / os.readlink(link)))
    return target.is_relative_to(root)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _contents(folder: Path) -> Contents:
    """What a pack of *folder* holds."""
    install = folder / "install"
    found = [Member(stamps.STAMP, "file", (folder / stamps.STAMP).stat().st_size, _sha256(folder / stamps.STAMP))]
    skipped = 0
    for path in sorted([install, *install.rglob("*")]):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            if _inside(path, folder):
                found.append(Member(rel, "link", target=os.readlink(path)))
            else:
                skipped += 1
        elif path.is_dir():
            found.append(Member(rel, "dir", mode=0o755))
        elif path.is_file():
            found.append(Member(rel, "file", path.stat().st_size, _sha256(path), mode=path.stat().st_mode & 0o755))
        else:
            raise UsageError(f"{path}: neither a file, a folder nor a link; a pack holds only those",
                             fix="remove it from the install folder and build again")
    return Contents(members=found, left_out=skipped)


def _manifest(arch: Arch, component: str, recipe: str, members: list[Member]) -> bytes:
    return json.dumps({"format": FORMAT, "arch": arch.value, "component": component, "recipe": recipe,
                       "members": [{"path": m.path, "kind": m.kind, "size": m.size, "sha256": m.sha256,
                                    "target": m.target, "mode": m.mode} for m in members]},
                      indent=0, sort_keys=True).encode()


def _normal(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def pack(ctx: Context, arch: Arch, component: str, output: Path) -> list[Row]:
    if component not in ctx.config.components:
        raise UsageError(f"unknown component '{component}' (known: {', '.join(ctx.config.components)})")
    final = userpaths.claim_file("--output", output)  # the pack is written beside it and renamed over it
    folder = ctx.component_dir(arch, component)
    with locks.hold(ctx.build_lock(arch), f"the {arch} build tree", ctx.log):
        if not (folder / "install").is_dir() or stamps.read(folder) is None:
            raise UsageError(f"{folder}: not built", fix=f"invoke build --arch {arch} --component {component}")
        contents = _contents(folder)
        manifest = _manifest(arch, component, ctx.config.components[component].recipe, contents.members)
        final.parent.mkdir(parents=True, exist_ok=True)
        atomic.sweep_stale(final)
        partial = final.with_name(f".{final.name}.{os.getpid()}.partial")
        try:
            with tarfile.open(partial, "w:gz") as tar:
                head = tarfile.TarInfo(f"{TOP}/{MANIFEST}")
                head.size = len(manifest)
                tar.addfile(_normal(head), fileobj=io.BytesIO(manifest))
                base = f"{TOP}/{arch.value}/{component}"
                for member in contents.members:
                    tar.add(folder / member.path, f"{base}/{member.path}", recursive=False, filter=_normal)
            with partial.open("rb+") as written:  # what reached the disk, not what the buffers held
                os.fsync(written.fileno())
            userpaths.claim_file("--output", output)  # still what it was when the pack began
            partial.replace(final)
        finally:
            partial.unlink(missing_ok=True)
    note = f"; {contents.left_out} links into the sysroot left out (remade on unpack)" if contents.left_out else ""
    return [Row(component=component, arch=arch, check=Check.ARTIFACT, verdict=Verdict.PASS,
                reason=f"{output} ({final.stat().st_size / 1e6:.1f} MB, {len(contents.members)} members){note}",
                subject="pack")]


# --- unpack -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Manifest:
    arch: Arch
    component: str
    recipe: str
    members: dict[str, Member]


def _refuse(archive: Path, message: str) -> ConfigError:
    return ConfigError(f"{archive}: {message}", fix=FIX)


def _read_manifest(archive: Path, tar: tarfile.TarFile, head: tarfile.TarInfo) -> Manifest:
    if head.name != f"{TOP}/{MANIFEST}" or not head.isreg() or head.size > bounded.JSON_LIMIT:
        raise ConfigError(f"{archive}: not a crosslane pack (its first member is not {TOP}/{MANIFEST})",
                          fix="pass a file `invoke pack` wrote")
    handle = tar.extractfile(head)
    assert handle is not None  # a regular member always has a reader
    data = bounded.parse_json(handle.read(), f"{archive}: {MANIFEST}", error=ConfigError, fix=FIX)
    try:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format') if isinstance(data, dict) else None}, this crosslane "
                             f"reads format {FORMAT}")
        arch, component, recipe = Arch(data["arch"]), data["component"], data["recipe"]
        if not isinstance(component, str) or not isinstance(recipe, str) or not isinstance(data["members"], list):
            raise TypeError("component, recipe or members of the wrong type")
        members: dict[str, Member] = {}
        for entry in data["members"]:
            kind = entry["kind"]
            if kind not in ("file", "dir", "link"):
                raise ValueError(f"member kind {kind!r}")
            member = Member(str(entry["path"]), kind, int(entry["size"]), str(entry["sha256"]),
                            str(entry["target"]), int(entry["mode"]))
            if member.path in members:
                raise ValueError(f"'{member.path}' listed twice")
            members[member.path] = member
    except (KeyError, TypeError, ValueError) as exc:
        raise _refuse(archive, f"{MANIFEST} is not a crosslane pack manifest ({type(exc).__name__}: {exc})") \
            from None
    return Manifest(arch, component, recipe, members)


def _entries(archive: Path, found: Manifest, members: list[tarfile.TarInfo]) -> dict[str, tarfile.TarInfo]:
    """The tar members by path inside the component's folder, each checked against the manifest."""
    base = f"{TOP}/{found.arch.value}/{found.component}/"
    by_path: dict[str, tarfile.TarInfo] = {}
    for member in members:
        if not member.name.startswith(base):
            raise _refuse(archive, f"member '{member.name}' lies outside {base} (the manifest's arch and component)")
        rel = member.name[len(base):].rstrip("/")
        if rel != stamps.STAMP and rel != "install" and not rel.startswith("install/"):
            raise _refuse(archive, f"member '{member.name}' is neither the stamp nor under install/")
        kind = "file" if member.isreg() else "dir" if member.isdir() else "link" if member.issym() else None
        listed = found.members.get(rel)
        if kind is None:
            raise _refuse(archive, f"member '{member.name}' is a hard link, device or FIFO; a pack holds files, "
                                   "folders and links")
        if rel in by_path:
            raise _refuse(archive, f"member '{rel}' appears twice")
        if rel == stamps.STAMP and kind != "file":
            raise _refuse(archive, f"its {stamps.STAMP} is a {kind}, not a file")
        if listed is None or listed.kind != kind or (kind == "file" and listed.size != member.size) or (
                kind == "link" and listed.target != member.linkname):
            raise _refuse(archive, f"member '{rel}' ({kind}) disagrees with the manifest")
        by_path[rel] = member
    missing = sorted(set(found.members) - set(by_path))
    if missing:
        raise _refuse(archive, f"the manifest lists {len(missing)} members the pack lacks: {', '.join(missing[:3])}")
    if stamps.STAMP not in by_path:
        raise _refuse(archive, "it holds no stamp")
    if "install" not in by_path or not by_path["install"].isdir():
        # checked before the old build is touched: unpacking replaces the component's install folder with it
        raise _refuse(archive, "its install/ is missing or not a folder")
    return by_path


def _check_tree(archive: Path, entries: dict[str, tarfile.TarInfo]) -> dict[tuple[str, ...], treecheck.Entry]:
    kinds = {rel: ("file" if m.isreg() else "dir" if m.isdir() else "link") for rel, m in entries.items()}
    try:
        return treecheck.check(treecheck.Entry(rel, kinds[rel], m.linkname if m.issym() else "")  # type: ignore[arg-type]
                               for rel, m in entries.items())
    except treecheck.Refused as exc:
        raise treecheck.refuse(ConfigError, str(archive), FIX, exc) from None


def _copy(archive: Path, source: IO[bytes], fd: int, expected: Member, machine: int) -> None:
    digest = hashlib.sha256()
    seen = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(CHUNK):
            if seen == 0 and chunk[:4] == b"\x7fELF" and len(chunk) >= 20:
                got = int.from_bytes(chunk[18:20], "little" if chunk[5] == 1 else "big")
                if got != machine:
                    raise _refuse(archive, f"'{expected.path}' is an ELF file for machine {got}, not for the "
                                           f"manifest's arch (machine {machine})")
            seen += len(chunk)
            digest.update(chunk)
            out.write(chunk)
    if seen != expected.size or digest.hexdigest() != expected.sha256:
        raise IntegrityError(f"{archive}: '{expected.path}' is not the file its manifest lists (sha256 "
                             f"{digest.hexdigest()[:12]}…, listed {expected.sha256[:12]}…)", fix=FIX)


def _write(archive: Path, tar: tarfile.TarFile, found: Manifest, entries: dict[str, tarfile.TarInfo],
           tree: dict[tuple[str, ...], treecheck.Entry], staging: Path) -> None:
    machine = info(found.arch).elf_machine
    for parts, entry in tree.items():
        if entry.kind == "dir":
            staging.joinpath(*parts).mkdir(parents=True, exist_ok=True)
        elif entry.kind == "file":
            source = tar.extractfile(entries[entry.path])
            assert source is not None
            _copy(archive, source, treecheck.create_file(staging, parts, found.members[entry.path].mode),
                  found.members[entry.path], machine)
    treecheck.make_links(staging, tree)


def _stamp(archive: Path, staged: Path) -> dict[str, object]:
    data = bounded.parse_json((staged / stamps.STAMP).read_bytes(), f"{archive}: {stamps.STAMP}", error=ConfigError,
                              fix=FIX)
    if not isinstance(data, dict) or not isinstance(data.get("key"), str):
        raise _refuse(archive, f"its {stamps.STAMP} is not a stamp")
    return data


def _shape(entry: object) -> object:
    """An outputs-listing entry without its times: a file's size, a link's text."""
    if not isinstance(entry, list):
        return entry
    return entry[:2] if entry[:1] == ["link"] else entry[:1]


def _matches(recorded: object, listing: dict[str, list[int | str]]) -> bool:
    """The stamp's outputs listing names what the pack installs (the times in it are the building disk's)."""
    return isinstance(recorded, dict) and set(recorded) == set(listing) and all(
        _shape(value) == _shape(listing[name]) for name, value in recorded.items())


def _expanded_bound(archive: Path) -> int:
    return min(MAX_EXPANDED, max(MIN_BOUND, MAX_RATIO * archive.stat().st_size))


def _read_to_the_end(tar: tarfile.TarFile) -> None:
    """The compressed stream read through its trailer: tar stops at its end-of-archive blocks, before gzip's CRC-32
    and size are checked, so a corrupt member would otherwise unpack as verified by a manifest made from it."""
    stream = tar.fileobj
    if stream is not None:
        while stream.read(1 << 20):
            pass


def unpack(ctx: Context, archive: Path) -> list[Row]:
    with bounded.open_regular(archive, UsageError, fix="pass a file `invoke pack` wrote") as handle:
        try:
            with tarfile.open(fileobj=handle, mode="r:*") as tar:
                members = []
                for member in tar:
                    members.append(member)
                    if len(members) > MAX_MEMBERS:
                        raise _refuse(archive, f"more than {MAX_MEMBERS} members")
                if not members:
                    raise ConfigError(f"{archive}: not a crosslane pack (empty)", fix="pass a file `invoke pack` wrote")
                _read_to_the_end(tar)
                found = _read_manifest(archive, tar, members[0])
                if found.component not in ctx.config.components:
                    raise ConfigError(f"{archive}: packs component '{found.component}', which versions.toml does "
                                      "not have", fix="unpack it with the versions.toml that built it")
                entries = _entries(archive, found, members[1:])
                expanded = sum(m.size for m in members if m.isreg())
                if expanded > _expanded_bound(archive):
                    raise _refuse(archive, f"expands to {expanded >> 20} MiB from {archive.stat().st_size >> 20} MiB "
                                           f"(bound {_expanded_bound(archive) >> 20} MiB): a decompression bomb")
                tree = _check_tree(archive, entries)
                final = ctx.component_dir(found.arch, found.component)
                with locks.hold(ctx.build_lock(found.arch), f"the {found.arch} build tree", ctx.log):
                    _install(ctx, archive, tar, found, entries, tree, final)
        except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError) as exc:
            if isinstance(exc, OSError) and exc.filename is not None:
                raise
            raise ConfigError(f"{archive}: not a readable pack ({type(exc).__name__}: {exc})", fix=FIX) from None
    rows = [Row(component=found.component, arch=found.arch, check=Check.ARTIFACT, verdict=Verdict.PASS,
                reason=f"{archive.name} → {final} ({len(entries)} members verified)", subject="unpack")]
    entry = ctx.config.registries.recipes.entries.get(found.recipe)
    if entry is not None and not entry.compiles:
        rows += pipeline.build_components(ctx, found.arch, [found.component], force=True)
    return rows


def _install(ctx: Context, archive: Path, tar: tarfile.TarFile, found: Manifest, entries: dict[str, tarfile.TarInfo],
             tree: dict[tuple[str, ...], treecheck.Entry], final: Path) -> None:
    """Stage beside the component's folder, verify, then swap: the old stamp and install go only once the new tree
    is whole and checked. A killed unpack's staging folder is swept by the next one (atomic.sweep_stale)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    atomic.sweep_stale(final)
    staging = final.with_name(f".{final.name}.{os.getpid()}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        _write(archive, tar, found, entries, tree, staging)
        stamp = _stamp(archive, staging)
        listing = stamps.outputs_listing(staging / "install")
        if "outputs" in stamp and not _matches(stamp["outputs"], listing):
            raise _refuse(archive, f"its stamp's outputs disagree with its install folder ({len(listing)} entries)")
        if final.is_symlink() or (final.exists() and not final.is_dir()):
            final.unlink()  # replaced, never written through
        final.mkdir(exist_ok=True)
        stamps.clear(final)
        stamps.remove(final / "install")
        (staging / "install").rename(final / "install")
        if "outputs" in stamp:
            stamp["outputs"] = stamps.outputs_listing(final / "install")
        atomic.write_text(final / stamps.STAMP, json.dumps(stamp, indent=1, sort_keys=True) + "\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    ctx.log.info(f"    unpacked {found.component} for {found.arch}: {len(entries)} members verified")
