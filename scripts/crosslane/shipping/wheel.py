"""A built wheel given its papers and its final bytes, in one rewrite:

- the licence texts of everything inside it in `.dist-info/licenses/` (PEP 639), each named by a `License-File`
  field of METADATA (Metadata-Version 2.4): the sources compiled in (`sources/<name>/…`), the Debian copyright file
  of every package a bundled library came from (`debian/<package>/copyright`), the Rust crates (`crates/…`);
- its SBOM in `.dist-info/sboms/crosslane.cdx.json` (PEP 770), listing besides the parts every ELF file it ships
  with its sha256: a Debian library as that package's component, the project's own as a `crosslane:built-file`;
- members in a fixed order (the package, then `.dist-info` with RECORD last), times from SOURCE_DATE_EPOCH, modes
  0644 or 0755, RECORD written anew in that order: the same inputs give the same bytes.
"""

from __future__ import annotations

import base64
import csv
import datetime
import email.parser
import email.policy
import hashlib
import io
import os
import stat
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from crosslane.errors import StepFailed
from crosslane.guest.sysroot import Sysroot
from crosslane.shipping import licences, sbom
from crosslane.shipping.inventory import (
    Inventory,
    Library,
    crate_licences,
    debian_library,
    debian_licence,
    grafted_origin,
    packages_of,
    source_licences,
)

LICENSES = "licenses"
SBOMS = "sboms"
EARLIEST = datetime.datetime(1980, 1, 1, tzinfo=datetime.UTC)  # a zip member's time starts in 1980


@dataclass(frozen=True)
class Member:
    name: str
    data: bytes
    executable: bool


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def zip_time(epoch: int) -> tuple[int, int, int, int, int, int]:
    moment = max(datetime.datetime.fromtimestamp(epoch, datetime.UTC), EARLIEST)
    return (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)


def read_members(wheel: Path) -> list[Member]:
    with zipfile.ZipFile(wheel) as archive:
        return [Member(info.filename, archive.read(info), bool((info.external_attr >> 16) & 0o111))
                for info in archive.infolist() if not info.is_dir()]


def dist_info(members: Sequence[Member], wheel: Path) -> str:
    found = sorted({m.name.split("/", 1)[0] for m in members if m.name.count("/") == 1
                    and m.name.split("/", 1)[0].endswith(".dist-info") and m.name.endswith("/METADATA")})
    if len(found) != 1:
        raise StepFailed(f"{wheel.name}: expected one .dist-info with METADATA, found {len(found)}",
                         fix="check the project's wheel staging")
    return found[0]


def is_elf(data: bytes) -> bool:
    return data[:4] == b"\x7fELF"


def write_wheel(path: Path, members: Sequence[Member], info_dir: str, epoch: int) -> None:
    """*members* (RECORD made here) into *path*, in the fixed order, with fixed times and modes."""
    record_name = f"{info_dir}/RECORD"
    kept = [m for m in members if m.name != record_name]
    ordered = sorted((m for m in kept if not m.name.startswith(info_dir + "/")), key=lambda m: m.name) + \
        sorted((m for m in kept if m.name.startswith(info_dir + "/")), key=lambda m: m.name)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for member in ordered:
        writer.writerow([member.name, record_hash(member.data), str(len(member.data))])
    writer.writerow([record_name, "", ""])
    ordered.append(Member(record_name, out.getvalue().encode(), False))
    when = zip_time(epoch)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for member in ordered:
                info = zipfile.ZipInfo(member.name, when)
                info.external_attr = (stat.S_IFREG | (0o755 if member.executable else 0o644)) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3  # Unix, whatever machine wrote it
                archive.writestr(info, member.data, compresslevel=6)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def with_licence_files(metadata: str, names: Sequence[str]) -> str:
    """METADATA with a License-File field for each of *names* (kept once) and Metadata-Version at least 2.4."""
    message = email.parser.Parser(policy=email.policy.compat32).parsestr(metadata)
    version = message.get("Metadata-Version", "1.0")
    if tuple(int(p) for p in version.split(".") if p.isascii() and p.isdigit()) < (2, 4):
        del message["Metadata-Version"]
        message["Metadata-Version"] = "2.4"
    listed = set(message.get_all("License-File") or [])
    for name in names:
        if name not in listed:
            message["License-File"] = name
    return message.as_string()


