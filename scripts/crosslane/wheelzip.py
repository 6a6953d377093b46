"""A wheel's zip, opened as hostile input: the safety plan, the unpack into a private folder, the RECORD check.

Nothing is written before every member passed the plan (no absolute paths, no `..`, no links, bounded size and
compression ratio), and nothing outside the folder.

start() begins the unpack of the wheels a command names in a forked child, before the modules that judge them
are imported, so on two cores the decompression runs beside those imports (a thread would share the GIL with
them: measured, no gain); take() returns the child's result, or unpacks in process when there is none, the file
changed since, or the child met anything but a known defect of the zip (then the real error is raised here).

A deflated member is inflated by ISA-L (the `isal` package) where it is installed: twice zlib's speed on a 35 MB
library, and its CRC-32 six times (measured on onnxruntime-genai's aarch64 .so). zipfile still reads and checks
the member's local header; its defects are zipfile's own errors, raised as zipfile would raise them.
"""

from __future__ import annotations

import atexit
import base64
import csv
import functools
import hashlib
import importlib
import io
import json
import os
import signal
import stat
import struct
import tempfile
import zipfile
import zlib
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import BinaryIO

from crosslane.records import Record

CHUNK = 1 << 20
PIPELINED_CHUNKS = 4  # inflated chunks waiting for the writer at most (memory: 4 MiB)
# hashlib's fixed-length digests that PEP 376/427 tools write (shake_* need a length; md5/sha1 are too weak).
RECORD_ALGORITHMS = ("sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s")
SIGNATURES = ("RECORD.jws", "RECORD.p7s")


@dataclass(frozen=True, eq=False, repr=False)
class Limits(Record):
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
    packed = max(sum(m.compress_size for m in members), 1)
    if total > limits.total_ratio_applies_above and total > limits.max_total_ratio * packed:
        raise UnsafeWheel("bomb", f"{len(members)} members expand {total / packed:.0f}:1 in all, to {total >> 20} MiB "
                                  f"(limit {limits.max_total_ratio:.0f}:1)")
    return members


def unpack(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], dest: Path) -> dict[str, str]:
    """Extract *members* under *dest*; return each file's sha256 in RECORD form (urlsafe base64, no padding)."""
    hashes: dict[str, str] = {}
    root = dest.resolve()
    # One writer thread hashes and writes each chunk while the next one inflates: zlib, sha256 and write() all
    # release the GIL, so a large member costs its inflate time, not inflate + hash + write.
    with ThreadPoolExecutor(max_workers=1) as writer:
        for member in members:
            target = (root / member.filename).resolve()
            if not target.is_relative_to(root):
                raise UnsafeWheel("zip-slip", f"member '{member.filename}' resolves outside the unpack folder")
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            pending: deque[Future[None]] = deque()
            with target.open("wb") as sink:
                try:
                    written = 0
                    for chunk in member_chunks(archive, member):
                        written += len(chunk)
                        if written > member.file_size:
                            raise UnsafeWheel("bomb", f"member '{member.filename}' is larger than its header says")
                        pending.append(writer.submit(_hash_and_write, digest, sink, chunk))
                        if len(pending) > PIPELINED_CHUNKS:
                            pending.popleft().result()
                finally:
                    futures.wait(pending)  # every write has ended before the file closes
                for done in pending:
                    done.result()
            hashes[member.filename] = record_hash(digest.digest())
    return hashes


LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # PKWARE APPNOTE 4.3.7, as zipfile reads it
DEFLATED_RAW = -15  # a raw deflate stream, as a zip member holds it (no zlib header)


@functools.cache
def fast_inflater() -> ModuleType | None:
    """ISA-L's zlib-compatible module; None where it is not installed (a host without its wheel: zipfile's zlib).
    Imported on first use, in the child that unpacks: not on the way to the fork."""
    try:
        return importlib.import_module("isal.isal_zlib")
    except ImportError:
        return None


def member_chunks(archive: zipfile.ZipFile, member: zipfile.ZipInfo, inflater: ModuleType | None = None
                  ) -> Iterator[bytes]:
    """The member's bytes, CHUNK at most at a time. Deflated ones are inflated by *inflater* (default: ISA-L where
    installed) from the raw stream, after zipfile has read and checked the member's local header; anything else,
    and everything when neither is at hand, is read through zipfile itself."""
    inflater = inflater or fast_inflater()
    with archive.open(member) as source:  # zipfile's checks of the local header: magic, name, flags
        if inflater is None or member.compress_type != zipfile.ZIP_DEFLATED or archive.filename is None:
            while chunk := source.read(CHUNK):
                yield chunk
            return
    with open(archive.filename, "rb") as raw:
        raw.seek(member.header_offset)
        header = LOCAL_HEADER.unpack(raw.read(LOCAL_HEADER.size))
        raw.seek(header[-2] + header[-1], os.SEEK_CUR)  # the name and the extra field
        yield from _inflated(raw, member, inflater)


