"""A pinned commit's tree written out of a local git folder (a mirror, a partial clone, a bundle's repo).

Used when CROSSLANE_GIT_MIRROR points a git source at a local folder: air-gapped staging, as Yocto's
PREMIRRORS or Buildroot's `make source` directories serve. The commit must be in the folder under the
pinned id (and the tag, when pinned, must name it); every blob is read by the id its tree records, so
the content is the commit's. A partial mirror may lack blobs (`git clone --filter=blob:limit=…` leaves
large test data behind): a missing blob is an error unless its path matches the source's `absent_ok`
globs, and what was left out is reported, never silent.

It calls git through subprocess, not the runner: `cat-file --batch` streams binary blobs both ways, which
the runner's line-oriented, logged text output is not for.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane import treecheck
from crosslane.errors import IntegrityError, MissingPrerequisite

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
TIMEOUT = 600.0


@dataclass(frozen=True)
class Entry:
    mode: str
    kind: str
    oid: str
    path: str


@dataclass(frozen=True)
class Exported:
    files: int
    absent: tuple[str, ...]  # paths allowed by absent_ok that the mirror did not have
    gitlinks: tuple[tuple[str, str], ...]  # (path, commit) of submodules, for the superproject's pins
    commit_time: int = 0  # the commit's committer time (SOURCE_DATE_EPOCH of what is built from it)


def _git(folder: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "--git-dir", str(folder), *args], input=stdin, capture_output=True, env=env,
                          timeout=TIMEOUT, check=False)


def git_dir(folder: Path) -> Path:
    """A bare repository is its own git dir; a work tree has one in .git."""
    return folder / ".git" if (folder / ".git").is_dir() else folder


def resolve(folder: Path, commit: str, tag: str | None, url: str) -> None:
    """Fail unless *folder* holds *commit* (and *tag*, when pinned, names it)."""
    found = _git(folder, "cat-file", "-t", commit)
    if found.returncode != 0 or found.stdout.strip() != b"commit":
        raise MissingPrerequisite(f"{folder}: git mirror of {url} lacks commit {commit}",
                                  fix="update the mirror (git fetch) or point CROSSLANE_GIT_MIRROR elsewhere")
    if tag:
        named = _git(folder, "rev-parse", "--verify", "-q", f"refs/tags/{tag}^{{commit}}")
        got = named.stdout.decode().strip()
        if named.returncode != 0:
            raise IntegrityError(f"{folder}: git mirror of {url} has commit {commit} but no tag {tag}; a pinned tag "
                                 "must name the pinned commit", fix="fetch the mirror with its tags (git fetch --tags)")
        if got != commit:
            raise IntegrityError(f"{folder}: tag {tag} is commit {got}, versions.toml pins {commit} (a moved tag)",
                                 fix="check upstream; update commit only if the move is legitimate")


def entries(folder: Path, commit: str) -> list[Entry]:
    listed = _git(folder, "ls-tree", "-r", "-z", "--full-tree", commit)
    if listed.returncode != 0:
        raise MissingPrerequisite(f"{folder}: cannot list the tree of {commit}: "
                                  f"{listed.stderr.decode(errors='replace').strip()}", fix="repair the mirror")
    result = []
    for record in listed.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid = meta.decode().split()
        result.append(Entry(mode, kind, oid, path.decode("utf-8", errors="surrogateescape")))
    return result


def read_blobs(folder: Path, oids: Sequence[str]) -> dict[str, bytes | None]:
    """Each blob's bytes by id (None: missing), read in one `git cat-file --batch`."""
    unique = list(dict.fromkeys(oids))
    done = _git(folder, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in unique).encode())
    out, pos = done.stdout, 0
    found: dict[str, bytes | None] = {}
    for oid in unique:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 2 and header[1] == b"missing":
            found[oid] = None
            continue
        size = int(header[2])
        found[oid] = out[pos:pos + size]
        pos += size + 1
    return found


def export(folder: Path, commit: str, tag: str | None, url: str, dest: Path,
           absent_ok: Sequence[str] = ()) -> Exported:
    """Write the commit's tree into *dest* (an empty folder of the caller's). Every path is checked before one is
    written (a crafted tree object can hold `..`, a path twice, or a link `a` beside a folder `a/`, which git
    never writes); files are created without following links; links are made last and stay inside the tree."""
    folder = git_dir(folder)
    resolve(folder, commit, tag, url)
    listed = entries(folder, commit)
    blobs = read_blobs(folder, [e.oid for e in listed if e.kind == "blob"])
    absent: list[str] = []
    gitlinks: list[tuple[str, str]] = []
    wanted: list[treecheck.Entry] = []
    for entry in listed:
        if entry.kind == "commit":  # a submodule: its own pinned source, not part of this tree
            gitlinks.append((entry.path, entry.oid))
            wanted.append(treecheck.Entry(entry.path, "dir"))
            continue
        data = blobs.get(entry.oid)
        if data is None:
            if any(fnmatch.fnmatch(entry.path, pattern) for pattern in absent_ok):
                absent.append(entry.path)
                continue
            raise MissingPrerequisite(f"{folder}: the mirror lacks {entry.path} (blob {entry.oid}) of {commit}",
                                      fix="use a complete mirror, or add the path to the source's absent_ok if "
                                          "the build never reads it")
        link = entry.mode == "120000"
        wanted.append(treecheck.Entry(entry.path, "link" if link else "file", os.fsdecode(data) if link else ""))
    try:
        tree = treecheck.check(wanted)
    except treecheck.Refused as exc:
        raise treecheck.refuse(IntegrityError, f"{folder}: the tree of {commit}",
                               "the mirror is damaged or hostile: fetch it again from upstream", exc) from None
    files = 0
    for entry in listed:
        data = blobs.get(entry.oid)
        if entry.kind == "commit" or data is None or entry.mode == "120000":
            continue
        mode = 0o755 if entry.mode == "100755" else 0o644
        with os.fdopen(treecheck.create_file(dest, treecheck.parts_of(entry.path), mode), "wb") as out:
            out.write(data)
        files += 1
    links = {parts: e for parts, e in tree.items() if e.kind == "link"}
    treecheck.make_links(dest, links)
    return Exported(files + len(links), tuple(absent), tuple(gitlinks), commit_time(folder, commit))


def commit_time(folder: Path, commit: str) -> int:
    """The committer time of *commit* (seconds since the epoch), read from its commit object."""
    found = _git(folder, "show", "-s", "--format=%ct", commit)
    text = found.stdout.decode(errors="replace").strip()
    return int(text) if found.returncode == 0 and text.isascii() and text.isdigit() else 0
