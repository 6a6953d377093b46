"""Reading files that may be hostile (reports, packs, stamps, manifests from another job): every read is bounded.

A FIFO would block `open()` until a writer came, `/dev/zero` would never end, a 2 GB "report" would fill memory and
`[[[[…` a million deep would exhaust the parser's recursion: each is refused at once with the caller's error
(one line naming the path and the fix), never a hang or a traceback. JSON numbers must be finite (`1e999` is
infinity to Python's parser, and `int(inf)` raises): a report or observation is data crosslane wrote.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path
from typing import BinaryIO

from crosslane.errors import CrosslaneError

# A report of every row of every job is well under this; a pack's manifest lists one line per installed file.
JSON_LIMIT = 64 << 20


def open_regular(path: Path, error: type[CrosslaneError], fix: str, *, links: bool = True) -> BinaryIO:
    """*path* opened for reading, refused at once unless it is a regular file (O_NONBLOCK: a FIFO with no
    writer would block the open itself). *links* False: a link there is refused too, by the open itself
    (O_NOFOLLOW), so what was checked is what is read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not links and exc.errno == errno.ELOOP and path.is_symlink():
            raise error(f"{path}: a link, not a regular file", fix=fix) from None
        raise error(f"{path}: cannot read ({exc.strerror or exc})", fix=fix) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise error(f"{path}: {kind}, not a regular file", fix=fix)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, *, limit: int, error: type[CrosslaneError], fix: str, links: bool = True) -> bytes:
    with open_regular(path, error, fix, links=links) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise error(f"{path}: larger than {limit >> 20} MiB; not a file crosslane wrote", fix=fix)
    return data


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is not finite")
    return value


def fits_int64(value: int) -> bool:
    """Whether *value* is an integer JSON and TOML writers agree on (64 bits; Python's have no bound)."""
    return -(1 << 63) <= value < 1 << 63


def _int64(text: str) -> int:
    value = int(text)
    if not fits_int64(value):
        raise ValueError(f"integer of {len(text)} digits, beyond 64 bits")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number crosslane writes")


def parse_json(text: str | bytes, where: str, *, error: type[CrosslaneError], fix: str) -> object:
    try:
        return json.loads(text, parse_float=_finite, parse_int=_int64, parse_constant=_no_constant)
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to be a file crosslane wrote", fix=fix) from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise error(f"{where}: not valid JSON ({exc})", fix=fix) from None


def read_json(path: Path, *, error: type[CrosslaneError], fix: str, limit: int = JSON_LIMIT) -> object:
    return parse_json(read_bytes(path, limit=limit, error=error, fix=fix), str(path), error=error, fix=fix)