def _inflated(raw: BinaryIO, member: zipfile.ZipInfo, inflater: ModuleType) -> Iterator[bytes]:
    """What zipfile's ZipExtFile yields for a deflated member, with another inflater: at most the header's size
    (what is past it is cut off, then the CRC-32 judges), EOFError where the file ends inside the member, and a
    CRC-32 of other bytes (a stream cut or corrupt within the member) a BadZipFile."""
    stream = inflater.decompressobj(DEFLATED_RAW)
    packed, left, crc, pending = member.compress_size, member.file_size, 0, b""
    try:
        while left > 0 and not stream.eof:
            if not pending:
                if packed <= 0:
                    break
                pending = raw.read(min(CHUNK, packed))
                if not pending:
                    raise EOFError
                packed -= len(pending)
            chunk = stream.decompress(pending, CHUNK)[:left]
            pending = stream.unconsumed_tail
            left -= len(chunk)
            crc = inflater.crc32(chunk, crc)
            yield chunk
    except inflater.error as exc:
        raise zlib.error(f"Error -3 while decompressing data: {exc}") from None
    if crc != member.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {member.filename!r}")


def _hash_and_write(digest: hashlib._Hash, sink: BinaryIO, chunk: bytes) -> None:
    digest.update(chunk)
    sink.write(chunk)


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


@dataclass
class Unpacked:
    """A wheel unpacked into its own temporary folder (removed by `with unpacked.folder`), its members' sha256
    in RECORD form, and what is wrong with its RECORD (empty: every hash and size matches)."""
    folder: tempfile.TemporaryDirectory[str]
    hashes: dict[str, str]
    problems: list[str]


def _unpack_into(wheel: Path, limits: Limits, folder: Path) -> tuple[dict[str, str], list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        hashes = unpack(archive, plan(archive, limits), folder)
        return hashes, check_record(archive, hashes, folder)


def unpack_checked(wheel: Path, limits: Limits) -> Unpacked:
    """plan(), unpack() and check_record() of *wheel*; the folder is removed again when any of them raises."""
    folder = tempfile.TemporaryDirectory(prefix="crosslane-wheel-")
    try:
        hashes, problems = _unpack_into(wheel, limits, Path(folder.name))
    except BaseException:
        folder.cleanup()
        raise
    return Unpacked(folder, hashes, problems)


# The zip's own defects, as the child reports them (by qualified name: struct.error is not zlib.error), raised
# again in the parent as what they were.
_DEFECTS: dict[str, type[Exception]] = {
    _kind.__module__ + "." + _kind.__qualname__: _kind
    for _kind in (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError, RuntimeError)
}


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns) if stat.S_ISREG(found.st_mode) else None


@dataclass
class _Early:
    identity: tuple[int, int, int, int]
    folder: tempfile.TemporaryDirectory[str]
    pid: int
    pipe: int

    def collect(self) -> Unpacked | None:
        """The child's result; None (its folder removed) when the unpack is to be done again in process."""
        with os.fdopen(self.pipe, "rb") as pipe:
            data = pipe.read()
        os.waitpid(self.pid, 0)
        try:
            message = json.loads(data)
            if "error" not in message:
                return Unpacked(self.folder, dict(message["hashes"]), list(message["problems"]))
            kind, args = message["error"]
        except (ValueError, KeyError, TypeError):
            kind, args = "", []
        self.folder.cleanup()
        if kind == "UnsafeWheel":
            raise UnsafeWheel(*args)
        if kind == "OSError":
            raise OSError(*args)
        if kind in _DEFECTS:
            raise _DEFECTS[kind](*args)
        return None

    def discard(self) -> None:
        os.close(self.pipe)
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        self.folder.cleanup()


def _child(wheel: Path, folder: Path, pipe: int) -> None:
    """In the forked child: unpack, write the result as JSON, and leave without the parent's exit handlers."""
    try:
        hashes, problems = _unpack_into(wheel, Limits(), folder)
        message: dict[str, object] = {"hashes": hashes, "problems": problems}
    except UnsafeWheel as exc:
        message = {"error": ["UnsafeWheel", [exc.kind, exc.detail]]}
    except OSError as exc:
        message = {"error": ["OSError", [exc.errno, exc.strerror, exc.filename]]}
    except BaseException as exc:  # a name _DEFECTS lacks makes the parent unpack again and meet it itself
        message = {"error": [f"{type(exc).__module__}.{type(exc).__qualname__}", [str(exc)]]}
    try:
        with os.fdopen(pipe, "wb") as out:  # write() of a file object: all of it, however the pipe takes it
            out.write(json.dumps(message).encode())
    finally:
        os._exit(0)


_EARLY: dict[Path, _Early] = {}


def start(paths: Sequence[str | Path]) -> None:
    """Begin unpacking the first regular *.whl file among *paths* (default limits) in a child process: the one
    the imports would keep waiting (one child, so many wheels never sit unpacked in the temporary folder at once)."""
    for name in paths:
        path = Path(name).absolute()
        identity = _identity(path) if path.suffix == ".whl" else None
        if identity is None or _EARLY or not hasattr(os, "fork"):
            continue
        folder = tempfile.TemporaryDirectory(prefix="crosslane-wheel-")
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child(path, Path(folder.name), write)
        os.close(write)
        _EARLY[path] = _Early(identity, folder, pid, read)


@atexit.register
def _discard_all() -> None:
    """A command that stops before take(): no child or folder outlives it."""
    while _EARLY:
        _EARLY.popitem()[1].discard()


def take(wheel: Path, limits: Limits) -> Unpacked:
    """The unpack start() began for *wheel*, when it used these limits and the file is still the one it read;
    otherwise (and after discarding a stale one) the unpack done now."""
    early = _EARLY.pop(wheel.absolute(), None)
    if early is not None:
        if limits == Limits() and _identity(wheel.absolute()) == early.identity:
            found = early.collect()
            if found is not None:
                return found
        else:
            early.discard()
    return unpack_checked(wheel, limits)
