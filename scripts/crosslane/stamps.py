"""Input-keyed stamps: a step whose inputs hash to its stamp's key is skipped."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from crosslane import atomic

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
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            digest.update(rel.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + os.readlink(path).encode())
            else:
                digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def read(folder: Path) -> dict[str, object] | None:
    try:
        data: dict[str, object] = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return data


def is_current(folder: Path, expected: str) -> bool:
    data = read(folder)
    return data is not None and data.get("key") == expected


def clear(folder: Path) -> None:
    """Called before a step runs, so a failure never leaves an old success stamp behind."""
    (folder / STAMP).unlink(missing_ok=True)


def write(folder: Path, stamp_key: str, inputs: Mapping[str, object]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic.write_text(folder / STAMP,
                      json.dumps({"key": stamp_key, "inputs": inputs}, indent=1, sort_keys=True, default=str) + "\n")