def licence_texts(inventory: Inventory, sysroot: Sysroot | None) -> dict[str, bytes]:
    """Licences-folder-relative path -> text of every licence the artifact's parts state."""
    texts: dict[str, bytes] = {}
    for source in inventory.sources:
        texts |= {name: path.read_bytes() for name, path in source_licences(source).items()}
    for owner in packages_of(inventory.libraries).values():
        if sysroot is None:
            raise StepFailed(f"{owner.package}: a bundled library's package, but no sysroot to read its copyright "
                             "from", fix=f"invoke sysroot --arch {inventory.arch}")
        found = debian_copyright(sysroot.path, owner.copyright)
        if found is None:
            raise StepFailed(f"{owner.package}: no {owner.copyright} in the {inventory.arch} sysroot",
                             fix="the package must ship its copyright file; check the sysroot")
        texts[debian_licence(owner)] = found
    for crate in inventory.crates:
        texts |= {name: path.read_bytes() for name, path in crate_licences(crate).items()}
    return texts


def debian_copyright(root: Path, relative: str) -> bytes | None:
    """A package's copyright file inside a sysroot, links followed but never out of it."""
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        return None
    text = licences.read_text(path)
    return text.encode() if text is not None else None


def _metadata_text(wheel: Path, member: Member) -> str:
    try:
        return member.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StepFailed(f"{wheel}: {member.name} is not UTF-8 (byte {exc.start}); core metadata must be",
                         fix="fix the encoding of the project's metadata (pyproject.toml, setup.cfg)") from None


def finish(wheel: Path, inventory: Inventory, *, sysroot: Sysroot | None, search: Sequence[Path] = (),
           bundled: Mapping[str, Path] | None = None, epoch: int) -> Inventory:
    """Rewrite *wheel* in place with its papers (module docstring); the inventory its SBOM states.

    *search*: the folders auditwheel took grafted libraries from; *bundled*: a bundled library's file name -> the
    file it was copied from (both must be files of a sysroot package)."""
    members = read_members(wheel)
    info_dir = dist_info(members, wheel)
    libraries: list[Library] = []
    built: list[str] = []
    for member in members:
        if not is_elf(member.data):
            continue
        digest = hashlib.sha256(member.data).hexdigest()
        name = PurePosixPath(member.name)
        origin = None
        if name.parent.name.endswith(".libs"):
            origin = grafted_origin(member.name, search)
            if origin is None:
                raise StepFailed(f"{wheel.name}: {member.name} was grafted, but no library of {len(search)} search "
                                 "folders has the content its name states", fix="rebuild with --force")
        elif bundled and name.name in bundled and len(name.parts) == 2:
            origin = bundled[name.name]
        if origin is not None:
            if sysroot is None:
                raise StepFailed(f"{member.name}: a library from {origin}, but no sysroot", fix="invoke sysroot")
            libraries.append(debian_library(member.name, digest, origin, sysroot))
        else:
            built.append(f"{member.name} sha256={digest}")
    inventory = replace(inventory, libraries=tuple(libraries), built_files=tuple(built))
    texts = licence_texts(inventory, sysroot)
    expressions = {package: licences.copyright_expression(sysroot.path / owner.copyright)
                   for package, owner in packages_of(libraries).items()} if sysroot else {}
    document = sbom.build(inventory, epoch, expressions)
    kept = [m for m in members if not m.name.startswith(f"{info_dir}/{SBOMS}/{sbom.SBOM_NAME}")]
    existing = {m.name for m in kept}
    added = [Member(f"{info_dir}/{LICENSES}/{name}", data, False) for name, data in sorted(texts.items())
             if f"{info_dir}/{LICENSES}/{name}" not in existing]
    names = sorted({m.name.removeprefix(f"{info_dir}/{LICENSES}/") for m in [*kept, *added]
                    if m.name.startswith(f"{info_dir}/{LICENSES}/")})
    metadata_name = f"{info_dir}/METADATA"
    rewritten = [replace(m, data=with_licence_files(_metadata_text(wheel, m), names).encode("utf-8"))
                 if m.name == metadata_name else m for m in kept]
    write_wheel(wheel, [*rewritten, *added, Member(f"{info_dir}/{SBOMS}/{sbom.SBOM_NAME}", document.encode(), False)],
                info_dir, epoch)
    return inventory
