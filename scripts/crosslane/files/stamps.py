"""Input-keyed stamps: a step whose inputs hash to its stamp's key is skipped."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from crosslane.errors import ConfigError
from crosslane.files import atomic, bounded

STAMP = ".crosslane-stamp.json"


def key(inputs: Mapping[str, object]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


def file_sha256(path: Path) -> str:
    """A file's sha256, read in chunks (a .deb or a wheel is never held in memory whole)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def tree_digest(root: Path, ignore: tuple[str, ...] = (".git",)) -> str:
    """Content hash of every file under *root* (paths and bytes; symlink targets as text)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ignore)
        # os.walk lists a link to a folder among the folders and does not follow it: hashed here as the link it is
        linked = [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        for name in sorted([*filenames, *linked]):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            digest.update(rel.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + os.readlink(path).encode())
            elif not path.is_file():  # a FIFO would block the read forever, a device never end
                raise ConfigError(f"{path}: not a regular file; a source tree holds files, folders and links",
                                  fix="remove it from the tree")
            else:
                digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def read(folder: Path) -> dict[str, object] | None:
    """The stamp's fields; None when there is none or it is not one (a FIFO, a huge or malformed file: stale)."""
    try:
        data = bounded.read_json(folder / STAMP, error=ConfigError, fix="")
    except ConfigError:
        return None
    return data if isinstance(data, dict) else None


def outputs_listing(root: Path) -> dict[str, list[int | str]]:
    """What a step installed: every path under *root* with its size and times (files) or target (links)."""
    listing: dict[str, list[int | str]] = {}

    # os.scandir, not pathlib: a no-op build lists every install folder, thousands of headers included.
    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_symlink():
                    listing[rel] = ["link", os.readlink(entry.path)]
                elif entry.is_dir():
                    walk(entry.path, rel + "/")
                else:
                    # The change time too: a file rewritten to the same size (a tampered binary) or with its
                    # modification time set back is a changed output; ctime cannot be set from user space.
                    found = entry.stat(follow_symlinks=False)
                    listing[rel] = [found.st_size, found.st_mtime_ns, found.st_ctime_ns]

    if root.is_dir():  # a missing folder lists as empty, as os.walk would have it
        walk(str(root), "")
    return dict(sorted(listing.items()))


def is_current(folder: Path, expected: str, *, outputs: Path | None = None) -> bool:
    """The stamp's key is *expected* and, when *outputs* is given, that folder still holds exactly what the
    step installed (a deleted or changed output rebuilds)."""
    data = read(folder)
    if data is None or data.get("key") != expected:
        return False
    if outputs is None:
        return True
    if outputs.is_symlink() or not outputs.is_dir():
        return False
    return bool(data.get("outputs") == outputs_listing(outputs))


def remove(path: Path) -> None:
    """Delete a folder crosslane makes afresh; a symlink in its place is removed, never followed."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def clear(folder: Path) -> None:
    """Called before a step runs, so a failure never leaves an old success stamp behind."""
    (folder / STAMP).unlink(missing_ok=True)


def write(folder: Path, stamp_key: str, inputs: Mapping[str, object], *, outputs: Path | None = None,
          facts: Mapping[str, object] | None = None) -> None:
    """*facts*: what the step observed (duration, cache hits) for the report; not part of the key."""
    folder.mkdir(parents=True, exist_ok=True)
    data: dict[str, object] = {"key": stamp_key, "inputs": inputs, **({"facts": dict(facts)} if facts else {})}
    if outputs is not None:
        data["outputs"] = outputs_listing(outputs)
    atomic.write_text(folder / STAMP, json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")
