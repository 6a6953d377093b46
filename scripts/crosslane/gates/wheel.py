"""The cross-wheel gate: safe unpack, RECORD hashes, platform tag, ELF arch and EXT_SUFFIX of every member.

The unpack and the RECORD check are wheelzip's (a temporary folder, written only after every member passed
its safety plan); this module judges what it unpacked.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from crosslane.archs import Arch, info
from crosslane.errors import VerdictFailed
from crosslane.files import wheelzip
from crosslane.gates import check_elf_arch, check_ext_suffix, defect_row, elf, papers, row
from crosslane.report import Row, Verdict

MANYLINUX_PREFIXES = ("linux_", "manylinux", "musllinux_")

# Run on the unpacked tree before it is deleted (e.g. the DT_NEEDED scan): (root, elf files) -> rows.
Extra = Callable[[Path, list[elf.ElfInfo]], list[Row]]


@dataclass(frozen=True)
class WheelTags:
    platforms: tuple[str, ...]
    python_version: str | None


def wheel_tags(name: str) -> WheelTags:
    """Platforms and the CPython version ("cp313" → "3.13"; None for py3/abi3) from a wheel file name."""
    _, _, _, tags = parse_wheel_filename(name)
    platforms = tuple(sorted({t.platform for t in tags}))
    versions = {t.interpreter for t in tags if t.interpreter.startswith("cp") and t.abi != "abi3"}
    version = None
    if len(versions) == 1:
        digits = versions.pop()[2:]
        if len(digits) < 2 or not (digits.isascii() and digits.isdigit()):
            raise InvalidWheelFilename(f"python tag 'cp{digits}' names no CPython version (cp313, cp314, …)")
        version = f"{digits[0]}.{digits[1:]}"
    return WheelTags(platforms, version)


def platform_machine(arch: Arch) -> str:
    """The machine part of the arch's wheel platform: linux_aarch64 → aarch64."""
    return info(arch).wheel_platform.removeprefix("linux_")


def platform_matches(platform: str, arch: Arch) -> bool:
    return platform.startswith(MANYLINUX_PREFIXES) and platform.endswith(f"_{platform_machine(arch)}")


def check_platform(wheel: Path, arch: Arch) -> tuple[Row, WheelTags | None]:
    try:
        tags = wheel_tags(wheel.name)
    except InvalidWheelFilename as exc:
        return row(wheel.name, arch, "platform-tag", Verdict.FAIL, f"{wheel.name}: invalid wheel name ({exc})"), None
    wrong = [p for p in tags.platforms if p != "any" and not platform_matches(p, arch)]
    if wrong:
        return row(wheel.name, arch, "platform-tag", Verdict.FAIL,
                   f"{wheel.name}: platform tag {', '.join(wrong)}, expected linux/manylinux/musllinux_*_"
                   f"{platform_machine(arch)}"), tags
    return row(wheel.name, arch, "platform-tag", Verdict.PASS, ", ".join(tags.platforms)), tags


def check_members(root: Path, arch: Arch, python_version: str | None) -> tuple[list[Row], list[elf.ElfInfo]]:
    """ELF arch and EXT_SUFFIX rows for every ELF (by magic) or .so-named file under *root*."""
    rows: list[Row] = []
    found: list[elf.ElfInfo] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        subject = path.relative_to(root).as_posix()
        if not (elf.has_elf_magic(path) or elf.looks_like_shared_object(path)):
            continue
        result = elf.read(path)
        if isinstance(result, elf.ElfDefect):
            rows.append(defect_row(result, subject, arch))
            continue
        found.append(result)
        rows.append(check_elf_arch(result, subject, arch))
        suffix = check_ext_suffix(result, subject, arch, python_version)
        if suffix is not None:
            rows.append(suffix)
    return rows, found


def verify_wheel(wheel: Path, arch: Arch, *, limits: wheelzip.Limits | None = None,
                 extra: Extra | None = None, require_papers: bool = False) -> list[Row]:
    """All wheel gates for *wheel*; one row per check, the unpacked copy deleted afterwards."""
    limits = limits or wheelzip.Limits()
    platform_row, tags = check_platform(wheel, arch)
    rows = [platform_row]
    try:
        unpacked = wheelzip.unpack_checked(wheel, limits)
    except wheelzip.UnsafeWheel as exc:
        return [*rows, row(wheel.name, arch, "unpack", Verdict.FAIL, f"{wheel.name}: {exc}")]
    # RuntimeError: zipfile's word for an encrypted member it finds only while reading.
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError, RuntimeError) as exc:
        return [*rows, row(wheel.name, arch, "unpack", Verdict.FAIL, f"{wheel.name}: corrupt zip ({exc})")]
    except OSError as exc:
        return [*rows, row(wheel.name, arch, "unpack", Verdict.FAIL,
                           f"{wheel.name}: cannot unpack ({exc.strerror or exc})")]
    hashes, problems = unpacked.hashes, unpacked.problems
    with unpacked.folder as temp:
        dest = Path(temp)
        rows.append(row(wheel.name, arch, "unpack", Verdict.PASS, f"{len(hashes)} files, no unsafe members"))
        rows.append(row(wheel.name, arch, "record", Verdict.FAIL if problems else Verdict.PASS,
                        "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
                        if problems else f"{len(hashes)} sha256 hashes match"))
        member_rows, elfs = check_members(dest, arch, tags.python_version if tags else None)
        if tags and "any" in tags.platforms and elfs:
            rows.append(row(wheel.name, arch, "platform-tag", Verdict.FAIL,
                            f"{wheel.name}: tagged 'any' but ships {len(elfs)} ELF files"))
        rows += member_rows
        # Every member with ELF magic, a corrupt one too: the SBOM must state each file it ships.
        magic = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")
                       if p.is_file() and not p.is_symlink() and elf.has_elf_magic(p))
        rows += papers.check(dest, wheel.name, arch, magic, required=require_papers)
        if extra is not None:
            rows += extra(dest, elfs)
    return rows


def require_wheel(output_dir: Path) -> list[Path]:
    """The wheels a build step wrote; a step that "succeeded" without one fails here, with no fallback."""
    wheels = sorted(output_dir.glob("*.whl")) if output_dir.is_dir() else []
    if not wheels:
        raise VerdictFailed(f"{output_dir}: the build step succeeded but produced no wheel",
                            fix="read the step's log; a host build is never packaged under a target tag")
    return wheels
