"""The cross-wheel gate: safe unpack, RECORD hashes, platform tag, ELF arch and EXT_SUFFIX of every member.

The wheel is unpacked into a temporary folder only after every member passed the safety plan (no absolute
paths, no `..`, no links, bounded size and compression ratio); nothing is ever written outside it.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from crosslane.archs import Arch, info
from crosslane.errors import VerdictFailed
from crosslane.gates import check_elf_arch, check_ext_suffix, defect_row, elf, row
from crosslane.report import Row, Verdict

CHUNK = 1 << 20
# hashlib's fixed-length digests that PEP 376/427 tools write (shake_* need a length; md5/sha1 are too weak).
RECORD_ALGORITHMS = ("sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s")
SIGNATURES = ("RECORD.jws", "RECORD.p7s")
MANYLINUX_PREFIXES = ("linux_", "manylinux", "musllinux_")


@dataclass(frozen=True)
class Limits:
    max_total_bytes: int = 4 << 30
    max_members: int = 200_000
    # Real wheels reach ~100:1 (a 200 kB stub .so of zeros); deflate tops out near 1032:1.
    max_ratio: float = 250.0
    ratio_applies_above: int = 1 << 20
    # The whole archive too: 1,500 members of 1 MiB zeros are each under ratio_applies_above but together
    # expand 1.5 GiB from 1.7 MB. Real wheels expand their whole archive 2–10 times.
    max_total_ratio: float = 100.0
    total_ratio_applies_above: int = 64 << 20


class UnsafeWheel(Exception):
    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


# Run on the unpacked tree before it is deleted (e.g. the DT_NEEDED scan): (root, elf files) -> rows.
Extra = Callable[[Path, list[elf.ElfInfo]], list[Row]]


def plan(archive: zipfile.ZipFile, limits: Limits) -> list[zipfile.ZipInfo]:
    """The members to extract, or UnsafeWheel naming the first member that may not be extracted."""
    members = archive.infolist()
    if len(members) > limits.max_members:
        raise UnsafeWheel("bomb", f"{len(members)} members (limit {limits.max_members})")
    total = 0
    seen: set[str] = set()
    for member in members:
        name = member.filename
        if name in seen:
            raise UnsafeWheel("duplicate", f"member '{name}' appears twice (the second would hide the first)")
        seen.add(name)
        pure = PurePosixPath(name.replace("\\", "/"))
        if pure.is_absolute() or (len(name) > 1 and name[1] == ":"):
            raise UnsafeWheel("absolute-path", f"member '{name}' has an absolute path")
        if ".." in pure.parts:
            raise UnsafeWheel("zip-slip", f"member '{name}' escapes the unpack folder with '..'")
        if member.flag_bits & 0x1:
            raise UnsafeWheel("encrypted", f"member '{name}' is encrypted; a wheel's members are plain")
        mode = member.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise UnsafeWheel("symlink", f"member '{name}' is a symbolic link")
        # No type bits (zipfile.writestr, many tools) means a regular file.
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise UnsafeWheel("special-file", f"member '{name}' is not a regular file (mode {oct(mode)})")
        total += member.file_size
        if total > limits.max_total_bytes:
            raise UnsafeWheel("bomb", f"unpacks to more than {limits.max_total_bytes} bytes (at '{name}')")
        if (member.file_size > limits.ratio_applies_above
                and member.file_size > limits.max_ratio * max(member.compress_size, 1)):
            ratio = member.file_size / max(member.compress_size, 1)
            raise UnsafeWheel("bomb", f"member '{name}' expands {ratio:.0f}:1 (limit {limits.max_ratio:.0f}:1)")
    packed = max(sum(m.compress_size for m in members), 1)
    if total > limits.total_ratio_applies_above and total > limits.max_total_ratio * packed:
        raise UnsafeWheel("bomb", f"{len(members)} members expand {total / packed:.0f}:1 in all, to {total >> 20} MiB "
                                  f"(limit {limits.max_total_ratio:.0f}:1)")
    return members


def unpack(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], dest: Path) -> dict[str, str]:
    """Extract *members* under *dest*; return each file's sha256 in RECORD form (urlsafe base64, no padding)."""
    hashes: dict[str, str] = {}
    root = dest.resolve()
    for member in members:
        target = (root / member.filename).resolve()
        if not target.is_relative_to(root):
            raise UnsafeWheel("zip-slip", f"member '{member.filename}' resolves outside the unpack folder")
        if member.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        written = 0
        with archive.open(member) as source, target.open("wb") as sink:
            while chunk := source.read(CHUNK):
                written += len(chunk)
                if written > member.file_size:
                    raise UnsafeWheel("bomb", f"member '{member.filename}' is larger than its header says")
                digest.update(chunk)
                sink.write(chunk)
        hashes[member.filename] = record_hash(digest.digest())
    return hashes


