"""A wheel's zip, opened as hostile input: the safety plan, the unpack into a private folder, the RECORD check.

Nothing is written before every member passed the plan (no absolute paths, no `..`, no links, bounded size and
compression ratio), and nothing outside the folder.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CHUNK = 1 << 20
LOCAL_HEADER = 30
# hashlib's fixed-length digests that PEP 376/427 tools write (shake_* need a length; md5/sha1 are too weak).
RECORD_ALGORITHMS = ("sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s")
SIGNATURES = ("RECORD.jws", "RECORD.p7s")


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
    _refuse_overlaps(archive, members)
    packed = max(sum(m.compress_size for m in members), 1)
    if total > limits.total_ratio_applies_above and total > limits.max_total_ratio * packed:
        raise UnsafeWheel("bomb", f"{len(members)} members expand {total / packed:.0f}:1 in all, to {total >> 20} MiB "
                                  f"(limit {limits.max_total_ratio:.0f}:1)")
    return members


def _refuse_overlaps(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> None:
    """Members whose data runs into the next member's (or the central directory): the directory's sizes are claims,
    and overlapping members inflate the same bytes again, so the ratio checks would see a fraction of the real
    ratio (8 members of 200 MiB of zeros from 3.7 MB). Python 3.11's zipfile does not check this; zip/pip never
    write it."""
    ordered = sorted(members, key=lambda m: m.header_offset)
    for member, following in zip(ordered, [*ordered[1:], None], strict=True):
        limit = following.header_offset if following is not None else archive.start_dir
        # 30: a local header's fixed part, the least it can be; the name and extra field only add to it
        if member.header_offset + LOCAL_HEADER + member.compress_size > limit:
            raise UnsafeWheel("overlap", f"member '{member.filename}' claims {member.compress_size} bytes of "
                                         f"data that run into the next member's; a zip tool never writes this")


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
        with archive.open(member) as source, target.open("wb") as sink:
            # zipfile stops at the header's size and checks the CRC-32 at the end of the member
            while chunk := source.read(CHUNK):
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
    first_line: dict[str, int] = {}
    try:
        for line_no, fields in enumerate(csv.reader(io.StringIO(text)), 1):
            if not fields:
                continue
            if len(fields) != 3:
                problems.append(f"RECORD line {line_no}: expected path,hash,size")
                continue
            # Two rows for one path: one of them is checked, the other says whatever it likes (installers differ on
            # which one they believe)
            if fields[0] in first_line:
                problems.append(f"{fields[0]}: listed twice in RECORD (lines {first_line[fields[0]]} and {line_no})")
                continue
            first_line[fields[0]] = line_no
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


@dataclass
class Unpacked:
    """A wheel unpacked into its own temporary folder (removed by `with unpacked.folder`), its members' sha256
    in RECORD form, and what is wrong with its RECORD (empty: every hash and size matches)."""
    folder: tempfile.TemporaryDirectory[str]
    hashes: dict[str, str]
    problems: list[str]


def unpack_checked(wheel: Path, limits: Limits) -> Unpacked:
    """plan(), unpack() and check_record() of *wheel*; the folder is removed again when any of them raises."""
    folder = tempfile.TemporaryDirectory(prefix="crosslane-wheel-")
    try:
        with zipfile.ZipFile(wheel) as archive:
            hashes = unpack(archive, plan(archive, limits), Path(folder.name))
            problems = check_record(archive, hashes, Path(folder.name))
    except BaseException:
        folder.cleanup()
        raise
    return Unpacked(folder, hashes, problems)
