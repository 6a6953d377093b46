"""Paths a user names for crosslane to write (`index --output`, `pack --output`, `report --output`, `--json FILE`):
every such write goes through here, and replaces only what is crosslane's to replace.

- A folder: nothing there yet, an empty folder, or a folder crosslane made (MARK inside, written with it). It is
  replaced whole (atomic.replace_dir).
- A file: nothing there yet, or a regular file, replaced by a rename: never written through, so another hard link
  to it keeps its bytes. A regular file the user names is replaced even when crosslane did not write it, as
  pytest's `--junitxml` and nox's `--report` replace theirs: naming a file to write is asking for it.

Anything else is refused with exit 2 naming it, before any work and again just before the write, and is left as
it was (nothing moved aside, nothing deleted): a non-empty folder crosslane did not make, a link wherever it points,
a device, FIFO or socket, a file where a folder is wanted and a folder where a file is.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from crosslane.errors import UsageError
from crosslane.files import atomic

MARK = ".crosslane-output"

KINDS = {stat.S_IFLNK: "a link", stat.S_IFDIR: "a folder", stat.S_IFREG: "a regular file", stat.S_IFIFO: "a FIFO",
         stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}


def _kind(mode: int) -> str:
    return KINDS.get(stat.S_IFMT(mode), "a special file")


def _where(path: Path) -> Path:
    """*path* absolute, the links of the folders above it resolved, its own last part kept as named: that part is
    the one judged, never followed. `.`, `..` and `/` stand for the folder they resolve to."""
    return path.resolve() if path.name in ("", ".", "..") else path.parent.resolve() / path.name


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):  # NotADirectoryError: a file above it (_check_above names it)
        return None


def _check_above(option: str, given: Path, where: Path) -> None:
    """The nearest existing path above *where* is a folder (a file there would surface as a failed mkdir)."""
    for above in where.parents:
        found = _lstat(above)
        if found is not None:
            if not stat.S_ISDIR(found.st_mode):
                raise UsageError(f"{option} {given}: {above} is {_kind(found.st_mode)}, not a folder",
                                 fix=f"pass {option} a path under a folder")
            return


def _ours(folder: Path) -> bool:
    mark = _lstat(folder / MARK)
    return mark is not None and stat.S_ISREG(mark.st_mode)


def _empty(folder: Path) -> bool:
    with os.scandir(folder) as entries:
        return next(entries, None) is None


def claim_folder(option: str, path: Path) -> Path:
    """*path* (absolute) as an output folder crosslane may replace: nothing there, an empty folder or crosslane's
    own earlier output; anything else is a UsageError naming it."""
    where = _where(path)
    _check_above(option, path, where)
    found = _lstat(where)
    if found is None:
        return where
    fix = "name a new or empty folder, or one crosslane wrote before"
    if not stat.S_ISDIR(found.st_mode):
        raise UsageError(f"{option} {path}: {_kind(found.st_mode)}, not a folder; left as it is", fix=fix)
    if not _ours(where) and not _empty(where):
        raise UsageError(f"{option} {path}: a folder crosslane did not make, and not empty; left as it is",
                         fix=f"{fix} (no {MARK} in this one)")
    return where


def claim_file(option: str, path: Path) -> Path:
    """*path* (absolute) as a file crosslane may write: nothing there, or a regular file (replaced by a rename);
    anything else is a UsageError naming it."""
    where = _where(path)
    found = _lstat(where)
    if path.name in ("", ".", "..") or (found is not None and stat.S_ISDIR(found.st_mode)):
        raise UsageError(f"{option} {path}: names a folder, not the file to write", fix=f"e.g. {option} out/x.json")
    _check_above(option, path, where)
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise UsageError(f"{option} {path}: {_kind(found.st_mode)}, not a regular file; left as it is",
                         fix="name a new file or a regular file to replace")
    return where


def write_file(option: str, path: Path, text: str) -> Path:
    """*text* written to *path* (claimed first) through a sibling file renamed over it; the path written."""
    final = claim_file(option, path)
    final.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(final, text)
    return final


@contextlib.contextmanager
def output_folder(path: Path, option: str | None, writer: str) -> Iterator[Path]:
    """A staging folder, marked as crosslane's output, that replaces *path* whole when the block succeeds. *path* is
    claimed before and again just before the swap. *option* None: crosslane's own default place in its build tree,
    replaced without a claim (an index written there before it carried a mark has none)."""
    final = path if option is None else claim_folder(option, path)

    def claimed(_: Path) -> None:
        if option is not None:
            claim_folder(option, path)

    with atomic.replace_dir(final, claimed) as staging:
        (staging / MARK).write_text(f"written by crosslane ({writer}); a later run may replace this folder whole\n",
                                    encoding="utf-8")
        yield staging
