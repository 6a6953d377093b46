"""One writer per build tree: an advisory lock (flock) per arch, so two builds of one arch never interleave
CMake's compiler detection or one's clean-up deletes the other's install folder."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from crosslane.errors import MissingPrerequisite
from crosslane.log import Log

NO_WAIT_ENV = "CROSSLANE_NO_WAIT"


def no_wait() -> bool:
    return os.environ.get(NO_WAIT_ENV, "") not in ("", "0")


@contextlib.contextmanager
def hold(path: Path, what: str, log: Log, *, wait: bool | None = None) -> Iterator[None]:
    """Hold the lock file *path* for the block; when another process holds it, wait (saying so) or, with
    CROSSLANE_NO_WAIT=1, fail at once (exit 3). The kernel drops the lock when a holder dies."""
    wait = not no_wait() if wait is None else wait
    path.parent.mkdir(parents=True, exist_ok=True)
    # errors="replace": the holder's line is only shown; a damaged lock file must not hide the message
    with path.open("a+", encoding="utf-8", errors="replace") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = " ".join(handle.read(200).split())[:80] or "another crosslane process"
            if not wait:
                raise MissingPrerequisite(f"{what} is in use by {holder} (lock {path})",
                                          fix=f"wait for it to finish, or unset {NO_WAIT_ENV} to wait") from None
            log.info(f"    waiting: {what} is in use by {holder} (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
