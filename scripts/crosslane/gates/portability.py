"""Portability gates: where a built library looks for its dependencies, and the oldest glibc it runs on.

runpath: every DT_RUNPATH/DT_RPATH entry is $ORIGIN-relative or a target system folder; anything else is a
path of the build machine (ORT_HOME/lib, a sysroot, a build tree) leaking into the artifact: FAIL.
glibc-floor: the highest GLIBC_ symbol version the ELF files need (auditwheel's manylinux question), with
the highest GLIBCXX_ for the record, against the target sysroot's glibc: above it is a FAIL, since the
artifact would not load on the system it was built for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.gates import elf, row
from crosslane.report import Row, Verdict

SYSTEM_DIRS = ("/lib", "/usr/lib", "/usr/local/lib", "/lib64", "/usr/lib64")
VERSION_RE = re.compile(r"^(GLIBC|GLIBCXX)_(\d+(?:\.\d+)*)$")
MANIFEST = "crosslane-manifest.json"
ALL = "(all ELF files)"  # the subject of the one glibc-floor row


def runpath_row(found: elf.ElfInfo, subject: str, arch: Arch) -> Row | None:
    entries = [*found.runpath, *found.rpath]
    if not entries:
        return None
    allowed = (*SYSTEM_DIRS, *(f"{d}/{info(arch).multiarch}" for d in ("/lib", "/usr/lib")))
    bad = [e for e in entries if not (e.startswith(("$ORIGIN", "${ORIGIN}")) or e.rstrip("/") in allowed)]
    if bad:
        return row(subject, arch, "runpath", Verdict.FAIL,
                   f"RUNPATH/RPATH names build-machine paths: {', '.join(bad)}; link with $ORIGIN-relative paths "
                   "(CMAKE_SKIP_BUILD_RPATH, INSTALL_RPATH)")
    return row(subject, arch, "runpath", Verdict.PASS, f"{':'.join(entries)}")


def highest(needs: Sequence[str], family: str) -> tuple[int, ...] | None:
    versions = [tuple(int(x) for x in m.group(2).split(".")) for n in needs
                if (m := VERSION_RE.match(n)) and m.group(1) == family]
    return max(versions) if versions else None


def target_glibc(sysroot_path: Path | None) -> tuple[int, ...] | None:
    """The sysroot's libc6 version (2.41 …) from its manifest; None without a sysroot."""
    if sysroot_path is None:
        return None
    try:
        packages = json.loads((sysroot_path / MANIFEST).read_text())["packages"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    version = next((p.get("version", "") for p in packages if isinstance(p, dict) and p.get("package") == "libc6"), "")
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def dotted(version: tuple[int, ...] | None) -> str:
    return ".".join(str(x) for x in version) if version else "none"


def glibc_floor_row(found: Sequence[elf.ElfInfo], subject: str, arch: Arch, glibc: tuple[int, ...] | None) -> Row:
    needs = [n for f in found for n in f.version_needs]
    floor, cxx = highest(needs, "GLIBC"), highest(needs, "GLIBCXX")
    text = f"needs GLIBC_{dotted(floor)}, GLIBCXX_{dotted(cxx)}; target glibc {dotted(glibc)}"
    if floor is not None and glibc is not None and floor > glibc:
        return row(subject, arch, "glibc-floor", Verdict.FAIL, f"{text}: it would not load on the target")
    if glibc is None:
        return row(subject, arch, "glibc-floor", Verdict.SKIP, f"{text} (no sysroot manifest to compare with)")
    return row(subject, arch, "glibc-floor", Verdict.PASS, text)


def rows(found: Sequence[tuple[elf.ElfInfo, str]], subject: str, arch: Arch, sysroot_path: Path | None) -> list[Row]:
    """runpath per file that has one, and one glibc-floor row for everything in *subject*."""
    result = [r for f, name in found if (r := runpath_row(f, name, arch)) is not None]
    if found:
        result.append(glibc_floor_row([f for f, _ in found], subject, arch, target_glibc(sysroot_path)))
    return result
