"""The folder qemu-user is given as -L: the sysroot, plus a /proc/cpuinfo describing the guest where needed.

qemu-user looks every absolute path up under -L first and falls back to the host's. qemu 7.2 does not
emulate /proc/cpuinfo for every guest, so an aarch64 program reads the x86 host's, and libraries that
parse it (pytorch-cpuinfo inside PyPI's onnxruntime >= 1.31) crash. For such arches (archs.py
guest_cpuinfo) the guest root is a folder of links to the sysroot's top-level entries plus a
proc/cpuinfo with one entry per host core; the shared sysroot itself is never modified.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from crosslane.archs import info
from crosslane.files import atomic
from crosslane.guest.sysroot import Sysroot


def cpuinfo_text(template: str, cpus: int) -> str:
    return "\n".join(template.format(n=n) for n in range(cpus))


def _text(sysroot: Sysroot) -> str | None:
    template = info(sysroot.arch).guest_cpuinfo
    return cpuinfo_text(template, os.cpu_count() or 1) if template else None


def path_for(build_root: Path, sysroot: Sysroot) -> Path:
    """Where the -L folder for *sysroot* is (computed, nothing written): the sysroot itself, or the overlay."""
    text = _text(sysroot)
    if text is None:
        return sysroot.path
    key = hashlib.sha256(f"{sysroot.path}\0{text}".encode()).hexdigest()[:12]
    return build_root / "guest-roots" / f"{sysroot.arch}-{key}"


def ensure(build_root: Path, sysroot: Sysroot) -> Path:
    """The -L folder for *sysroot*, made if it is the overlay and missing: a step that runs target programs
    (a build's configure, a smoke) calls this first; deciding what to run needs only path_for."""
    root = path_for(build_root, sysroot)
    text = _text(sysroot)
    if text is None or (root / "proc" / "cpuinfo").is_file():
        return root
    with atomic.publish_dir(root, lambda found: (found / "proc" / "cpuinfo").is_file()) as work:
        (work / "proc").mkdir()
        for entry in sorted(sysroot.path.iterdir()):
            if entry.name != "proc":
                (work / entry.name).symlink_to(entry)
        (work / "proc" / "cpuinfo").write_text(text)
    return root
