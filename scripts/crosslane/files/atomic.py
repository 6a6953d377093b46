"""Writes that are all or nothing: a reader sees the old file or folder or the new one, never half of either."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or a number no process can have
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def sweep_stale(final: Path) -> list[Path]:
    """Remove the `.<name>.<pid>.*` leftovers beside *final* of processes that died (SIGKILL, power loss):
    a killed sysroot build would otherwise keep ~150 MB forever. Live processes' folders are left alone."""
    removed = []
    prefix = f".{final.name}."
    for entry in final.parent.glob(f"{glob.escape(prefix)}*"):
        pid = entry.name[len(prefix):].split(".", 1)[0]
        # pid 0 would signal our own process group (always "alive"): no process of ours has that number
        if pid.isascii() and pid.isdigit() and int(pid) not in (0, os.getpid()) and not _alive(int(pid)):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def write_text(path: Path, text: str) -> None:
    """Write *text* to *path* through a sibling temporary file renamed over it (same file system)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _fresh_staging(final: Path) -> Path:
    """An empty `.<name>.<pid>.partial` beside *final*, dead processes' leftovers swept first."""
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(final)
    staging = final.with_name(f".{final.name}.{os.getpid()}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    return staging


@contextlib.contextmanager
def replace_dir(final: Path, check: Callable[[Path], object] | None = None) -> Iterator[Path]:
    """Yield an empty staging folder beside *final*; on success it replaces *final*, on error it is removed.

    The old *final* (if any) is moved aside before the rename and deleted after it, so a crash between the
    two leaves either the old or the new folder under the final name plus a stray `.old` folder, never a
    half-written one. *check* is called on *final* just before it is moved aside: an error it raises leaves
    *final* as it was.
    """
    staging = _fresh_staging(final)
    try:
        yield staging
        if check is not None:
            check(final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = final.with_name(f".{final.name}.{os.getpid()}.old")
    if final.exists() or final.is_symlink():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def publish_dir(final: Path, whole: Callable[[Path], bool]) -> Iterator[Path]:
    """Yield an empty staging folder beside *final*; on success it is renamed to *final*, which must not exist.

    For caches several processes may fill at once: when another one published *final* first, its copy is
    kept if *whole* says it is complete. A folder there that is not whole is no publish's (a publish renames a
    complete folder): it is damaged, and replaced. The staging folder never survives.
    """
    staging = _fresh_staging(final)
    try:
        yield staging
        try:
            staging.rename(final)
        except OSError:
            if whole(final):
                return
            if not final.is_dir() or final.is_symlink():
                raise
            damaged = final.with_name(f".{final.name}.{os.getpid()}.damaged")
            final.rename(damaged)
            staging.rename(final)
            shutil.rmtree(damaged, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
