"""A pinned commit's tree written out of a local git folder (a mirror, a partial clone, a bundle's repo).

Used when CROSSLANE_GIT_MIRROR points a git source at a local folder: air-gapped staging, as Yocto's
PREMIRRORS or Buildroot's `make source` directories serve. The commit must be in the folder under the
pinned id (and the tag, when pinned, must name it); the commit, every tree and every blob is read by its id
and hashed again (git does not check a loose object's bytes when it reads them), so the content is the
commit's. A partial mirror may lack blobs (`git clone --filter=blob:limit=…` leaves
large test data behind): a missing blob is an error unless its path matches the source's `absent_ok`
globs, and what was left out is reported, never silent.

It calls git through contain.run, not the runner: `cat-file --batch` streams binary blobs both ways, which
the runner's line-oriented, logged text output is not for (contained all the same).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.errors import IntegrityError, MissingPrerequisite
from crosslane.files import treecheck
from crosslane.process import contain

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}
TIMEOUT = 600.0
REFETCH = "the mirror is damaged or hostile: fetch it again from upstream"


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
    return contain.run(["git", "--git-dir", str(folder), *args], feed=stdin or b"", env=env, timeout=TIMEOUT)


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


def object_id(kind: str, data: bytes, length: int) -> str:
    """The id git gives an object of *kind* with *data*: sha1 (40 hex digits) or sha256 (64) of header and data."""
    digest = hashlib.sha1 if length == 40 else hashlib.sha256
    return digest(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def read_objects(folder: Path, oids: Sequence[str]) -> dict[str, tuple[str, bytes] | None]:
    """Each object's (type, bytes) by id (None: missing), read in one `git cat-file --batch` and hashed again:
    git does not check a loose object's bytes against its id when it reads them, so a mirror could otherwise
    serve other content under the pinned ids."""
    unique = list(dict.fromkeys(oids))
    done = _git(folder, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in unique).encode())
    damaged = f"{folder}: git cat-file cannot read the mirror's objects"
    if done.returncode != 0:
        raise IntegrityError(f"{damaged} ({done.stderr.decode(errors='replace').strip()[:300]})", fix=REFETCH)
    out, pos = done.stdout, 0
    found: dict[str, tuple[str, bytes] | None] = {}
    try:
        for oid in unique:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if len(header) == 2 and header[1] == b"missing":
                found[oid] = None
                continue
            kind, size = header[1].decode("ascii"), int(header[2])
            data = out[pos:pos + size]
            pos += size + 1
            if len(data) != size or object_id(kind, data, len(oid)) != oid:
                raise IntegrityError(f"{folder}: the {kind} stored as {oid} holds other bytes (they hash to "
                                     f"{object_id(kind, data, len(oid))})", fix=REFETCH)
            found[oid] = (kind, data)
    except (ValueError, IndexError, UnicodeDecodeError):
        raise IntegrityError(f"{damaged} (an answer git does not give)", fix=REFETCH) from None
    return found


def read_blobs(folder: Path, oids: Sequence[str]) -> dict[str, bytes | None]:
    """Each blob's bytes by id (None: missing), verified against its id."""
    found: dict[str, bytes | None] = {}
    for oid, read in read_objects(folder, oids).items():
        if read is not None and read[0] != "blob":
            raise IntegrityError(f"{folder}: object {oid} is a {read[0]}, its tree lists a file", fix=REFETCH)
        found[oid] = read[1] if read is not None else None
    return found


def verify_trees(folder: Path, commit: str) -> None:
    """The commit and every tree under it hash to their ids, and the commit names its root tree: what `ls-tree`
    then lists is the pinned commit's."""
    root = _git(folder, "rev-parse", "--verify", "-q", f"{commit}^{{tree}}").stdout.decode().strip()
    listed = _git(folder, "ls-tree", "-r", "-t", "-d", "-z", "--full-tree", commit)
    if not root or listed.returncode != 0:
        raise IntegrityError(f"{folder}: cannot list the trees of {commit}", fix=REFETCH)
    # -d lists a submodule's gitlink too: its commit is the submodule's own pinned source, checked there
    metas = [record.partition(b"\t")[0].split() for record in listed.stdout.split(b"\0") if record]
    trees = [meta[2].decode() for meta in metas if len(meta) == 3 and meta[1] == b"tree"]
    objects = read_objects(folder, [commit, root, *trees])
    head = objects[commit]
    if head is None or head[0] != "commit" or not head[1].startswith(f"tree {root}\n".encode()):
        raise IntegrityError(f"{folder}: commit {commit} does not name the root tree {root}", fix=REFETCH)
    for oid in [root, *trees]:
        read = objects[oid]
        if read is None or read[0] != "tree":
            raise IntegrityError(f"{folder}: the tree {oid} of {commit} is missing or not a tree", fix=REFETCH)


def export(folder: Path, commit: str, tag: str | None, url: str, dest: Path,
           absent_ok: Sequence[str] = ()) -> Exported:
    """Write the commit's tree into *dest* (an empty folder of the caller's). Every path is checked before one is
    written (a crafted tree object can hold `..`, a path twice, or a link `a` beside a folder `a/`, which git
    never writes); files are created without following links; links are made last and stay inside the tree."""
    folder = git_dir(folder)
    resolve(folder, commit, tag, url)
    verify_trees(folder, commit)
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
