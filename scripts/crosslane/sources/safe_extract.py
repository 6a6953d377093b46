"""Extract a fetched tarball without trusting it: every member is checked before anything is written.

Refused: absolute paths, `..` components, links (symbolic or hard) whose target leaves the tree,
devices and fifos. The tree is written to a temporary folder beside *dest* and renamed into place,
so a refused or interrupted extraction leaves nothing behind. A single top-level folder (the usual
`name-version/` of release and Debian orig tarballs) is stripped.
"""

from __future__ import annotations

import copy
import os
import tarfile
from pathlib import Path, PurePosixPath

from crosslane.errors import ConfigError
from crosslane.files import atomic, treecheck


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))


def _check_name(archive: Path, member: tarfile.TarInfo) -> None:
    name = member.name
    if name.startswith("/") or PurePosixPath(name).is_absolute():
        raise ConfigError(f"{archive.name}: member '{name}' has an absolute path; refusing to extract",
                          fix="the archive is hostile or broken; check its pin and origin")
    if ".." in _parts(name):
        raise ConfigError(f"{archive.name}: member '{name}' contains '..'; refusing to extract",
                          fix="the archive is hostile or broken; check its pin and origin")


def inside(link_dir: PurePosixPath, target: str) -> bool:
    """Whether a link in *link_dir* (relative to the tree) pointing at *target* stays inside the tree."""
    if target.startswith("/"):
        return False
    depth = 0
    for part in (*_parts(str(link_dir)), *PurePosixPath(target).parts):
        if part in ("", "."):
            continue
        depth = depth - 1 if part == ".." else depth + 1
        if depth < 0:
            return False
    return True


def _check_member(archive: Path, member: tarfile.TarInfo) -> None:
    _check_name(archive, member)
    if member.issym() and not inside(PurePosixPath(member.name).parent, member.linkname):
        raise ConfigError(f"{archive.name}: symlink '{member.name}' -> '{member.linkname}' points outside the "
                          "tree; refusing to extract", fix="the archive is hostile or broken; check its pin and origin")
    if member.islnk() and (member.linkname.startswith("/") or ".." in _parts(member.linkname)):
        raise ConfigError(f"{archive.name}: hard link '{member.name}' -> '{member.linkname}' points outside the "
                          "tree; refusing to extract", fix="the archive is hostile or broken; check its pin and origin")
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise ConfigError(f"{archive.name}: member '{member.name}' is a device or fifo; refusing to extract",
                          fix="the archive is hostile or broken; check its pin and origin")


def _check_whole(archive: Path, members: list[tarfile.TarInfo]) -> None:
    """The tree as the kernel will see it once written: no member below a link, no link chain that leaves it
    (treecheck), and a hard link only to a regular file of the archive reached through no link. A folder may
    be listed twice (tar --append does it); anything else twice is refused."""
    entries: dict[str, treecheck.Entry] = {}
    doubled: list[str] = []
    for m in members:
        entry = treecheck.Entry(m.name, "dir" if m.isdir() else "link" if m.issym() else "file",
                                m.linkname if m.issym() else "")
        if m.name in entries and not (m.isdir() and entries[m.name] == entry):
            doubled.append(m.name)
        entries.setdefault(m.name, entry)
    try:
        if doubled:
            raise treecheck.Refused(f"'{doubled[0]}' appears twice")
        tree = treecheck.check(entries.values())
        earlier: set[tuple[str, ...]] = set()  # regular files extracted before: all a hard link can name
        for member in members:
            if member.islnk():
                target = treecheck.parts_of(member.linkname)
                through = [tree[target[:cut]] for cut in range(1, len(target)) if target[:cut] in tree]
                if any(e.kind != "dir" for e in through) or target not in earlier:
                    raise treecheck.Refused(f"hard link '{member.name}' -> '{member.linkname}' is not to an earlier "
                                            "file of the archive")
            elif member.isreg():
                earlier.add(treecheck.parts_of(member.name))
    except treecheck.Refused as exc:
        raise treecheck.refuse(ConfigError, archive.name, "the archive is hostile or broken; check its pin and origin",
                               exc) from None


def _strip_prefix(members: list[tarfile.TarInfo]) -> str | None:
    tops = {_parts(m.name)[0] for m in members if _parts(m.name)}
    if len(tops) != 1:
        return None
    top = next(iter(tops))
    for member in members:
        if _parts(member.name) == (top,) and not member.isdir():
            return None
    return top


def _rebase(member: tarfile.TarInfo, top: str | None) -> tarfile.TarInfo | None:
    parts = _parts(member.name)[1:] if top is not None else _parts(member.name)
    if not parts:
        return None
    linkname = member.linkname
    if member.islnk() and top is not None:
        link_parts = _parts(linkname)
        linkname = "/".join(link_parts[1:] if link_parts[:1] == (top,) else link_parts)
    # TarInfo.replace() and extraction filters arrived in 3.11.4; Debian 12's python3 is 3.11.2.
    rebased = copy.copy(member)
    rebased.name = "/".join(parts)
    rebased.linkname = linkname
    return rebased


def extract(archive: Path, dest: Path) -> Path:
    """Extract *archive* into *dest* (which must not exist yet); return *dest*."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            members = tar.getmembers()
            for member in members:
                _check_name(archive, member)
            top = _strip_prefix(members)
            # Links are judged where they land: after the top folder is stripped.
            rebased = [m for m in (_rebase(m, top) for m in members) if m is not None]
            for member in rebased:
                _check_member(archive, member)
            _check_whole(archive, rebased)
            with atomic.publish_dir(dest, lambda _: False) as staging:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(staging, members=rebased, filter="data")
                else:  # pragma: no cover - Python < 3.11.4; _check_member already refused what "data" would
                    tar.extractall(staging, members=rebased)  # noqa: S202 - every member was checked above
    except (tarfile.TarError, EOFError) as exc:
        raise ConfigError(f"{archive.name}: not a readable tar archive ({exc})",
                          fix="check the pinned URL points at a .tar.gz/.tar.xz/.tar.bz2") from None
    return dest


def check_tree_links(root: Path) -> None:
    """Refuse a checked-out tree holding a symlink that points outside it (git checkouts are not tarballs)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                rel_dir = PurePosixPath(path.parent.relative_to(root).as_posix())
                target = str(path.readlink())
                if not inside(rel_dir, target):
                    raise ConfigError(f"{root.name}: symlink '{path.relative_to(root)}' -> '{target}' points "
                                      "outside the tree; refusing to use it",
                                      fix="the source is hostile or broken; check its pin and origin")