def record_hash(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def check_record(archive: zipfile.ZipFile, hashes: dict[str, str], dest: Path) -> list[str]:
    """Every file listed in RECORD with a matching hash and size, and every listed file present."""
    records = [n for n in hashes if n.count("/") == 1 and n.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        return [f"expected one <name>.dist-info/RECORD, found {len(records)}"]
    record_name = records[0]
    text = archive.read(record_name).decode("utf-8", "replace")
    problems: list[str] = []
    listed: dict[str, tuple[str, str]] = {}
    try:
        for line_no, fields in enumerate(csv.reader(io.StringIO(text)), 1):
            if not fields:
                continue
            if len(fields) != 3:
                problems.append(f"RECORD line {line_no}: expected path,hash,size")
                continue
            listed[fields[0]] = (fields[1], fields[2])
    except csv.Error as exc:  # e.g. a field over the csv module's 128 KiB limit
        return [f"RECORD is not valid CSV ({exc})"]
    dist_info = record_name.rsplit("/", 1)[0]
    exempt = {record_name} | {f"{dist_info}/{sig}" for sig in SIGNATURES}
    for name, actual in sorted(hashes.items()):
        if name in exempt:
            continue
        if name not in listed:
            problems.append(f"{name}: not listed in RECORD")
            continue
        expected, size = listed[name]
        algorithm, _, value = expected.partition("=")
        if algorithm in ("md5", "sha1") or not value:
            problems.append(f"{name}: RECORD hash '{expected[:80]}' is missing or too weak (sha256 required)")
            continue
        if algorithm not in RECORD_ALGORITHMS:
            problems.append(f"{name}: RECORD hash algorithm '{algorithm[:40]}' is not one of "
                            f"{', '.join(RECORD_ALGORITHMS)}")
            continue
        found = actual if algorithm == "sha256" else _rehash(dest / name, algorithm)
        if found != value:
            problems.append(f"{name}: RECORD says {algorithm}={value}, file has {algorithm}={found}")
        elif size and size != str((dest / name).stat().st_size):
            problems.append(f"{name}: RECORD says {size} bytes, file has {(dest / name).stat().st_size}")
    problems += [f"{name}: listed in RECORD but not in the wheel" for name in sorted(set(listed) - set(hashes))]
    return problems


def _rehash(path: Path, algorithm: str) -> str:
    try:
        with path.open("rb") as handle:
            return record_hash(hashlib.file_digest(handle, algorithm).digest())
    except ValueError:
        return f"(unknown algorithm {algorithm})"


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
        if len(digits) < 2 or not digits.isdigit():
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


def verify_wheel(wheel: Path, arch: Arch, *, limits: Limits | None = None, extra: Extra | None = None) -> list[Row]:
    """All wheel gates for *wheel*; one row per check, the unpacked copy deleted afterwards."""
    limits = limits or Limits()
    platform_row, tags = check_platform(wheel, arch)
    rows = [platform_row]
    with tempfile.TemporaryDirectory(prefix="crosslane-wheel-") as temp:
        dest = Path(temp)
        try:
            with zipfile.ZipFile(wheel) as archive:
                members = plan(archive, limits)
                hashes = unpack(archive, members, dest)
                problems = check_record(archive, hashes, dest)
        except UnsafeWheel as exc:
            return [*rows, row(wheel.name, arch, "unpack", Verdict.FAIL, f"{wheel.name}: {exc}")]
        # RuntimeError: zipfile's word for an encrypted member it finds only while reading.
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError, RuntimeError) as exc:
            return [*rows, row(wheel.name, arch, "unpack", Verdict.FAIL, f"{wheel.name}: corrupt zip ({exc})")]
        except OSError as exc:
            return [*rows, row(wheel.name, arch, "unpack", Verdict.FAIL,
                               f"{wheel.name}: cannot unpack ({exc.strerror or exc})")]
        rows.append(row(wheel.name, arch, "unpack", Verdict.PASS, f"{len(hashes)} files, no unsafe members"))
        rows.append(row(wheel.name, arch, "record", Verdict.FAIL if problems else Verdict.PASS,
                        "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
                        if problems else f"{len(hashes)} sha256 hashes match"))
        member_rows, elfs = check_members(dest, arch, tags.python_version if tags else None)
        if tags and "any" in tags.platforms and elfs:
            rows.append(row(wheel.name, arch, "platform-tag", Verdict.FAIL,
                            f"{wheel.name}: tagged 'any' but ships {len(elfs)} ELF files"))
        rows += member_rows
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
