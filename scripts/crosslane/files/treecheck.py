"""A tree that arrives as a list of entries (a pack's tar members, a mirror's `git ls-tree`) checked whole before
any of it is written, and then written without ever following a link.

Refused: absolute paths, empty, `.` and `..` components, names past the kernel's limits, the same path twice,
an entry below a link or a file (writing it would go through the link: the CVE-2025-4517 class), and a link
that leads outside the tree. Links are resolved the way the kernel will resolve them once the tree exists,
through the other links of the tree (`a -> .` then `b -> a/../x` leaves the tree although `a/..` reads as
`.`), with a bounded depth, so neither a chain nor a nest deeper than PATH_MAX gets past the check.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from crosslane.errors import CrosslaneError

Kind = Literal["file", "dir", "link"]
NAME_MAX = 255
PATH_MAX = 4096
LINK_DEPTH = 40  # the kernel's own limit on links followed in one lookup


@dataclass(frozen=True)
class Entry:
    path: str
    kind: Kind
    target: str = ""  # a link's text


class Refused(Exception):
    """Why a tree was refused (the caller turns it into its own error kind, naming the archive or mirror)."""


def parts_of(path: str) -> tuple[str, ...]:
    """The components of a relative path inside a tree; Refused for anything else."""
    if not path or "\0" in path or len(path.encode("utf-8", "surrogateescape")) > PATH_MAX:
        raise Refused(f"path {path[:80]!r}: empty, holds a NUL byte or is longer than {PATH_MAX} bytes")
    if path.startswith("/"):
        raise Refused(f"path '{path}' is absolute")
    parts = tuple(path.rstrip("/").split("/"))
    for part in parts:
        if part in ("", ".", ".."):
            raise Refused(f"path '{path}' has a '{part or '//'}' component")
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX:
            raise Refused(f"path '{path[:80]}…' has a name longer than {NAME_MAX} bytes")
    return parts


def _resolve(links: Mapping[tuple[str, ...], str], start: tuple[str, ...], target: str,
             depth: int) -> tuple[str, ...] | None:
    """Where *target*, read in folder *start*, leads (None: out of the tree)."""
    if depth > LINK_DEPTH:
        raise Refused(f"links nest deeper than {LINK_DEPTH}")
    if not target or target.startswith("/") or "\0" in target or len(target) > PATH_MAX:
        return None
    where = list(start)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not where:
                return None
            where.pop()
            continue
        where.append(part)
        through = links.get(tuple(where))
        if through is not None:
            landed = _resolve(links, tuple(where[:-1]), through, depth + 1)
            if landed is None:
                return None
            where = list(landed)
    return tuple(where)


def check(entries: Iterable[Entry]) -> dict[tuple[str, ...], Entry]:
    """Every entry by its path components, once the whole tree passed; Refused names the first problem."""
    tree: dict[tuple[str, ...], Entry] = {}
    for entry in entries:
        parts = parts_of(entry.path)
        if parts in tree:
            raise Refused(f"'{entry.path}' appears twice")
        tree[parts] = entry
    for parts, entry in tree.items():
        for cut in range(1, len(parts)):
            above = tree.get(parts[:cut])
            if above is not None and above.kind != "dir":
                raise Refused(f"'{entry.path}' lies below the {above.kind} '{above.path}' (it would be written "
                              "through it)")
    links = {parts: e.target for parts, e in tree.items() if e.kind == "link"}
    for parts, entry in tree.items():
        if entry.kind == "link" and _resolve(links, parts[:-1], entry.target, 0) is None:
            raise Refused(f"link '{entry.path}' -> '{entry.target}' leads outside the tree")
    return tree


def create_file(root: Path, parts: tuple[str, ...], mode: int) -> int:
    """A new file at *parts* under *root* (a fresh folder of the caller's), its folders made as plain folders;
    never follows a link, never replaces what is there. Returns a file descriptor open for writing."""
    folder = root.joinpath(*parts[:-1])
    folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink():
        raise Refused(f"'{'/'.join(parts[:-1])}' became a link while writing")
    return os.open(folder / parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                   mode & 0o755)


def make_links(root: Path, tree: Mapping[tuple[str, ...], Entry]) -> None:
    """The tree's links, made last (after every file and folder), so no write went through one."""
    for parts, entry in tree.items():
        if entry.kind == "link":
            folder = root.joinpath(*parts[:-1])
            folder.mkdir(parents=True, exist_ok=True)
            (folder / parts[-1]).symlink_to(entry.target)


def refuse(error: type[CrosslaneError], where: str, fix: str, exc: Refused) -> CrosslaneError:
    return error(f"{where}: {exc}; refusing it", fix=fix)
