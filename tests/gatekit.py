"""Builders for gate tests: minimal ELF headers and wheels (honest or hostile), all in memory or tmp_path."""

from __future__ import annotations

import base64
import hashlib
import stat
import struct
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path

from crosslane.log import Log
from crosslane.process.runner import Runner


def elf_header(machine: int, *, elf_class: int = 64, little: bool = True, e_flags: int = 0, e_type: int = 3) -> bytes:
    """A valid ELF header with no sections or segments (what the gates read first)."""
    order = "<" if little else ">"
    ident = b"\x7fELF" + bytes([2 if elf_class == 64 else 1, 1 if little else 2, 1, 0]) + bytes(8)
    if elf_class == 64:
        rest = struct.pack(order + "HHIQQQIHHHHHH", e_type, machine, 1, 0, 0, 0, e_flags, 64, 0, 0, 0, 0, 0)
    else:
        rest = struct.pack(order + "HHIIIIIHHHHHH", e_type, machine, 1, 0, 0, 0, e_flags, 52, 0, 0, 0, 0, 0)
    return ident + rest


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(folder: Path, filename: str, files: dict[str, bytes], *, dist_info: str = "demo-1.0.dist-info",
               tamper: dict[str, bytes] | None = None, raw: Sequence[tuple[zipfile.ZipInfo, bytes]] = ()) -> Path:
    """A wheel with a correct RECORD for *files*; *tamper* replaces contents after RECORD was computed;
    *raw* members are added as given (hostile entries), unlisted."""
    files = {**files, f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"}
    lines = [record_line(name, data) for name, data in files.items()] + [f"{dist_info}/RECORD,,"]
    path = folder / filename
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, (tamper or {}).get(name, data))
        archive.writestr(f"{dist_info}/RECORD", "\n".join(lines) + "\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # zipfile warns about the duplicate a test wants
            for info, data in raw:
                archive.writestr(info, data)
    return path


def symlink_member(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def plain_member(name: str, data: bytes = b"x") -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info, data


# Real shared objects for the manylinux gate and the policy parity tests (gcc, or a cross gcc).
THREADS_C = ("#include <pthread.h>\nstatic void *f(void *a) { return a; }\n"
             "int start(void) { pthread_t t; return pthread_create(&t, 0, f, 0); }\n")
PLAIN_C = "int plain(int x) { return x + 1; }\n"
USES_DEP_C = "int dep(void);\nint uses(void) { return dep(); }\n"


def compiled(tmp_path: Path, name: str, source: str, *flags: str, cc: str = "gcc") -> bytes:
    (tmp_path / f"{name}.c").write_text(source)
    out = tmp_path / f"{name}.so"
    Runner(Log()).run([cc, "-shared", "-fPIC", "-O1", "-o", out, tmp_path / f"{name}.c", *flags], quiet=True)
    return out.read_bytes()
