"""tasks.py's own bytecode, written once: invoke loads the tasks file with bytecode writing off, so without a cached
.pyc it compiles the file on every command (2.6 ms of a ~0.19 s no-op build). A fresh .pyc is read by invoke's
loader as by any import; invoke only declines to write one."""

from __future__ import annotations

from importlib.util import MAGIC_NUMBER, cache_from_source
from pathlib import Path


def is_fresh(source: str, cached: str) -> bool:
    """What the import system checks before it reads a .pyc (PEP 552, timestamp-based): its magic number, and the
    source's mtime and size recorded in its header."""
    try:
        with Path(cached).open("rb") as pyc:
            header = pyc.read(16)
        stat = Path(source).stat()
    except OSError:
        return False
    return (len(header) == 16 and header[:4] == MAGIC_NUMBER and header[4:8] == b"\0\0\0\0"
            and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def keep_compiled(source: str) -> bool:
    """Write *source*'s .pyc where the import system looks for it unless a fresh one is there; True when written.
    A folder that cannot be written (a read-only checkout) costs the compile on each command, nothing else."""
    cached = cache_from_source(source)
    if is_fresh(source, cached):
        return False
    import py_compile  # only when writing: the fresh case is one stat and a 16-byte read

    try:
        py_compile.compile(source, cfile=cached, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    except (OSError, py_compile.PyCompileError):
        return False
    return True
