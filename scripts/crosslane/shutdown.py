"""A command's exit without the interpreter's last garbage collections over everything it loaded.

At exit CPython collects every object the process still holds (invoke's, crosslane's, their modules'): ~25 ms of
a ~0.2 s no-op build, for memory the kernel takes back anyway. gc.freeze() from an atexit handler moves those
objects to the permanent generation, which the shutdown collections skip (Spack does the same: spack/spack#53020).
atexit handlers, weakref.finalize callbacks and the flushing of stdout and stderr still run; what is skipped are
the finalizers of objects in reference cycles still alive at exit, which Python does not promise to run (the note
under object.__del__). crosslane closes what it writes with `with`, so no buffered file waits on one.
"""

from __future__ import annotations

import atexit
import gc


def skip_final_collection() -> None:
    """Freeze every object at exit."""
    atexit.register(gc.freeze)
